package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

const anthropicKeyEnv = "ORCH_TEST_ANTHROPIC_KEY"

func newTestAnthropic(t *testing.T, api *fakeAPI, sleeps *sleepRecorder, mutate ...func(*Config)) Provider {
	t.Helper()
	return newTestProvider(t, Config{Type: TypeAnthropic, BaseURL: api.srv.URL, Model: "claude-test", APIKeyEnv: anthropicKeyEnv}, sleeps, mutate...)
}

// sentKey reports whether h carries key the way the SDK sends it
// (x-api-key, or a bearer token in this SDK version).
func sentKey(h http.Header, key string) bool {
	return h.Get("X-Api-Key") == key || h.Get("Authorization") == "Bearer "+key
}

func TestAnthropicText(t *testing.T) {
	api := newFakeAPI(t, jsonAnswer(t, 200, "anthropic/message_text.json"))
	p := newTestAnthropic(t, api, &sleepRecorder{})
	resp, err := p.Complete(context.Background(), basicRequest())
	if err != nil {
		t.Fatal(err)
	}
	want := Response{
		Text:       "The change touches two files: internal/retry/retry.go and its test.",
		Usage:      Usage{InputTokens: 61, OutputTokens: 19},
		Model:      "claude-sonnet-5-5",
		Provider:   "anthropic",
		StopReason: "end_turn",
	}
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("response\n got %+v\nwant %+v", resp, want)
	}
	r := api.received()[0]
	if r.Method != http.MethodPost || r.Path != "/v1/messages" {
		t.Errorf("request %s %s, want POST /v1/messages", r.Method, r.Path)
	}
	if !sentKey(r.Header, testKey) {
		t.Errorf("key not sent: headers %v", r.Header)
	}
	if r.Header.Get("Anthropic-Version") == "" {
		t.Errorf("no anthropic-version header")
	}
	jsonEqual(t, r.Body, `{
		"model": "claude-test",
		"max_tokens": 512,
		"temperature": 0.2,
		"system": [{"type": "text", "text": "You plan code changes."}],
		"messages": [{"role": "user", "content": [{"type": "text", "text": "Add retry to the fetcher."}]}]
	}`)
}

func TestAnthropicDefaults(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-from-process-env")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	api := newFakeAPI(t, jsonAnswer(t, 200, "anthropic/message_text.json"))
	p, err := New(Config{Type: TypeAnthropic, BaseURL: api.srv.URL}, env("ANTHROPIC_API_KEY", testKey), testOptions(&sleepRecorder{})...)
	if err != nil {
		t.Fatal(err)
	}
	req := Request{Role: "planner", Messages: []Message{{Role: RoleUser, Content: "hi"}}}
	if _, err := p.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	r := api.received()[0]
	if !sentKey(r.Header, testKey) {
		t.Errorf("the key from the injected environment was not sent: headers %v", r.Header)
	}
	if r.Body["model"] != DefaultAnthropicModel || r.Body["max_tokens"] != float64(defaultAnthropicMaxTokens) {
		t.Errorf("model %v max_tokens %v, want the defaults", r.Body["model"], r.Body["max_tokens"])
	}
	if _, ok := r.Body["temperature"]; ok {
		t.Errorf("temperature sent though the request set none")
	}
}

func TestAnthropicStructured(t *testing.T) {
	api := newFakeAPI(t, jsonAnswer(t, 200, "anthropic/message_tool_use.json"))
	p := newTestAnthropic(t, api, &sleepRecorder{})
	req := planRequest(t)
	resp, err := p.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := validatePlan([]byte(resp.Text))
	if err != nil {
		t.Fatalf("structured answer %q: %v", resp.Text, err)
	}
	if plan.Title != "Add retry to the fetcher" || resp.StopReason != "tool_use" || resp.Usage.OutputTokens != 87 {
		t.Errorf("plan %+v response %+v", plan, resp)
	}
	body := api.received()[0].Body
	tools, _ := body["tools"].([]any)
	if len(tools) != 1 {
		t.Fatalf("tools %v, want one", body["tools"])
	}
	tool := tools[0].(map[string]any)
	if tool["name"] != "plan" {
		t.Errorf("tool name %v", tool["name"])
	}
	jsonEqual(t, tool["input_schema"], string(req.Schema))
	// Not forced: current models answer a forced tool choice with HTTP 400.
	if _, forced := body["tool_choice"]; forced {
		t.Errorf("tool_choice %v sent", body["tool_choice"])
	}
}

func TestAnthropicCompleteJSONRepromptsAfterValidationError(t *testing.T) {
	api := newFakeAPI(t,
		jsonAnswer(t, 200, "anthropic/message_tool_use_incomplete.json"),
		jsonAnswer(t, 200, "anthropic/message_tool_use.json"),
	)
	p := newTestAnthropic(t, api, &sleepRecorder{})
	req := planRequest(t)
	plan, responses, err := CompleteJSON(context.Background(), p, req, validatePlan, 2)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Title != "Add retry to the fetcher" || len(responses) != 2 {
		t.Errorf("plan %+v after %d responses", plan, len(responses))
	}
	msgs := api.received()[1].Body["messages"].([]any)
	last := msgs[len(msgs)-1].(map[string]any)
	content := last["content"].([]any)[0].(map[string]any)["text"].(string)
	if last["role"] != "user" || !strings.Contains(content, `"title" is missing`) {
		t.Errorf("feedback message %v", last)
	}
}

func TestAnthropicRetries(t *testing.T) {
	for _, tc := range []struct {
		name  string
		first func(t *testing.T) http.HandlerFunc
		sleep time.Duration
	}{
		{"429 Retry-After", func(t *testing.T) http.HandlerFunc {
			return jsonAnswer(t, 429, "anthropic/error_429.json", "Retry-After", "9")
		}, 9 * time.Second},
		{"529 overloaded", func(t *testing.T) http.HandlerFunc {
			return jsonAnswer(t, 529, "anthropic/error_529.json")
		}, 500 * time.Millisecond},
		{"connection dropped", hangUp, 500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := newFakeAPI(t, tc.first(t), jsonAnswer(t, 200, "anthropic/message_text.json"))
			sleeps := &sleepRecorder{}
			p := newTestAnthropic(t, api, sleeps)
			if _, err := p.Complete(context.Background(), basicRequest()); err != nil {
				t.Fatal(err)
			}
			if got := sleeps.got(); !reflect.DeepEqual(got, []time.Duration{tc.sleep}) {
				t.Errorf("slept %v, want [%v]", got, tc.sleep)
			}
		})
	}
}

func TestAnthropicRejectedKey(t *testing.T) {
	api := newFakeAPI(t, jsonAnswer(t, 401, "anthropic/error_401.json"))
	sleeps := &sleepRecorder{}
	p := newTestAnthropic(t, api, sleeps)
	_, err := p.Complete(context.Background(), basicRequest())
	var keyErr *KeyError
	if !errors.As(err, &keyErr) || !keyErr.Rejected || keyErr.EnvVar != anthropicKeyEnv {
		t.Fatalf("error %v (%T), want a rejected *KeyError", err, err)
	}
	if !strings.Contains(err.Error(), anthropicKeyEnv) {
		t.Errorf("error %q does not name the variable", err)
	}
	assertNoKey(t, err)
	if len(sleeps.got()) != 0 {
		t.Errorf("a rejected key was retried")
	}
}

func TestAnthropicErrorKeepsOnlyTheMessage(t *testing.T) {
	api := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: too large"},"echo":"%s"}`, testKey)
	})
	p := newTestAnthropic(t, api, &sleepRecorder{})
	_, err := p.Complete(context.Background(), basicRequest())
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Message != "max_tokens: too large" {
		t.Fatalf("error %v, want a 400 *APIError with the server's message", err)
	}
	assertNoKey(t, err)
}

func TestAnthropicTimeout(t *testing.T) {
	api := newFakeAPI(t, waitForCancel(nil))
	p := newTestAnthropic(t, api, &sleepRecorder{}, func(c *Config) { c.Timeout = 50 * time.Millisecond })
	_, err := p.Complete(context.Background(), basicRequest())
	var te *TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("error %v (%T), want *TimeoutError", err, err)
	}
}

func TestAnthropicRefusal(t *testing.T) {
	api := newFakeAPI(t, jsonAnswer(t, 200, "anthropic/message_refusal.json"))
	p := newTestAnthropic(t, api, &sleepRecorder{})
	_, err := p.Complete(context.Background(), basicRequest())
	var re *RefusalError
	if !errors.As(err, &re) || !strings.Contains(re.Message, "working exploit") {
		t.Fatalf("error %v (%T), want *RefusalError with the explanation", err, err)
	}
}

func TestAnthropicStreaming(t *testing.T) {
	schema, _ := SchemaFor(planAnswer{})
	for _, tc := range []struct {
		name       string
		fixture    string
		schema     bool
		wantTokens []string
		wantText   string
		wantUsage  Usage
		wantStop   string
	}{
		{
			name: "text", fixture: "anthropic/message_stream.sse",
			wantTokens: []string{"Retry", " with", " backoff", "."},
			wantText:   "Retry with backoff.", wantUsage: Usage{InputTokens: 25, OutputTokens: 6}, wantStop: "end_turn",
		},
		{
			name: "tool input", fixture: "anthropic/message_stream_tool.sse", schema: true,
			wantTokens: []string{`{"title": "Add retry`, ` to the fetcher", "files": [{"path": "internal/fetch/retry.go", `, `"intent": "create"}], "risk": null}`},
			wantText:   `{"title": "Add retry to the fetcher", "files": [{"path": "internal/fetch/retry.go", "intent": "create"}], "risk": null}`,
			wantUsage:  Usage{InputTokens: 472, OutputTokens: 58}, wantStop: "tool_use",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := newFakeAPI(t, sseAnswer(t, tc.fixture))
			p := newTestAnthropic(t, api, &sleepRecorder{})
			var tokens []string
			req := basicRequest()
			req.OnToken = func(s string) { tokens = append(tokens, s) }
			if tc.schema {
				req.Schema, req.SchemaName = schema, "plan"
			}
			resp, err := p.Complete(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(tokens, tc.wantTokens) {
				t.Errorf("tokens %q, want %q", tokens, tc.wantTokens)
			}
			if resp.Text != tc.wantText || resp.Usage != tc.wantUsage || resp.StopReason != tc.wantStop || resp.Model != "claude-sonnet-5-5" {
				t.Errorf("response %+v", resp)
			}
			if body := api.received()[0].Body; body["stream"] != true {
				t.Errorf("stream not requested: %v", body["stream"])
			}
		})
	}
}

func TestAnthropicStreamErrorEventBeforeTokensIsRetried(t *testing.T) {
	api := newFakeAPI(t, sseAnswer(t, "anthropic/message_stream_overloaded.sse"), sseAnswer(t, "anthropic/message_stream.sse"))
	sleeps := &sleepRecorder{}
	p := newTestAnthropic(t, api, sleeps)
	var tokens []string
	req := basicRequest()
	req.OnToken = func(s string) { tokens = append(tokens, s) }
	resp, err := p.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "Retry with backoff." || strings.Join(tokens, "") != resp.Text {
		t.Errorf("text %q tokens %q", resp.Text, tokens)
	}
	if got := sleeps.got(); !reflect.DeepEqual(got, []time.Duration{500 * time.Millisecond}) {
		t.Errorf("slept %v, want one backoff", got)
	}
}
