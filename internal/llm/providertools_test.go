package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/clip"
)

// withTools turns tool calling on for a test server.
func withTools(c *Config) {
	on := true
	c.Tools = &on
}

func TestToolCallingDefaults(t *testing.T) {
	off, on := false, true
	for _, tc := range []struct {
		cfg  Config
		want bool
	}{
		{Config{Type: TypeOpenAI}, true},
		// Every OpenAI-compatible server is offered tools; one that
		// refuses them says so (TestOpenAIToolsRefused).
		{Config{Type: TypeOpenAI, BaseURL: "http://127.0.0.1:11434/v1"}, true},
		{Config{Type: TypeOpenAI, BaseURL: "http://127.0.0.1:11434/v1", Tools: &off}, false},
		{Config{Type: TypeOpenAI, BaseURL: "http://127.0.0.1:11434/v1", Tools: &on}, true},
		{Config{Type: TypeOpenAI, Tools: &off}, false},
		{Config{Type: TypeAnthropic}, true},
		{Config{Type: TypeAnthropic, BaseURL: "http://127.0.0.1:8080", Tools: &off}, false},
	} {
		p, err := New(tc.cfg, env("OPENAI_API_KEY", "k", "ANTHROPIC_API_KEY", "k"))
		if err != nil {
			t.Fatal(err)
		}
		if got := SupportsTools(p); got != tc.want {
			t.Errorf("%+v: SupportsTools = %v, want %v", tc.cfg, got, tc.want)
		}
		if !tc.want {
			_, err := p.Complete(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}, Tools: readTools})
			var ce *ConfigError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), "tools") {
				t.Errorf("%+v: a request with tools got %v, want a *ConfigError", tc.cfg, err)
			}
		}
	}
}

func TestOpenAIToolCalls(t *testing.T) {
	api := newFakeAPI(t, jsonAnswer(t, 200, "openai/chat_tool_calls.json"))
	p := newTestOpenAI(t, api, &sleepRecorder{}, withTools)
	if !SupportsTools(p) {
		t.Fatal("openai does not report tool support")
	}
	resp, err := p.Complete(context.Background(), Request{Role: "codegen", Messages: toolConversation(), Tools: readTools, CacheKey: "orch-task-7-codegen", ReasoningEffort: "low"})
	if err != nil {
		t.Fatal(err)
	}
	want := []ToolCall{
		{ID: "call_Xq3kH8vT1mWz4pLr0sJd9nBe", Name: "read_file", Arguments: json.RawMessage(`{"path":"calc.go","offset":1,"limit":40}`)},
		// Malformed arguments reach the agent as a JSON string.
		{ID: "call_P0sN7bVc2xQm5rTy8wKj1hGf", Name: "search", Arguments: json.RawMessage(`"{\"pattern\":\"func Add\""`)},
	}
	if !reflect.DeepEqual(resp.ToolCalls, want) {
		t.Errorf("tool calls %s\nwant %s", jsonOf(resp.ToolCalls), jsonOf(want))
	}
	if resp.StopReason != "tool_calls" || resp.Truncated() || resp.Text != "" {
		t.Errorf("response %+v", resp)
	}
	if resp.Usage != (Usage{InputTokens: 5236, OutputTokens: 61, CachedInputTokens: 4992}) {
		t.Errorf("usage %+v", resp.Usage)
	}
	body := api.received()[0].Body
	jsonEqual(t, body["messages"], `[
		{"role": "system", "content": "You edit code."},
		{"role": "user", "content": "Fix Add in calc.go."},
		{"role": "assistant", "content": "Reading.", "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"calc.go\"}"}}]},
		{"role": "tool", "tool_call_id": "call_1", "content": "1\tpackage calc"},
		{"role": "assistant", "tool_calls": [{"id": "call_2", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"../etc/passwd\"}"}}]},
		{"role": "tool", "tool_call_id": "call_2", "content": "Error: path outside the repository"}]`)
	jsonEqual(t, body["tools"], `[
		{"type": "function", "function": {"name": "read_file", "description": "Read a tracked file.", "parameters": {"type":"object","properties":{"path":{"type":"string"},"offset":{"type":"integer"},"limit":{"type":"integer"}},"required":["path"]}}},
		{"type": "function", "function": {"name": "search", "description": "Search tracked files.", "parameters": {"type":"object","properties":{"pattern":{"type":"string"}},"required":["pattern"]}}}]`)
	if body["prompt_cache_key"] != "orch-task-7-codegen" || body["reasoning_effort"] != "low" {
		t.Errorf("prompt_cache_key %v reasoning_effort %v", body["prompt_cache_key"], body["reasoning_effort"])
	}
}

func TestOpenAIStreamedToolCalls(t *testing.T) {
	api := newFakeAPI(t, sseAnswer(t, "openai/chat_stream_tool_calls.sse"))
	p := newTestOpenAI(t, api, &sleepRecorder{}, withTools)
	var tokens strings.Builder
	resp, err := p.Complete(context.Background(), Request{Role: "codegen", Messages: toolConversation(), Tools: readTools, OnToken: func(s string) { tokens.WriteString(s) }})
	if err != nil {
		t.Fatal(err)
	}
	want := []ToolCall{
		{ID: "call_Xq3kH8vT1mWz4pLr0sJd9nBe", Name: "read_file", Arguments: json.RawMessage(`{"path":"calc.go"}`)},
		{ID: "call_P0sN7bVc2xQm5rTy8wKj1hGf", Name: "run_tests", Arguments: json.RawMessage(`{}`)},
	}
	if !reflect.DeepEqual(resp.ToolCalls, want) {
		t.Errorf("tool calls %s\nwant %s", jsonOf(resp.ToolCalls), jsonOf(want))
	}
	if resp.Text != "Reading first." || tokens.String() != resp.Text || resp.StopReason != "tool_calls" {
		t.Errorf("response %+v, tokens %q", resp, tokens.String())
	}
	if resp.Usage != (Usage{InputTokens: 5236, OutputTokens: 44, CachedInputTokens: 4992}) {
		t.Errorf("usage %+v", resp.Usage)
	}
}

// endless streams chunks until the client goes away, counting them.
func endless(sent *atomic.Int64, event func(i int64) string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		flusher := w.(http.Flusher)
		for i := int64(0); ; i++ {
			if _, err := io.WriteString(w, event(i)); err != nil {
				return
			}
			flusher.Flush()
			sent.Add(1)
			if r.Context().Err() != nil {
				return
			}
		}
	}
}

func openaiChunk(content string) string {
	return fmt.Sprintf(`data: {"id":"chatcmpl-x","object":"chat.completion.chunk","created":1764065200,"model":"gpt-5.5-2026-04-23","choices":[{"index":0,"delta":{"content":%q},"logprobs":null,"finish_reason":null}],"usage":null}`+"\n\n", content)
}

// TestStreamsStopAtTheOutputCap: a server that streams forever past the
// output limit is cut off by orch once the cap is certainly passed, not at
// the call's timeout (which the test would run into).
func TestStreamsStopAtTheOutputCap(t *testing.T) {
	const maxTokens = 200
	for _, tc := range []struct {
		name       string
		anthropic  bool
		event      func(i int64) string
		wantStop   string
		wantPrefix string
	}{
		{"openai text", false, func(int64) string { return openaiChunk("ab") }, "length", "ababab"},
		{"openai empty deltas", false, func(int64) string { return openaiChunk("") }, "length", ""},
		{"openai tool arguments", false, func(i int64) string {
			if i == 0 {
				return `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"write_file","arguments":"{\"content\":\""}}]},"finish_reason":null}]}` + "\n\n"
			}
			return `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"x"}}]},"finish_reason":null}]}` + "\n\n"
		}, "length", ""},
		{"anthropic text", true, func(i int64) string {
			if i == 0 {
				return "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-5-5\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n" +
					"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
			}
			return "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"ab\"}}\n\n"
		}, "max_tokens", "ababab"},
		// The SDK skips pings: the body's size bounds them.
		{"anthropic pings", true, func(i int64) string {
			if i == 0 {
				return "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-5-5\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n"
			}
			return "event: ping\ndata: {\"type\": \"ping\"}\n\n"
		}, "max_tokens", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sent atomic.Int64
			api := newFakeAPI(t, endless(&sent, tc.event))
			var p Provider
			if tc.anthropic {
				p = newTestAnthropic(t, api, &sleepRecorder{}, func(c *Config) { c.Timeout = 10 * time.Minute })
			} else {
				p = newTestOpenAI(t, api, &sleepRecorder{}, withTools, func(c *Config) { c.Timeout = 10 * time.Minute })
			}
			req := basicRequest()
			req.Role, req.MaxTokens = "codegen", maxTokens
			req.Tools = readTools
			req.OnToken = func(string) {}
			resp, err := p.Complete(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if !resp.Truncated() || resp.StopReason != tc.wantStop || resp.Usage.OutputTokens < maxTokens {
				t.Errorf("response stop %q usage %+v, want cut off at the cap", resp.StopReason, resp.Usage)
			}
			if !strings.HasPrefix(resp.Text, tc.wantPrefix) || len(resp.Text) > maxTokens*streamCapBytesPerToken+streamCapSlack*streamCapBytesPerToken {
				t.Errorf("text of %d bytes %q…", len(resp.Text), clip.Bytes(resp.Text, 20))
			}
			var te *TruncatedError
			if err := CheckTruncated(req, resp); !errors.As(err, &te) || te.MaxTokens != maxTokens {
				t.Errorf("CheckTruncated = %v", err)
			}
			if sent.Load() == 0 {
				t.Error("the server sent nothing")
			}
		})
	}
}

func TestAnthropicToolsCachingAndThinking(t *testing.T) {
	api := newFakeAPI(t, jsonAnswer(t, 200, "anthropic/message_tools.json"), jsonAnswer(t, 200, "anthropic/message_text.json"))
	p := newTestAnthropic(t, api, &sleepRecorder{})
	if !SupportsTools(p) {
		t.Fatal("anthropic does not report tool support")
	}
	msgs := toolConversation()
	msgs = append(msgs[:4:4], Message{Role: RoleUser, Content: "Also check the tests.", CacheBreakpoint: true})
	resp, err := p.Complete(context.Background(), Request{Role: "codegen", Messages: msgs, Tools: readTools, ReasoningEffort: "medium", MaxTokens: 4000})
	if err != nil {
		t.Fatal(err)
	}
	want := []ToolCall{
		{ID: "toolu_01A09q90qw90lq917835lq9", Name: "read_file", Arguments: json.RawMessage(`{"path":"calc.go","offset":1,"limit":40}`)},
		{ID: "toolu_01B7sK2mN4pQ6rT8vX0zC3eG", Name: "run_tests", Arguments: json.RawMessage(`{}`)},
	}
	if !reflect.DeepEqual(resp.ToolCalls, want) {
		t.Errorf("tool calls %s\nwant %s", jsonOf(resp.ToolCalls), jsonOf(want))
	}
	if resp.Text != "I'll read the function first." || resp.StopReason != "tool_use" {
		t.Errorf("response %+v", resp)
	}
	// input_tokens excludes the cache; orch's InputTokens is the whole prompt.
	if resp.Usage != (Usage{InputTokens: 212 + 1830 + 4410, OutputTokens: 96, CachedInputTokens: 4410, CacheWriteTokens: 1830}) {
		t.Errorf("usage %+v", resp.Usage)
	}
	body := api.received()[0].Body
	jsonEqual(t, body["system"], `[{"type": "text", "text": "You edit code.", "cache_control": {"type": "ephemeral"}}]`)
	jsonEqual(t, body["messages"], `[
		{"role": "user", "content": [{"type": "text", "text": "Fix Add in calc.go."}]},
		{"role": "assistant", "content": [{"type": "text", "text": "Reading."}, {"type": "tool_use", "id": "call_1", "name": "read_file", "input": {"path": "calc.go"}}]},
		{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": [{"type": "text", "text": "1\tpackage calc"}], "is_error": false},
			{"type": "text", "text": "Also check the tests.", "cache_control": {"type": "ephemeral"}}]}]`)
	tools := body["tools"].([]any)
	if len(tools) != 2 || tools[0].(map[string]any)["cache_control"] != nil {
		t.Fatalf("tools %v", tools)
	}
	jsonEqual(t, tools[1].(map[string]any)["cache_control"], `{"type": "ephemeral"}`)
	jsonEqual(t, body["output_config"], `{"effort": "medium"}`)
	if _, ok := body["tool_choice"]; ok {
		t.Errorf("tool_choice %v sent", body["tool_choice"])
	}

	// The next turn sends the thinking blocks back before the tool calls,
	// and the results of both calls in one user message.
	next := append(msgs, resp.AssistantMessage(),
		Message{Role: RoleTool, ToolCallID: want[0].ID, Content: "1\tpackage calc"},
		Message{Role: RoleTool, ToolCallID: want[1].ID, Content: "FAIL TestAdd", IsError: true})
	if _, err := p.Complete(context.Background(), Request{Role: "codegen", Messages: next, Tools: readTools}); err != nil {
		t.Fatal(err)
	}
	sent := api.received()[1].Body["messages"].([]any)
	jsonEqual(t, sent[len(sent)-2], `{"role": "assistant", "content": [
		{"type": "thinking", "thinking": "", "signature": "EqQBCkYIBxgCKkDk3Zr9sQ1vXh0aW4p7LmN2bT5yU8cF6gJ3kR1dV0eH9iO2qP4wS7xA5zC8bM1nK6jL3hG0fY9tR2uE4vI7oPMEgxq2Wc5TfB8nK1dL3"},
		{"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"},
		{"type": "text", "text": "I'll read the function first."},
		{"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "read_file", "input": {"path": "calc.go", "offset": 1, "limit": 40}},
		{"type": "tool_use", "id": "toolu_01B7sK2mN4pQ6rT8vX0zC3eG", "name": "run_tests", "input": {}}]}`)
	jsonEqual(t, sent[len(sent)-1], `{"role": "user", "content": [
		{"type": "tool_result", "tool_use_id": "toolu_01A09q90qw90lq917835lq9", "content": [{"type": "text", "text": "1\tpackage calc"}], "is_error": false},
		{"type": "tool_result", "tool_use_id": "toolu_01B7sK2mN4pQ6rT8vX0zC3eG", "content": [{"type": "text", "text": "FAIL TestAdd"}], "is_error": true}]}`)
}

func TestAnthropicCacheBreakpointsAtMostFour(t *testing.T) {
	api := newFakeAPI(t, jsonAnswer(t, 200, "anthropic/message_text.json"))
	p := newTestAnthropic(t, api, &sleepRecorder{})
	var msgs []Message
	for i := range 6 {
		msgs = append(msgs, Message{Role: RoleUser, Content: fmt.Sprint("part ", i), CacheBreakpoint: true})
	}
	if _, err := p.Complete(context.Background(), Request{Messages: msgs, Tools: readTools}); err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(api.received()[0].Body)
	if n := strings.Count(string(data), `"cache_control"`); n != maxCacheBreakpoints {
		t.Errorf("%d cache_control markers, want %d: %s", n, maxCacheBreakpoints, data)
	}
	// The last ones are kept: they cover the longest prefix.
	if !strings.Contains(string(data), `"text":"part 5","type":"text","cache_control"`) && !strings.Contains(string(data), `"cache_control":{"type":"ephemeral"},"text":"part 5"`) {
		t.Errorf("the last breakpoint was dropped: %s", data)
	}
}

func TestAnthropicStreamedToolCalls(t *testing.T) {
	api := newFakeAPI(t, sseAnswer(t, "anthropic/message_stream_tools.sse"))
	p := newTestAnthropic(t, api, &sleepRecorder{})
	var tokens strings.Builder
	resp, err := p.Complete(context.Background(), Request{Role: "codegen", Messages: toolConversation(), Tools: readTools, OnToken: func(s string) { tokens.WriteString(s) }})
	if err != nil {
		t.Fatal(err)
	}
	want := []ToolCall{{ID: "toolu_01E5rT7yU9iO1pA3sD5fG7hJ", Name: "edit_file", Arguments: json.RawMessage(`{"path":"calc.go","old_string":"a - b","new_string":"a + b"}`)}}
	if !reflect.DeepEqual(resp.ToolCalls, want) {
		t.Errorf("tool calls %s\nwant %s", jsonOf(resp.ToolCalls), jsonOf(want))
	}
	if resp.Text != "Fixing the sign." || resp.StopReason != "tool_use" {
		t.Errorf("response %+v", resp)
	}
	if resp.Usage != (Usage{InputTokens: 212 + 6240, OutputTokens: 71, CachedInputTokens: 6240}) {
		t.Errorf("usage %+v", resp.Usage)
	}
	jsonEqual(t, json.RawMessage(resp.ProviderState), `[{"type": "thinking", "thinking": "The failing test names Add.", "signature": "EqQBCkYIBxgCKkBv5Kx1"}]`)
}

func TestAnthropicCutOff(t *testing.T) {
	api := newFakeAPI(t, jsonAnswer(t, 200, "anthropic/message_max_tokens.json"))
	p := newTestAnthropic(t, api, &sleepRecorder{})
	req := basicRequest()
	req.Role, req.MaxTokens = "plan_reviewer:risk", 16000
	_, _, err := CompleteJSON[map[string]any](context.Background(), p, req, nil, 3)
	var te *TruncatedError
	if !errors.As(err, &te) || te.StopReason != "max_tokens" || te.Role != "plan_reviewer:risk" {
		t.Fatalf("error %v, want a *TruncatedError", err)
	}
	if !strings.Contains(err.Error(), "max_output_tokens.plan_reviewer") {
		t.Errorf("message %q", err)
	}
	if len(api.received()) != 1 {
		t.Errorf("%d requests, want 1", len(api.received()))
	}
}

// TestEndlessAnswerBodyStopsAtTheCap: a non-streamed answer whose body
// never ends is cut at the body cap instead of the call's timeout.
func TestEndlessAnswerBodyStopsAtTheCap(t *testing.T) {
	for _, anthropicAPI := range []bool{false, true} {
		var sent atomic.Int64
		api := newFakeAPI(t, endless(&sent, func(i int64) string {
			if i == 0 {
				return `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"`
			}
			return strings.Repeat("a", 4096)
		}))
		var p Provider
		if anthropicAPI {
			p = newTestAnthropic(t, api, &sleepRecorder{}, func(c *Config) { c.Timeout = 10 * time.Minute })
		} else {
			p = newTestOpenAI(t, api, &sleepRecorder{}, func(c *Config) { c.Timeout = 10 * time.Minute })
		}
		req := basicRequest()
		req.MaxTokens = 100
		resp, err := p.Complete(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if !resp.Truncated() || resp.Usage.OutputTokens != 100 || len(api.received()) != 1 {
			t.Errorf("anthropic %v: response %+v after %d requests, want cut off once", anthropicAPI, resp, len(api.received()))
		}
	}
}
