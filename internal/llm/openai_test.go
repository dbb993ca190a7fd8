package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

const openaiKeyEnv = "ORCH_TEST_OPENAI_KEY"

// planAnswer is the structured answer the tests ask for.
type planAnswer struct {
	Title string       `json:"title"`
	Files []fileAnswer `json:"files"`
	Risk  *string      `json:"risk"`
}

type fileAnswer struct {
	Path   string `json:"path"`
	Intent string `json:"intent" enum:"create,update,delete"`
}

func validatePlan(data []byte) (planAnswer, error) {
	var p planAnswer
	if err := json.Unmarshal(data, &p); err != nil {
		return p, err
	}
	if p.Title == "" {
		return p, errors.New(`"title" is missing`)
	}
	if len(p.Files) == 0 {
		return p, errors.New(`"files" is empty`)
	}
	return p, nil
}

func newTestOpenAI(t *testing.T, api *fakeAPI, sleeps *sleepRecorder, mutate ...func(*Config)) Provider {
	t.Helper()
	return newTestProvider(t, Config{Type: TypeOpenAI, BaseURL: api.srv.URL + "/v1", Model: "gpt-test", APIKeyEnv: openaiKeyEnv}, sleeps, mutate...)
}

// newTestProvider builds the provider cfg describes, its key (testKey) in
// cfg.APIKeyEnv, with testOptions; mutate changes cfg first.
func newTestProvider(t *testing.T, cfg Config, sleeps *sleepRecorder, mutate ...func(*Config)) Provider {
	t.Helper()
	for _, m := range mutate {
		m(&cfg)
	}
	p, err := New(cfg, env(cfg.APIKeyEnv, testKey), testOptions(sleeps)...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// planRequest is basicRequest asking for a planAnswer.
func planRequest(t *testing.T) Request {
	t.Helper()
	schema, err := SchemaFor(planAnswer{})
	if err != nil {
		t.Fatal(err)
	}
	req := basicRequest()
	req.Schema, req.SchemaName = schema, "plan"
	return req
}

func basicRequest() Request {
	temp := 0.2
	return Request{
		Role: "planner",
		Messages: []Message{
			{Role: RoleSystem, Content: "You plan code changes."},
			{Role: RoleUser, Content: "Add retry to the fetcher."},
		},
		MaxTokens:   512,
		Temperature: &temp,
	}
}

func TestOpenAIText(t *testing.T) {
	api := newFakeAPI(t, jsonAnswer(t, 200, "openai/chat_text.json"))
	p := newTestOpenAI(t, api, &sleepRecorder{})

	resp, err := p.Complete(context.Background(), basicRequest())
	if err != nil {
		t.Fatal(err)
	}
	want := Response{
		Text:       "The change touches two files: internal/retry/retry.go and its test.",
		Usage:      Usage{InputTokens: 57, OutputTokens: 17},
		Model:      "gpt-5.5-2026-04-23",
		Provider:   "openai",
		StopReason: "stop",
	}
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("response\n got %+v\nwant %+v", resp, want)
	}
	reqs := api.received()
	if len(reqs) != 1 {
		t.Fatalf("got %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Method != http.MethodPost || r.Path != "/v1/chat/completions" {
		t.Errorf("request %s %s, want POST /v1/chat/completions", r.Method, r.Path)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("Authorization header %q", got)
	}
	jsonEqual(t, r.Body, `{
		"model": "gpt-test",
		"messages": [
			{"role": "system", "content": "You plan code changes."},
			{"role": "user", "content": "Add retry to the fetcher."}
		],
		"max_tokens": 512,
		"temperature": 0.2
	}`)
}

func TestOpenAIRequestModelOverrides(t *testing.T) {
	api := newFakeAPI(t, jsonAnswer(t, 200, "openai/chat_text.json"))
	p := newTestOpenAI(t, api, &sleepRecorder{})
	req := basicRequest()
	req.Model = "gpt-other"
	if _, err := p.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if got := api.received()[0].Body["model"]; got != "gpt-other" {
		t.Errorf("model sent %v, want gpt-other", got)
	}
}

// rewriteTransport sends every request to the test server, keeping its path.
type rewriteTransport struct{ target *url.URL }

func (rt rewriteTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Original-Host", r.URL.Host)
	r.URL.Scheme, r.URL.Host = rt.target.Scheme, rt.target.Host
	return http.DefaultTransport.RoundTrip(r)
}

func TestOpenAIDefaultEndpointUsesMaxCompletionTokens(t *testing.T) {
	api := newFakeAPI(t, jsonAnswer(t, 200, "openai/chat_text.json"))
	target, _ := url.Parse(api.srv.URL)
	client := &http.Client{Transport: rewriteTransport{target: target}}
	p, err := New(Config{Type: TypeOpenAI}, env("OPENAI_API_KEY", testKey),
		append(testOptions(&sleepRecorder{}), WithHTTPClient(client))...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Complete(context.Background(), basicRequest()); err != nil {
		t.Fatal(err)
	}
	r := api.received()[0]
	if got := r.Header.Get("X-Original-Host"); got != "api.openai.com" {
		t.Errorf("default endpoint host %q, want api.openai.com", got)
	}
	if r.Path != "/v1/chat/completions" {
		t.Errorf("path %q", r.Path)
	}
	if r.Body["max_completion_tokens"] != 512.0 || r.Body["max_tokens"] != nil {
		t.Errorf("token limit fields: max_completion_tokens=%v max_tokens=%v", r.Body["max_completion_tokens"], r.Body["max_tokens"])
	}
	if r.Body["model"] != DefaultOpenAIModel {
		t.Errorf("model %v, want the default %s", r.Body["model"], DefaultOpenAIModel)
	}
}

func TestOpenAINoKeyAndNoAmbientEnvironment(t *testing.T) {
	// The SDK's client constructor would pick these up; orch must not.
	t.Setenv("OPENAI_API_KEY", "sk-from-process-env")
	t.Setenv("OPENAI_ORG_ID", "org-from-process-env")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	api := newFakeAPI(t, jsonAnswer(t, 200, "openai/chat_text.json"))
	p, err := New(Config{Type: TypeOpenAI, BaseURL: api.srv.URL + "/v1", Model: "llama3.2"}, env(), testOptions(&sleepRecorder{})...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Complete(context.Background(), basicRequest()); err != nil {
		t.Fatal(err)
	}
	h := api.received()[0].Header
	if got := h.Get("Authorization"); got != "" {
		t.Errorf("Authorization header %q sent to a keyless server", got)
	}
	if got := h.Get("OpenAI-Organization"); got != "" {
		t.Errorf("OpenAI-Organization header %q taken from the process environment", got)
	}
}

func TestOpenAIStructured(t *testing.T) {
	strictSchema, err := SchemaFor(planAnswer{})
	if err != nil {
		t.Fatal(err)
	}
	type loose struct {
		Title string `json:"title"`
		Note  string `json:"note,omitempty"`
	}
	looseSchema, err := SchemaFor(loose{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		schema     json.RawMessage
		wantStrict bool
	}{
		{"strict-compatible", strictSchema, true},
		{"optional field", looseSchema, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := newFakeAPI(t, jsonAnswer(t, 200, "openai/chat_structured.json"))
			p := newTestOpenAI(t, api, &sleepRecorder{})
			req := basicRequest()
			req.Schema = tc.schema
			req.SchemaName = "plan"
			resp, err := p.Complete(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := validatePlan([]byte(resp.Text))
			if err != nil {
				t.Fatalf("structured answer %q: %v", resp.Text, err)
			}
			if got.Title != "Add retry to the fetcher" || got.Files[0].Intent != "create" || got.Risk != nil {
				t.Errorf("decoded %+v", got)
			}
			rf := api.received()[0].Body["response_format"]
			jsonEqual(t, rf, fmt.Sprintf(`{"type": "json_schema", "json_schema": {"name": "plan", "strict": %t, "schema": %s}}`, tc.wantStrict, tc.schema))
		})
	}
}

func TestOpenAICompleteJSONRepromptsAfterInvalidJSON(t *testing.T) {
	api := newFakeAPI(t,
		jsonAnswer(t, 200, "openai/chat_invalid_json.json"),
		jsonAnswer(t, 200, "openai/chat_structured.json"),
	)
	p := newTestOpenAI(t, api, &sleepRecorder{})
	req := planRequest(t)

	plan, responses, err := CompleteJSON(context.Background(), p, req, validatePlan, 3)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Title != "Add retry to the fetcher" {
		t.Errorf("plan %+v", plan)
	}
	if len(responses) != 2 || responses[0].StopReason != "stop" || responses[1].Usage.InputTokens != 312 {
		t.Errorf("responses %+v", responses)
	}
	reqs := api.received()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	// The retry is the request plus the validation errors; the rejected
	// answer is not sent back.
	msgs, _ := reqs[1].Body["messages"].([]any)
	if len(msgs) != 3 {
		t.Fatalf("second request has %d messages, want 3: %v", len(msgs), msgs)
	}
	fb := msgs[2].(map[string]any)
	if fb["role"] != "user" || !strings.Contains(fb["content"].(string), "not valid JSON") || strings.Contains(fb["content"].(string), "Sure!") {
		t.Errorf("third message %v, want the validation error alone", fb)
	}
}

func TestOpenAICompleteJSONCutOffIsNotRetried(t *testing.T) {
	api := newFakeAPI(t, jsonAnswer(t, 200, "openai/chat_length.json"))
	p := newTestOpenAI(t, api, &sleepRecorder{})
	req := basicRequest()
	req.Role, req.MaxTokens = "codegen", 16000
	req.Schema, req.SchemaName = json.RawMessage(`{"type":"object"}`), "codegen"
	_, responses, err := CompleteJSON[map[string]any](context.Background(), p, req, nil, 3)
	var te *TruncatedError
	if !errors.As(err, &te) || te.OutputTokens != 16000 || te.StopReason != "length" || te.Provider != "openai" {
		t.Fatalf("error %v, want a *TruncatedError", err)
	}
	if !strings.Contains(err.Error(), "max_output_tokens.codegen") || !strings.Contains(err.Error(), "16000 tokens") {
		t.Errorf("message %q", err)
	}
	if len(api.received()) != 1 || len(responses) != 1 {
		t.Errorf("%d requests, %d responses; want 1, not a retry", len(api.received()), len(responses))
	}
}

func TestOpenAIRetries(t *testing.T) {
	retryDate := fixedNow.Add(12 * time.Second).Format(http.TimeFormat)
	for _, tc := range []struct {
		name  string
		first func(t *testing.T) http.HandlerFunc
		sleep time.Duration
	}{
		{"429 Retry-After seconds", func(t *testing.T) http.HandlerFunc {
			return jsonAnswer(t, 429, "openai/error_429.json", "Retry-After", "7")
		}, 7 * time.Second},
		{"429 retry-after-ms", func(t *testing.T) http.HandlerFunc {
			return jsonAnswer(t, 429, "openai/error_429.json", "Retry-After-Ms", "1500", "Retry-After", "2")
		}, 1500 * time.Millisecond},
		{"429 Retry-After date", func(t *testing.T) http.HandlerFunc {
			return jsonAnswer(t, 429, "openai/error_429.json", "Retry-After", retryDate)
		}, 12 * time.Second},
		{"500 backoff", func(t *testing.T) http.HandlerFunc {
			return jsonAnswer(t, 500, "openai/error_500.json")
		}, 500 * time.Millisecond},
		{"connection dropped", hangUp, 500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := newFakeAPI(t, tc.first(t), jsonAnswer(t, 200, "openai/chat_text.json"))
			sleeps := &sleepRecorder{}
			p := newTestOpenAI(t, api, sleeps)
			resp, err := p.Complete(context.Background(), basicRequest())
			if err != nil {
				t.Fatal(err)
			}
			if resp.Usage.OutputTokens != 17 {
				t.Errorf("response %+v", resp)
			}
			if got := sleeps.got(); !reflect.DeepEqual(got, []time.Duration{tc.sleep}) {
				t.Errorf("slept %v, want [%v]", got, tc.sleep)
			}
			if n := len(api.received()); n != 2 {
				t.Errorf("%d requests, want 2", n)
			}
		})
	}
}

func TestOpenAIRetriesExhausted(t *testing.T) {
	fail := jsonAnswer(t, 500, "openai/error_500.json")
	api := newFakeAPI(t, fail, fail, fail, fail)
	sleeps := &sleepRecorder{}
	p := newTestOpenAI(t, api, sleeps, func(c *Config) { c.MaxRetries = 3 })
	_, err := p.Complete(context.Background(), basicRequest())
	var apiErr *APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("error %v (%T), want *APIError", err, err)
	}
	if apiErr.StatusCode != 500 || apiErr.Attempts != 4 || !strings.Contains(apiErr.Message, "The server had an error") {
		t.Errorf("APIError %+v", apiErr)
	}
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second}
	if got := sleeps.got(); !reflect.DeepEqual(got, want) {
		t.Errorf("slept %v, want %v", got, want)
	}
}

func TestOpenAIRetriesDisabled(t *testing.T) {
	api := newFakeAPI(t, jsonAnswer(t, 503, "openai/error_500.json"))
	sleeps := &sleepRecorder{}
	p := newTestOpenAI(t, api, sleeps, func(c *Config) { c.MaxRetries = -1 })
	_, err := p.Complete(context.Background(), basicRequest())
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 503 {
		t.Fatalf("error %v, want a 503 *APIError", err)
	}
	if len(sleeps.got()) != 0 {
		t.Errorf("slept %v with retries disabled", sleeps.got())
	}
}

func TestOpenAIRetryAfterBeyondLimitIsNotRetried(t *testing.T) {
	api := newFakeAPI(t, jsonAnswer(t, 429, "openai/error_429.json", "Retry-After", "3600"))
	sleeps := &sleepRecorder{}
	p := newTestOpenAI(t, api, sleeps)
	_, err := p.Complete(context.Background(), basicRequest())
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 429 || apiErr.RetryAfter != time.Hour {
		t.Fatalf("error %v, want a 429 *APIError asking for 1h", err)
	}
	if !strings.Contains(err.Error(), "retry after 1h0m0s") {
		t.Errorf("error %q does not say how long the server asked to wait", err)
	}
	if len(sleeps.got()) != 0 || len(api.received()) != 1 {
		t.Errorf("retried: sleeps %v, requests %d", sleeps.got(), len(api.received()))
	}
}

func TestOpenAIRejectedKey(t *testing.T) {
	for _, status := range []int{401, 403} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			api := newFakeAPI(t, jsonAnswer(t, status, "openai/error_401.json"))
			sleeps := &sleepRecorder{}
			p := newTestOpenAI(t, api, sleeps)
			_, err := p.Complete(context.Background(), basicRequest())
			var keyErr *KeyError
			if !errors.As(err, &keyErr) || !keyErr.Rejected || keyErr.EnvVar != openaiKeyEnv || keyErr.StatusCode != status {
				t.Fatalf("error %v (%T), want a rejected *KeyError for %s", err, err, openaiKeyEnv)
			}
			if !strings.Contains(err.Error(), openaiKeyEnv) {
				t.Errorf("error %q does not name the variable", err)
			}
			assertNoKey(t, err)
			if len(api.received()) != 1 || len(sleeps.got()) != 0 {
				t.Errorf("a rejected key was retried")
			}
		})
	}
}

func TestOpenAIKeyEchoedByServerIsRedacted(t *testing.T) {
	api := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"message":"key %s is not valid for this model","type":"invalid_request_error","param":null,"code":null}}`, testKey)
	})
	p := newTestOpenAI(t, api, &sleepRecorder{})
	_, err := p.Complete(context.Background(), basicRequest())
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 {
		t.Fatalf("error %v, want a 400 *APIError", err)
	}
	assertNoKey(t, err)
	if !strings.Contains(err.Error(), "[REDACTED]") {
		t.Errorf("error %q lost the server's message", err)
	}
}

func TestOpenAITimeout(t *testing.T) {
	api := newFakeAPI(t, waitForCancel(nil))
	sleeps := &sleepRecorder{}
	p := newTestOpenAI(t, api, sleeps, func(c *Config) { c.Timeout = 50 * time.Millisecond })
	_, err := p.Complete(context.Background(), basicRequest())
	var te *TimeoutError
	if !errors.As(err, &te) || te.Timeout != 50*time.Millisecond {
		t.Fatalf("error %v (%T), want *TimeoutError", err, err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("timeout error does not match context.DeadlineExceeded")
	}
	if len(api.received()) != 1 || len(sleeps.got()) != 0 {
		t.Errorf("a timed-out call was retried")
	}
}

func TestOpenAICancel(t *testing.T) {
	started := make(chan struct{})
	api := newFakeAPI(t, waitForCancel(started))
	p := newTestOpenAI(t, api, &sleepRecorder{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	_, err := p.Complete(ctx, basicRequest())
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	var te *TimeoutError
	if errors.As(err, &te) {
		t.Errorf("cancellation reported as a timeout: %v", err)
	}
}

func TestOpenAIRefusal(t *testing.T) {
	api := newFakeAPI(t, jsonAnswer(t, 200, "openai/chat_refusal.json"))
	p := newTestOpenAI(t, api, &sleepRecorder{})
	_, err := p.Complete(context.Background(), basicRequest())
	var re *RefusalError
	if !errors.As(err, &re) || re.Message != "I'm sorry, but I can't help with that request." {
		t.Fatalf("error %v (%T), want *RefusalError with the model's text", err, err)
	}
}

func TestOpenAIStreaming(t *testing.T) {
	api := newFakeAPI(t, sseAnswer(t, "openai/chat_stream.sse"))
	p := newTestOpenAI(t, api, &sleepRecorder{})
	var tokens []string
	req := basicRequest()
	req.OnToken = func(s string) { tokens = append(tokens, s) }
	resp, err := p.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"Retry", " with", " backoff", "."}; !reflect.DeepEqual(tokens, want) {
		t.Errorf("tokens %q, want %q", tokens, want)
	}
	want := Response{Text: "Retry with backoff.", Usage: Usage{InputTokens: 23, OutputTokens: 5}, Model: "gpt-5.5-2026-04-23", Provider: "openai", StopReason: "stop"}
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("response\n got %+v\nwant %+v", resp, want)
	}
	body := api.received()[0].Body
	if body["stream"] != true {
		t.Errorf("stream not requested: %v", body["stream"])
	}
	jsonEqual(t, body["stream_options"], `{"include_usage": true}`)
}

func TestOpenAIStreamCutAfterTokensIsNotRetried(t *testing.T) {
	api := newFakeAPI(t, sseAnswer(t, "openai/chat_stream_cut.sse"), jsonAnswer(t, 200, "openai/chat_text.json"))
	sleeps := &sleepRecorder{}
	p := newTestOpenAI(t, api, sleeps)
	var tokens []string
	req := basicRequest()
	req.OnToken = func(s string) { tokens = append(tokens, s) }
	_, err := p.Complete(context.Background(), req)
	var ce *ConnectionError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v (%T), want *ConnectionError", err, err)
	}
	if len(api.received()) != 1 || len(sleeps.got()) != 0 {
		t.Errorf("a stream that had delivered tokens was retried")
	}
	if !reflect.DeepEqual(tokens, []string{"Retry"}) {
		t.Errorf("tokens %q", tokens)
	}
}

func TestOpenAIBadRequests(t *testing.T) {
	api := newFakeAPI(t)
	p := newTestOpenAI(t, api, &sleepRecorder{})
	for _, tc := range []struct {
		name string
		req  Request
	}{
		{"no messages", Request{Role: "planner"}},
		{"unknown role", Request{Messages: []Message{{Role: "tool", Content: "x"}}}},
		{"array schema", Request{Messages: []Message{{Role: RoleUser, Content: "x"}}, Schema: json.RawMessage(`{"type":"array"}`)}},
		{"broken schema", Request{Messages: []Message{{Role: RoleUser, Content: "x"}}, Schema: json.RawMessage(`{"type":`)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := p.Complete(context.Background(), tc.req)
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Errorf("error %v (%T), want *ConfigError", err, err)
			}
		})
	}
	if n := len(api.received()); n != 0 {
		t.Errorf("%d requests sent for invalid calls", n)
	}
}

func TestOpenAIStreamingRefusal(t *testing.T) {
	api := newFakeAPI(t, sseAnswer(t, "openai/chat_stream_refusal.sse"))
	p := newTestOpenAI(t, api, &sleepRecorder{})
	req := basicRequest()
	req.OnToken = func(s string) { t.Errorf("token %q delivered for a refusal", s) }
	_, err := p.Complete(context.Background(), req)
	var re *RefusalError
	if !errors.As(err, &re) || re.Message != "I'm sorry, but I can't help with that." {
		t.Fatalf("error %v (%T), want *RefusalError with the streamed text", err, err)
	}
}

func TestHTTPNotAnAPIAnswer(t *testing.T) {
	html := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html><body>Please log in to the proxy</body></html>"))
	}
	for _, tc := range []struct {
		name string
		make func(t *testing.T, api *fakeAPI, s *sleepRecorder) Provider
		step http.HandlerFunc
	}{
		{"openai html", func(t *testing.T, api *fakeAPI, s *sleepRecorder) Provider { return newTestOpenAI(t, api, s) }, html},
		{"anthropic html", func(t *testing.T, api *fakeAPI, s *sleepRecorder) Provider { return newTestAnthropic(t, api, s) }, html},
		{"openai object without choices", func(t *testing.T, api *fakeAPI, s *sleepRecorder) Provider { return newTestOpenAI(t, api, s) },
			func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"id":"x","object":"chat.completion","choices":[]}`))
			}},
		{"anthropic object that is not a message", func(t *testing.T, api *fakeAPI, s *sleepRecorder) Provider { return newTestAnthropic(t, api, s) },
			func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"status":"ok"}`))
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := newFakeAPI(t, tc.step)
			sleeps := &sleepRecorder{}
			_, err := tc.make(t, api, sleeps).Complete(context.Background(), basicRequest())
			var pe *ProtocolError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v (%T), want *ProtocolError", err, err)
			}
			if len(api.received()) != 1 || len(sleeps.got()) != 0 {
				t.Errorf("a malformed answer was retried")
			}
		})
	}
}

func TestLatencyCoversTheWholeCall(t *testing.T) {
	api := newFakeAPI(t, jsonAnswer(t, 500, "openai/error_500.json"), jsonAnswer(t, 200, "openai/chat_text.json"))
	// A fake clock that only the backoff sleep moves.
	var mu sync.Mutex
	now := fixedNow
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	sleep := func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(d)
		return ctx.Err()
	}
	p, err := New(Config{Type: TypeOpenAI, BaseURL: api.srv.URL, APIKeyEnv: openaiKeyEnv}, env(openaiKeyEnv, testKey),
		WithClock(clock), WithSleep(sleep), WithJitter(func() float64 { return 0 }))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := p.Complete(context.Background(), basicRequest())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Latency != 500*time.Millisecond {
		t.Errorf("latency %v, want the whole call including the 500ms backoff", resp.Latency)
	}
}
