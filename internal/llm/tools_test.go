package llm

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// readTools are two of the agents' read tools (README, "Agents: tools, edits and context"), as the agent offers them.
var readTools = []Tool{
	{Name: "read_file", Description: "Read a tracked file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"offset":{"type":"integer"},"limit":{"type":"integer"}},"required":["path"]}`)},
	{Name: "search", Description: "Search tracked files.", Parameters: json.RawMessage(`{"type":"object","properties":{"pattern":{"type":"string"}},"required":["pattern"]}`)},
}

// toolConversation is a conversation after one tool round trip.
func toolConversation() []Message {
	return []Message{
		{Role: RoleSystem, Content: "You edit code.", CacheBreakpoint: true},
		{Role: RoleUser, Content: "Fix Add in calc.go."},
		{Role: RoleAssistant, Content: "Reading.", ToolCalls: []ToolCall{{ID: "call_1", Name: "read_file", Arguments: json.RawMessage(`{"path":"calc.go"}`)}}},
		{Role: RoleTool, ToolCallID: "call_1", Content: "1\tpackage calc"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "call_2", Name: "read_file", Arguments: json.RawMessage(`{"path":"../etc/passwd"}`)}}},
		{Role: RoleTool, ToolCallID: "call_2", Content: "path outside the repository", IsError: true},
	}
}

func TestScriptReplaysToolCalls(t *testing.T) {
	p, err := New(Config{Type: TypeScript, ScriptFile: "testdata/script/tools.json"}, env())
	if err != nil {
		t.Fatal(err)
	}
	if !SupportsTools(p) {
		t.Fatal("the script provider does not report tool support")
	}
	req := Request{Role: "codegen", Messages: toolConversation(), Tools: readTools}
	var got [][]ToolCall
	var texts []string
	for range 3 {
		resp, err := p.Complete(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, resp.ToolCalls)
		texts = append(texts, resp.Text)
		if resp.StopReason != "tool_calls" {
			t.Errorf("stop reason %q, want tool_calls", resp.StopReason)
		}
		if len(got) == 1 && resp.Usage != (Usage{InputTokens: 1500, OutputTokens: 25, CachedInputTokens: 1200}) {
			t.Errorf("usage %+v", resp.Usage)
		}
	}
	want := [][]ToolCall{
		{{ID: "script_0_0", Name: "read_file", Arguments: json.RawMessage(`{"path":"calc.go"}`)}},
		{{ID: "edit-1", Name: "edit_file", Arguments: json.RawMessage(`{"path":"calc.go","old_string":"a - b","new_string":"a + b"}`)},
			{ID: "script_1_1", Name: "run_tests", Arguments: json.RawMessage(`{}`)}},
		{{ID: "script_2_0", Name: "finish", Arguments: json.RawMessage(`{"status":"completed","notes":"fixed Add"}`)}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tool calls\n got %s\nwant %s", jsonOf(got), jsonOf(want))
	}
	if texts[0] != "I will read the file first." || texts[1] != "" {
		t.Errorf("texts %q", texts)
	}

	// The scripted truncated answer is reported as such.
	resp, err := p.Complete(context.Background(), Request{Role: "planner", Messages: []Message{{Role: RoleUser, Content: "plan"}}})
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Truncated() {
		t.Errorf("stop reason %q: not truncated", resp.StopReason)
	}
}

func TestScriptToolCallsNeedTools(t *testing.T) {
	p, err := New(Config{Type: TypeScript, ScriptFile: "testdata/script/tools.json"}, env())
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Complete(context.Background(), Request{Role: "codegen", Messages: []Message{{Role: RoleUser, Content: "x"}}})
	var pe *ProtocolError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "offers none") || !strings.Contains(err.Error(), "read_file") {
		t.Errorf("error %v, want a *ProtocolError naming the tool", err)
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func newToolCommand(t *testing.T, version int, script string, args ...string) Provider {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("testdata", "command", script))
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(Config{Type: TypeCommand, Name: "local", Command: append([]string{"/bin/sh", path}, args...), CommandProtocol: version},
		env(), WithClock(func() time.Time { return fixedNow }))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCommandProtocolV2(t *testing.T) {
	reqFile := filepath.Join(t.TempDir(), "request.json")
	p := newToolCommand(t, CommandProtocolV2, "tools.sh", reqFile)
	if !SupportsTools(p) {
		t.Fatal("a version 2 command does not report tool support")
	}
	resp, err := p.Complete(context.Background(), Request{Role: "codegen", Messages: toolConversation(), Tools: readTools, CacheKey: "task-7", ReasoningEffort: "high", MaxTokens: 500})
	if err != nil {
		t.Fatal(err)
	}
	want := []ToolCall{
		{ID: "call_a", Name: "read_file", Arguments: json.RawMessage(`{"path":"calc.go","limit":20}`)},
		{ID: "call_1", Name: "search", Arguments: json.RawMessage(`{"pattern":"Add"}`)},
	}
	if !reflect.DeepEqual(resp.ToolCalls, want) {
		t.Errorf("tool calls %s, want %s", jsonOf(resp.ToolCalls), jsonOf(want))
	}
	if resp.Text != "Reading first." || resp.StopReason != "tool_calls" || resp.Usage.CachedInputTokens != 800 {
		t.Errorf("response %+v", resp)
	}
	data, err := os.ReadFile(reqFile)
	if err != nil {
		t.Fatal(err)
	}
	// The request in OpenAI's shapes, exactly.
	wantReq := `{"version":2,"role":"codegen","model":"","messages":[` +
		`{"role":"system","content":"You edit code.","cache_breakpoint":true},` +
		`{"role":"user","content":"Fix Add in calc.go."},` +
		`{"role":"assistant","content":"Reading.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"calc.go\"}"}}]},` +
		`{"role":"tool","content":"1\tpackage calc","tool_call_id":"call_1"},` +
		`{"role":"assistant","content":"","tool_calls":[{"id":"call_2","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"../etc/passwd\"}"}}]},` +
		`{"role":"tool","content":"path outside the repository","tool_call_id":"call_2","is_error":true}],` +
		`"tools":[{"type":"function","function":{"name":"read_file","description":"Read a tracked file.","parameters":{"type":"object","properties":{"path":{"type":"string"},"offset":{"type":"integer"},"limit":{"type":"integer"}},"required":["path"]}}},` +
		`{"type":"function","function":{"name":"search","description":"Search tracked files.","parameters":{"type":"object","properties":{"pattern":{"type":"string"}},"required":["pattern"]}}}],` +
		`"max_tokens":500,"cache_key":"task-7","reasoning_effort":"high"}`
	var gotReq, wantJSON any
	_ = json.Unmarshal(data, &gotReq)
	if err := json.Unmarshal([]byte(wantReq), &wantJSON); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotReq, wantJSON) {
		t.Errorf("request\n got %s\nwant %s", data, wantReq)
	}

	// Tool calls answering a request without tools are refused.
	_, err = p.Complete(context.Background(), Request{Role: "codegen", Messages: []Message{{Role: RoleUser, Content: "x"}}})
	var pe *ProtocolError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "offers no tools") {
		t.Errorf("error %v, want a *ProtocolError", err)
	}
}

func TestCommandProtocolV1RefusesTools(t *testing.T) {
	reqFile := filepath.Join(t.TempDir(), "request.json")
	p := newToolCommand(t, 0, "tools.sh", reqFile)
	if SupportsTools(p) {
		t.Error("a version 1 command reports tool support")
	}
	for _, req := range []Request{
		{Role: "codegen", Messages: []Message{{Role: RoleUser, Content: "x"}}, Tools: readTools},
		{Role: "codegen", Messages: toolConversation()},
	} {
		_, err := p.Complete(context.Background(), req)
		var ce *ConfigError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), "protocol version 1") {
			t.Errorf("error %v, want a *ConfigError about version 1", err)
		}
	}
	if _, err := os.Stat(reqFile); err == nil {
		t.Error("the command ran although the request was refused")
	}
	// A version 1 command's tool_calls field is ignored like any unknown
	// field: its text is the answer.
	resp, err := p.Complete(context.Background(), Request{Role: "codegen", Messages: []Message{{Role: RoleUser, Content: "x"}}})
	if err != nil || resp.Text != "Reading first." || len(resp.ToolCalls) != 0 {
		t.Errorf("v1 answer %+v, %v", resp, err)
	}
	data, _ := os.ReadFile(reqFile)
	if !strings.HasPrefix(string(data), `{"version":1,`) || strings.Contains(string(data), "cache_breakpoint") {
		t.Errorf("v1 request %s", data)
	}
	if _, err := New(Config{Type: TypeCommand, Command: []string{"x"}, CommandProtocol: 3}, env()); err == nil {
		t.Error("protocol 3 accepted")
	}
}

func TestDecodeCommandToolCalls(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []ToolCall
		wantErr  string
	}{
		{"string arguments", `{"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{\"x\": 1}"}}]}`,
			[]ToolCall{{ID: "a", Name: "f", Arguments: json.RawMessage(`{"x":1}`)}}, ""},
		{"object arguments, default id", `{"tool_calls":[{"function":{"name":"f","arguments":{"x":[1, 2]}}}]}`,
			[]ToolCall{{ID: "call_0", Name: "f", Arguments: json.RawMessage(`{"x":[1,2]}`)}}, ""},
		{"empty string arguments", `{"tool_calls":[{"function":{"name":"f","arguments":""}}]}`,
			[]ToolCall{{ID: "call_0", Name: "f", Arguments: json.RawMessage(`{}`)}}, ""},
		{"no function", `{"tool_calls":[{"id":"a"}]}`, nil, "function.name"},
		{"other type", `{"tool_calls":[{"type":"web","function":{"name":"f"}}]}`, nil, `expected "function"`},
		{"arguments not an object", `{"tool_calls":[{"function":{"name":"f","arguments":"[1]"}}]}`, nil, "expected a JSON object"},
		{"arguments not JSON", `{"tool_calls":[{"function":{"name":"f","arguments":"{x"}}]}`, nil, "not JSON"},
		{"duplicate key in string arguments", `{"tool_calls":[{"function":{"name":"f","arguments":"{\"path\":\"a\",\"PATH\":\"b\"}"}}]}`, nil, "arguments"},
		{"duplicate ids", `{"tool_calls":[{"id":"a","function":{"name":"f"}},{"id":"a","function":{"name":"g"}}]}`, nil, "used twice"},
		{"not a list", `{"tool_calls":{"id":"a"}}`, nil, "not a valid"},
		{"nothing", `{"tool_calls":[]}`, nil, "none of"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeCommandResponse([]byte(tc.in), CommandProtocolV2)
			if wantError(t, err, tc.wantErr) {
				return
			}
			if !reflect.DeepEqual(got.ToolCalls, tc.want) || got.StopReason != "tool_calls" {
				t.Errorf("got %s (%q), want %s", jsonOf(got.ToolCalls), got.StopReason, jsonOf(tc.want))
			}
		})
	}
}

// TestScriptWithoutToolCallsSpeaksNone: a script of answers only stands
// for a model without tool calling.
func TestScriptWithoutToolCallsSpeaksNone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "answers.json")
	if err := os.WriteFile(path, []byte(`{"responses":[{"role":"codegen","json":{"status":"completed"}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := New(Config{Type: TypeScript, ScriptFile: path}, env())
	if err != nil {
		t.Fatal(err)
	}
	if SupportsTools(p) {
		t.Fatal("a script without tool calls reports tool support")
	}
}
