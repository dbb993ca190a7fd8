package agent_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/agent/agenttest"
	"github.com/orchdev/orch/internal/agent/codegen"
	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/llm/llmtest"
	"github.com/orchdev/orch/internal/phasetest"
)

// cacheMarks lists where a recorded Anthropic request has cache_control:
// "tools", "system[i]" or "messages[i].content[j]".
func cacheMarks(body map[string]any) []string {
	var out []string
	has := func(b any) bool {
		m, _ := b.(map[string]any)
		_, ok := m["cache_control"]
		return ok
	}
	tools, _ := body["tools"].([]any)
	for _, t := range tools {
		if has(t) {
			out = append(out, "tools")
		}
	}
	sys, _ := body["system"].([]any)
	for i, s := range sys {
		if has(s) {
			out = append(out, fmt.Sprintf("system[%d]", i))
		}
	}
	msgs, _ := body["messages"].([]any)
	for i, m := range msgs {
		blocks, _ := m.(map[string]any)["content"].([]any)
		for j, b := range blocks {
			if has(b) {
				out = append(out, fmt.Sprintf("messages[%d].content[%d]", i, j))
			}
		}
	}
	return out
}

// In an Anthropic tool loop of four turns each request's last cache
// breakpoint sits on the previous turn's last message (the newest tool
// result), and the stable prefix keeps its own: turn n reads turns
// 1…n-1 from the cache instead of paying for them again.
func TestAnthropicBreakpointMoves(t *testing.T) {
	f := agenttest.NewCodeEnv(t, nil)
	type step struct {
		name  string
		input map[string]any
	}
	steps := []step{
		{"search", map[string]any{"pattern": "func Add"}},
		{"read_file", map[string]any{"path": "calc.go"}},
		{"edit_file", map[string]any{"path": "calc.go", "old_string": "a - b", "new_string": "a + b"}},
		{"write_file", map[string]any{"path": "calc_test.go", "content": agenttest.CalcTest}},
		{"finish", map[string]any{"status": "completed"}},
	}
	srv := llmtest.NewServer(t, func(w http.ResponseWriter, r *http.Request, req llmtest.Request) {
		s := steps[min(req.N-1, len(steps)-1)]
		llmtest.JSON(w, http.StatusOK, map[string]any{
			"id": fmt.Sprintf("msg_%d", req.N), "type": "message", "role": "assistant", "model": "claude-test",
			"content":     []any{map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%d", req.N), "name": s.name, "input": s.input}},
			"stop_reason": "tool_use", "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": 50, "output_tokens": 20, "cache_read_input_tokens": 1000 * (req.N - 1), "cache_creation_input_tokens": 300},
		})
	})
	rt := f.Runtime(config.Provider{Type: "anthropic", BaseURL: srv.URL, Model: "claude-test", APIKeyEnv: agenttest.KeyEnv, MaxRetries: -1})
	rt.Config.Tools.MaxTestRuns = 0
	rt.Config.Prices = map[string]config.Price{"claude-test": {Input: 3, Output: 15, CachedInput: 0.3, CacheWrite: 3.75}}
	if _, err := phasetest.Run(context.Background(), f.O, f.ID, codegen.Worker{RT: rt}); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != len(steps) {
		t.Fatalf("%d requests, want %d", len(reqs), len(steps))
	}
	for n, r := range reqs {
		marks := cacheMarks(r.Body)
		msgs := r.Body["messages"].([]any)
		last := msgs[len(msgs)-1].(map[string]any)
		blocks := last["content"].([]any)
		want := fmt.Sprintf("messages[%d].content[%d]", len(msgs)-1, len(blocks)-1)
		if len(marks) == 0 || marks[len(marks)-1] != want || len(marks) > 4 {
			t.Errorf("request %d: cache_control at %v, want the last at %s (at most 4)", n+1, marks, want)
		}
		if n > 0 {
			// The previous turn's last message: the result of the
			// tool the previous answer called.
			b := blocks[len(blocks)-1].(map[string]any)
			if b["type"] != "tool_result" || b["tool_use_id"] != fmt.Sprintf("toolu_%d", n) {
				t.Errorf("request %d: the last breakpoint is on %v, want the result of toolu_%d", n+1, b, n)
			}
		}
		// The stable prefix (the task's data, the first user message)
		// keeps its breakpoint.
		if !strings.Contains(strings.Join(marks, " "), "messages[0].content[0]") {
			t.Errorf("request %d: the stable prefix lost its breakpoint: %v", n+1, marks)
		}
	}
	var read int64
	for _, c := range f.ModelCalls() {
		var v int64
		fmt.Sscan(fmt.Sprint(c["cached_tokens_in"]), &v)
		read += v
	}
	if read != 1000*(0+1+2+3+4) {
		t.Errorf("cache reads in the model_call events: %d", read)
	}
}
