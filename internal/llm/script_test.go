package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

const sessionScript = "testdata/script/session.json"

func newTestScript(t *testing.T, stateFile string) Provider {
	t.Helper()
	p, err := New(Config{Type: TypeScript, ScriptFile: sessionScript, ScriptStateFile: stateFile}, env())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// call asks p for role's next answer; it returns the text or the error's
// kind for comparison.
func call(t *testing.T, p Provider, role string) string {
	t.Helper()
	resp, err := p.Complete(context.Background(), Request{Role: role, Messages: []Message{{Role: RoleUser, Content: "go"}}})
	var ex *ScriptExhaustedError
	switch {
	case errors.As(err, &ex):
		return fmt.Sprintf("exhausted(%s,%d)", ex.Role, ex.Used)
	case err != nil:
		t.Fatal(err)
	}
	if resp.Provider != "script" || resp.Model != "script" {
		t.Errorf("response %+v", resp)
	}
	return resp.Text
}

func TestScriptReplay(t *testing.T) {
	const (
		draft    = "First draft: which HTTP client does the fetcher use?"
		review   = `{"ok":true,"severity":"info","suggestions":["name the retry limit"]}`
		plan     = `{"id":"0007-add-retry","title":"Add retry","brief":"Retry failed fetches"}`
		blocking = `{"ok":false,"severity":"blocking","blocking_issues":["no cap on retries"]}`
	)
	for _, tc := range []struct {
		name  string
		calls []string // role=>want pairs, in call order
	}{
		{"one role in order then exhausted", []string{
			"planner", draft, "planner", plan, "planner", "exhausted(planner,2)",
		}},
		{"persona takes generic then its own entry", []string{
			"plan_reviewer:risk", review, "plan_reviewer:risk", blocking, "plan_reviewer:risk", "exhausted(plan_reviewer:risk,2)",
		}},
		{"personas have their own cursors", []string{
			"plan_reviewer:scope", review, "plan_reviewer:risk", review, "plan_reviewer:scope", "exhausted(plan_reviewer:scope,1)", "plan_reviewer:risk", blocking,
		}},
		{"bare role does not take a persona's entry", []string{
			"plan_reviewer", review, "plan_reviewer", "exhausted(plan_reviewer,1)",
		}},
		{"roles interleave without disturbing each other", []string{
			"codegen", "done", "planner", draft, "plan_reviewer:risk", review, "planner", plan, "codegen", "exhausted(codegen,1)",
		}},
		{"unknown role", []string{"accept_advisor", "exhausted(accept_advisor,0)"}},
		{"prefix needs the colon", []string{"plannerX", "exhausted(plannerX,0)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newTestScript(t, "")
			for i := 0; i < len(tc.calls); i += 2 {
				if got := call(t, p, tc.calls[i]); got != tc.calls[i+1] {
					t.Errorf("call %d (%s) = %q, want %q", i/2+1, tc.calls[i], got, tc.calls[i+1])
				}
			}
		})
	}
}

func TestScriptNewProviderStartsOver(t *testing.T) {
	first := call(t, newTestScript(t, ""), "planner")
	if again := call(t, newTestScript(t, ""), "planner"); again != first {
		t.Errorf("a new provider without state file gave %q, want the first answer %q", again, first)
	}
}

func TestScriptStateFileContinues(t *testing.T) {
	state := filepath.Join(t.TempDir(), "script-state.json")
	if got := call(t, newTestScript(t, state), "planner"); !strings.HasPrefix(got, "First draft") {
		t.Fatalf("first answer %q", got)
	}
	// A second process (a new provider) continues where the first stopped.
	p2 := newTestScript(t, state)
	if got := call(t, p2, "planner"); !strings.Contains(got, "0007-add-retry") {
		t.Errorf("second process got %q, want the second planner entry", got)
	}
	if got := call(t, p2, "planner"); got != "exhausted(planner,2)" {
		t.Errorf("third call %q", got)
	}
	data, err := os.ReadFile(state)
	if err != nil {
		t.Fatal(err)
	}
	var st scriptState
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	if st.Version != 1 || st.Cursors["planner"] != 3 {
		t.Errorf("state %s", data)
	}
	entries, _ := os.ReadDir(filepath.Dir(state))
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

func TestScriptBadStateFile(t *testing.T) {
	for _, content := range []string{"{not json", `{"version": 9, "cursors": {}}`} {
		state := filepath.Join(t.TempDir(), "state.json")
		if err := os.WriteFile(state, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := newTestScript(t, state).Complete(context.Background(), Request{Role: "planner"})
		if err == nil || !strings.Contains(err.Error(), "delete it to start the script over") {
			t.Errorf("state %q: error %v, want advice to delete the state", content, err)
		}
	}
}

func TestScriptConcurrentRoles(t *testing.T) {
	for _, state := range []string{"", filepath.Join(t.TempDir(), "state.json")} {
		p := newTestScript(t, state)
		roles := []string{"plan_reviewer:a", "plan_reviewer:b", "plan_reviewer:c", "plan_reviewer:d"}
		got := make([]string, len(roles))
		var wg sync.WaitGroup
		for i, role := range roles {
			wg.Go(func() {
				resp, err := p.Complete(context.Background(), Request{Role: role})
				if err != nil {
					t.Error(err)
					return
				}
				got[i] = resp.Text
			})
		}
		wg.Wait()
		for i, text := range got {
			if !strings.Contains(text, "name the retry limit") {
				t.Errorf("state %q: %s got %q, want the generic review", state, roles[i], text)
			}
		}
	}
}

func TestScriptCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := newTestScript(t, "").Complete(ctx, Request{Role: "planner"})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
}

func TestScriptConfigErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"responses": [{"role": "planner"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []Config{
		{Type: TypeScript},
		{Type: TypeScript, ScriptFile: filepath.Join(dir, "missing.json")},
		{Type: TypeScript, ScriptFile: bad},
	} {
		_, err := New(cfg, env())
		var ce *ConfigError
		if !errors.As(err, &ce) {
			t.Errorf("%+v: error %v, want *ConfigError", cfg, err)
		}
	}
}

func TestDecodeScript(t *testing.T) {
	se := func(role, text string) scriptEntry { return scriptEntry{Role: role, Text: text, StopReason: "stop"} }
	for _, tc := range []struct {
		name    string
		in      string
		want    []scriptEntry
		wantErr string
	}{
		{"text and json", `{"responses":[{"role":"a","text":"x"},{"role":"b","json":{"k": [1, 2]}}]}`,
			[]scriptEntry{se("a", "x"), se("b", `{"k":[1,2]}`)}, ""},
		{"empty text allowed", `{"responses":[{"role":"a","text":""}]}`, []scriptEntry{se("a", "")}, ""},
		{"json scalar", `{"responses":[{"role":"a","json":"s"}]}`, []scriptEntry{se("a", `"s"`)}, ""},
		{"tool calls with default ids and arguments", `{"responses":[{"role":"codegen","text":"look","tool_calls":[{"name":"read_file","arguments":{"path": "a.go"}},{"name":"run_tests"}]}]}`,
			[]scriptEntry{{Role: "codegen", Text: "look", StopReason: "tool_calls", ToolCalls: []ToolCall{
				{ID: "script_0_0", Name: "read_file", Arguments: json.RawMessage(`{"path":"a.go"}`)},
				{ID: "script_0_1", Name: "run_tests", Arguments: json.RawMessage(`{}`)}}}}, ""},
		{"tool calls alone, own id, usage and stop reason", `{"responses":[{"role":"codegen","tool_calls":[{"id":"c1","name":"finish","arguments":{"status":"completed"}}],"usage":{"input_tokens":10,"output_tokens":2,"cached_input_tokens":8},"stop_reason":"tool_use"}]}`,
			[]scriptEntry{{Role: "codegen", StopReason: "tool_use", Usage: Usage{InputTokens: 10, OutputTokens: 2, CachedInputTokens: 8},
				ToolCalls: []ToolCall{{ID: "c1", Name: "finish", Arguments: json.RawMessage(`{"status":"completed"}`)}}}}, ""},
		{"truncated answer", `{"responses":[{"role":"codegen","text":"{\"sta","stop_reason":"length"}]}`,
			[]scriptEntry{{Role: "codegen", Text: `{"sta`, StopReason: "length"}}, ""},
		{"no responses", `{}`, nil, "missing or empty"},
		{"empty list", `{"responses":[]}`, nil, "missing or empty"},
		{"blank role", `{"responses":[{"role":" ","text":"x"}]}`, nil, "role"},
		{"both", `{"responses":[{"role":"a","text":"x","json":1}]}`, nil, "both"},
		{"neither", `{"responses":[{"role":"a"}]}`, nil, "needs"},
		{"typo field", `{"responses":[{"role":"a","txt":"x"}]}`, nil, "unknown field"},
		{"typo in a tool call", `{"responses":[{"role":"a","tool_calls":[{"name":"x","args":{}}]}]}`, nil, "unknown field"},
		{"tool call without name", `{"responses":[{"role":"a","tool_calls":[{"arguments":{}}]}]}`, nil, "tool_calls[0]: \"name\""},
		{"arguments not an object", `{"responses":[{"role":"a","tool_calls":[{"name":"x","arguments":[1]}]}]}`, nil, "responses[0].tool_calls[0].arguments: expected a JSON object"},
		{"arguments as a string", `{"responses":[{"role":"a","tool_calls":[{"name":"x","arguments":"{}"}]}]}`, nil, "expected a JSON object"},
		{"duplicate ids", `{"responses":[{"role":"a","tool_calls":[{"id":"k","name":"x"}]},{"role":"a","tool_calls":[{"id":"k","name":"y"}]}]}`, nil, "already used by responses[0]"},
		{"default id taken", `{"responses":[{"role":"a","tool_calls":[{"id":"script_1_0","name":"x"}]},{"role":"a","tool_calls":[{"name":"y"}]}]}`, nil, "already used"},
		{"negative usage", `{"responses":[{"role":"a","text":"x","usage":{"output_tokens":-1}}]}`, nil, "negative"},
		{"blank stop reason", `{"responses":[{"role":"a","text":"x","stop_reason":""}]}`, nil, "stop_reason"},
		{"trailing data", `{"responses":[{"role":"a","text":"x"}]} {}`, nil, "data after"},
		{"not an object", `[1]`, nil, "not a script"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeScript([]byte(tc.in))
			if wantError(t, err, tc.wantErr) {
				return
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
