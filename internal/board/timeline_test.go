package board

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/task"
)

// The timeline says each kind of event in words, with what matters.
func TestTimeline(t *testing.T) {
	num := func(s string) json.Number { return json.Number(s) }
	for _, tc := range []struct {
		kind   string
		data   map[string]any
		text   string
		detail []string
		class  string
	}{
		{"transition", map[string]any{"from": "review", "to": "test", "label": "review passes", "reason": "code review ok"}, "review → test", []string{"review passes", "code review ok"}, "transition"},
		{"override", map[string]any{"from": "codegen", "to": "test", "reason": "hotfix", "skipped_phases": []any{"review"}}, "override codegen → test", []string{"reason: hotfix", "skipped [review]"}, "override"},
		{"redo", map[string]any{"from": "done", "to": "accept", "reason": "again", "archived": "history/3-accept"}, "redo done → accept", []string{"again", "archived in history/3-accept"}, "redo"},
		{"model_call", map[string]any{"role": "codegen", "provider": "openai", "model": "gpt-x", "tokens_in": num("1200"), "tokens_out": num("40"), "latency_ms": num("900"), "cost_usd": num("0.0123"), "tool_calls": []any{"read_file"}}, "codegen: openai gpt-x", []string{"1200 in / 40 out tokens", "900 ms", "$0.01", "tools [read_file]"}, "model_call"},
		{"model_call", map[string]any{"role": "planner", "provider": "p", "model": "m", "error": "timeout"}, "planner: p m", []string{"error: timeout"}, "model_call bad"},
		{"phase_finished", map[string]any{"phase": "test", "status": "failed", "error": "suite crashed"}, "test finished: failed", []string{"suite crashed"}, "phase_finished bad"},
		{"phase_finished", map[string]any{"phase": "test", "status": "passed", "summary": map[string]any{"overall_pass": true, "summary": map[string]any{"passed": num("3")}}}, "test finished: passed", []string{"overall_pass=true", `summary={"passed":3`}, "phase_finished"},
		{"user_input", map[string]any{"question": "q1", "answer": "runes"}, "answered q1", []string{"runes"}, "user_input"},
		{"git_done", map[string]any{"op": "accept", "outcome": "committed", "commit": "abc123"}, "git accept: committed", []string{"abc123"}, "git_done"},
	} {
		t.Run(tc.kind+" "+tc.text, func(t *testing.T) {
			e := timeline([]task.Event{{Seq: 4, Kind: eventKind(tc.kind), Data: tc.data}})[0]
			if e.Text != tc.text || e.Class != tc.class || e.Seq != 4 {
				t.Errorf("got %q (%s), want %q (%s)", e.Text, e.Class, tc.text, tc.class)
			}
			for _, d := range tc.detail {
				if !strings.Contains(e.Detail, d) {
					t.Errorf("detail %q lacks %q", e.Detail, d)
				}
			}
		})
	}
}

func eventKind(k string) event.Kind { return event.Kind(k) }
