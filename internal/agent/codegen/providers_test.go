package codegen

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/orchdev/orch/internal/agent/agenttest"
	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/phasetest"
)

// toolLog records the tool calls a runtime's loop ran.
type toolLog struct {
	mu    sync.Mutex
	calls []string // name, with " refused" when refused
}

func (l *toolLog) hear(role, name string, _ json.RawMessage, refused bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if refused {
		name += " refused"
	}
	l.calls = append(l.calls, name)
}

// TestScriptReplaysToolCalls: a script provider whose entries replay tool
// calls drives codegen's tool loop end to end (the offline demo's way):
// the model reads, is refused outside the file plan, edits and writes
// inside it, and finishes; the staged files are the edited ones.
func TestScriptReplaysToolCalls(t *testing.T) {
	f := agenttest.NewCodeEnv(t, nil)
	call := func(name string, args any) map[string]any { return map[string]any{"name": name, "arguments": args} }
	entry := func(calls ...map[string]any) map[string]any {
		return map[string]any{"role": "codegen", "tool_calls": calls}
	}
	script := map[string]any{"responses": []any{
		entry(call("read_file", map[string]any{"path": "calc.go"})),
		entry(call("edit_file", map[string]any{"path": "README.md", "old_string": "calc", "new_string": "sums"})),
		entry(call("edit_file", map[string]any{"path": "calc.go", "old_string": "a - b", "new_string": "a + b"}),
			call("write_file", map[string]any{"path": "calc_test.go", "content": agenttest.CalcTest})),
		entry(call("finish", map[string]any{"status": "completed", "notes": "fixed the operator"})),
	}}
	path := filepath.Join(t.TempDir(), "script.json")
	gittest.Write(t, filepath.Dir(path), filepath.Base(path), agenttest.JSONOf(t, script))
	rt := f.Runtime(config.Provider{Type: "script", Script: path})
	var log toolLog
	rt.OnTool = log.hear
	res, err := phasetest.Run(context.Background(), f.O, f.ID, Worker{RT: rt})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(log.calls, ", "); got != "read_file, edit_file refused, edit_file, write_file" {
		t.Errorf("tool calls: %s", got)
	}
	if f.Read("code/files/calc.go") != agenttest.CalcFixed || f.Read("code/files/calc_test.go") != agenttest.CalcTest {
		t.Errorf("staged calc.go %q, calc_test.go %q", f.Read("code/files/calc.go"), f.Read("code/files/calc_test.go"))
	}
	if res.Record.Status != "completed" || res.Record.Notes != "fixed the operator" || f.Exists("code/files/README.md") {
		t.Errorf("record %+v", res.Record)
	}
	if mc := f.ModelCalls(); len(mc) != 4 || fmt.Sprint(mc[3]["turn"]) != "4" {
		t.Errorf("model_call events %v", mc)
	}
}

// TestCommandProtocolV2Loop: a command provider speaking protocol version
// 2 (a real executable, testdata/replay-v2.sh) gets the tools and, turn by
// turn, the results of the calls it asked for, in OpenAI's message shapes;
// its edits are staged.
func TestCommandProtocolV2Loop(t *testing.T) {
	f := agenttest.NewCodeEnv(t, nil)
	dir := t.TempDir()
	fn := func(id, name string, args any) map[string]any {
		return map[string]any{"id": id, "type": "function", "function": map[string]any{"name": name, "arguments": agenttest.JSONOf(t, args)}}
	}
	for i, answer := range []any{
		map[string]any{"text": "Reading first.", "tool_calls": []any{fn("c1", "read_file", map[string]any{"path": "calc.go"})}},
		map[string]any{"tool_calls": []any{fn("c2", "edit_file", map[string]any{"path": "calc.go", "old_string": "a - b", "new_string": "a + b"})}},
		map[string]any{"tool_calls": []any{fn("c3", "finish", map[string]any{"status": "completed"})}},
	} {
		gittest.Write(t, dir, "answer-"+string(rune('1'+i))+".json", agenttest.JSONOf(t, answer))
	}
	script, err := filepath.Abs(filepath.Join("testdata", "replay-v2.sh"))
	if err != nil {
		t.Fatal(err)
	}
	rt := f.Runtime(config.Provider{Type: "command", Command: config.Command{"/bin/sh", script, dir}, Protocol: 2})
	if _, err := phasetest.Run(context.Background(), f.O, f.ID, Worker{RT: rt}); err != nil {
		t.Fatal(err)
	}
	if f.Read("code/files/calc.go") != agenttest.CalcFixed {
		t.Errorf("staged calc.go %q", f.Read("code/files/calc.go"))
	}
	var second struct {
		Version  int `json:"version"`
		Messages []struct {
			Role       string `json:"role"`
			Content    string `json:"content"`
			ToolCallID string `json:"tool_call_id"`
			ToolCalls  []struct {
				ID string `json:"id"`
			} `json:"tool_calls"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "request-2.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &second); err != nil {
		t.Fatal(err)
	}
	var tools []string
	for _, tl := range second.Tools {
		tools = append(tools, tl.Function.Name)
	}
	if second.Version != 2 || !strings.Contains(strings.Join(tools, ","), "edit_file") || !strings.Contains(strings.Join(tools, ","), "finish") {
		t.Errorf("version %d, tools %v", second.Version, tools)
	}
	n := len(second.Messages)
	if n < 2 {
		t.Fatalf("request 2 has %d messages", n)
	}
	asked, answered := second.Messages[n-2], second.Messages[n-1]
	if asked.Role != "assistant" || asked.Content != "Reading first." || len(asked.ToolCalls) != 1 || asked.ToolCalls[0].ID != "c1" {
		t.Errorf("the assistant turn came back as %+v", asked)
	}
	if answered.Role != "tool" || answered.ToolCallID != "c1" || !strings.Contains(answered.Content, "func Add(a, b int) int { return a - b }") {
		t.Errorf("the tool result came back as %+v", answered)
	}
	if _, err := os.Stat(filepath.Join(dir, "request-4.json")); err == nil {
		t.Error("a fourth request was made after finish")
	}
}
