package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/agent/agenttest"
	"github.com/orchdev/orch/internal/agent/codegen"
	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/llm"
	"github.com/orchdev/orch/internal/llm/llmtest"
	"github.com/orchdev/orch/internal/phasetest"
)

// cutTurn is one answer of the continuation scenario: a tool call (args
// as sent, possibly cut JSON) or text; cut marks it cut at the output
// limit after out output tokens.
type cutTurn struct {
	tool string
	args string
	text string
	cut  bool
	out  int
}

// cutScenario: codegen's edit is cut mid-call, then made whole; the test
// file is written; the answer is given as text, cut after its first half
// and continued.
var cutScenario = []cutTurn{
	{tool: "edit_file", args: `{"path":"calc.go","old_string":"a - b","new_str`, cut: true, out: 300},
	{tool: "edit_file", args: `{"path":"calc.go","old_string":"a - b","new_string":"a + b"}`, out: 40},
	{tool: "write_file", args: string(mustJSON(map[string]any{"path": "calc_test.go", "content": agenttest.CalcTest})), out: 40},
	{text: `{"status":`, cut: true, out: 200},
	{text: `"completed"}`, out: 10},
}

func mustJSON(v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return data
}

// openAIAnswer writes turn in OpenAI's chat completions format.
func openAIAnswer(w http.ResponseWriter, n int, turn cutTurn) {
	msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil}
	finish := "stop"
	if turn.tool != "" {
		msg["tool_calls"] = []any{map[string]any{"id": fmt.Sprintf("call_%d", n), "type": "function", "function": map[string]any{"name": turn.tool, "arguments": turn.args}}}
		finish = "tool_calls"
	} else {
		msg["content"] = turn.text
	}
	if turn.cut {
		finish = "length"
	}
	llmtest.JSON(w, http.StatusOK, map[string]any{
		"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion", "created": 1764064806, "model": "gpt-test",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   map[string]any{"prompt_tokens": 100, "completion_tokens": turn.out, "total_tokens": 100 + turn.out},
	})
}

// anthropicAnswer writes turn in Anthropic's messages format; a cut tool
// call's input is what its cut JSON held before the cut (here the path).
func anthropicAnswer(w http.ResponseWriter, n int, turn cutTurn) {
	var block map[string]any
	stop := "end_turn"
	if turn.tool != "" {
		var input map[string]any
		if json.Unmarshal([]byte(turn.args), &input) != nil {
			input = map[string]any{"path": "calc.go"}
		}
		block = map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%d", n), "name": turn.tool, "input": input}
		stop = "tool_use"
	} else {
		block = map[string]any{"type": "text", "text": turn.text}
	}
	if turn.cut {
		stop = "max_tokens"
	}
	llmtest.JSON(w, http.StatusOK, map[string]any{
		"id": fmt.Sprintf("msg_%d", n), "type": "message", "role": "assistant", "model": "claude-test",
		"content": []any{block}, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 100, "output_tokens": turn.out},
	})
}

// maxTokens is the output limit a recorded request carries.
func maxTokens(body map[string]any) int {
	for _, k := range []string{"max_completion_tokens", "max_tokens"} {
		if v, ok := body[k].(float64); ok {
			return int(v)
		}
	}
	return 0
}

// An answer cut at the output limit is continued within the role's
// output limit, on both vendors' wire formats: a cut tool call is not run
// and the model is asked to repeat it smaller (the request shows the cut
// arguments), a cut text answer goes back as the model's turn and the
// model continues it; the answer used is the cut part and its
// continuation together, and each continuation may use only what the
// cut parts left of the role's limit.
func TestCutAnswerContinued(t *testing.T) {
	for _, vendor := range []string{"openai", "anthropic"} {
		t.Run(vendor, func(t *testing.T) {
			f := agenttest.NewCodeEnv(t, nil)
			srv := llmtest.NewServer(t, func(w http.ResponseWriter, r *http.Request, req llmtest.Request) {
				turn := cutScenario[min(req.N-1, len(cutScenario)-1)]
				if vendor == "openai" {
					openAIAnswer(w, req.N, turn)
				} else {
					anthropicAnswer(w, req.N, turn)
				}
			})
			pc := config.Provider{Type: "anthropic", BaseURL: srv.URL, Model: "claude-test", APIKeyEnv: agenttest.KeyEnv, MaxRetries: -1}
			if vendor == "openai" {
				pc = config.Provider{Type: "openai", BaseURL: srv.URL + "/v1", Model: "gpt-test", APIKeyEnv: agenttest.KeyEnv, MaxRetries: -1}
			}
			rt := f.Runtime(pc)
			rt.Config.Tools.MaxTestRuns = 0
			rt.Config.MaxOutputTokens = map[string]int{"codegen": 1000}
			rt.Config.Prices = map[string]config.Price{pc.Model: {Input: 1, Output: 1}}
			if _, err := phasetest.Run(context.Background(), f.O, f.ID, codegen.Worker{RT: rt}); err != nil {
				t.Fatal(err)
			}
			if got := f.Read("code/files/calc.go"); got != agenttest.CalcFixed {
				t.Errorf("calc.go after the repeated edit:\n%s", got)
			}
			reqs := srv.Requests()
			if len(reqs) != len(cutScenario) {
				t.Fatalf("%d requests, want %d", len(reqs), len(cutScenario))
			}
			// The request after the cut call names it, shows its cut
			// arguments (OpenAI sends them as they came) and asks for
			// it again; the cut call was not answered as a tool result.
			second := string(reqs[1].Raw)
			if !strings.Contains(second, "Your call of edit_file was cut off") || !strings.Contains(second, "calc.go") {
				t.Errorf("request 2 does not ask to repeat the cut call:\n%s", second)
			}
			if vendor == "openai" && !strings.Contains(second, `new_str`) {
				t.Errorf("request 2 does not carry the cut arguments:\n%s", second)
			}
			if strings.Contains(second, "call_1") || strings.Contains(second, "toolu_1") {
				t.Errorf("request 2 sends the cut call back as a call:\n%s", second)
			}
			// The continuation carries the cut text as the model's turn
			// and the request to continue.
			last := string(reqs[4].Raw)
			if !strings.Contains(last, `{\"status\":`) || !strings.Contains(last, "Continue it exactly where it stopped") {
				t.Errorf("the continuation request lacks the cut answer:\n%s", last)
			}
			// Output limits: the role's whole limit, then what the cut
			// parts left of it.
			want := []int{1000, 700, 1000, 1000, 800}
			for i, r := range reqs {
				if got := maxTokens(r.Body); got != want[i] {
					t.Errorf("request %d: output limit %d, want %d", i+1, got, want[i])
				}
			}
		})
	}
}

// Only when the cut parts spend the role's output limit does the answer
// fail as before, naming the limit; a cut answer whose usage the server
// does not report counts as having used all it was allowed.
func TestCutAnswerBudgetSpent(t *testing.T) {
	for _, tc := range []struct {
		name     string
		out      int // output tokens each cut answer reports
		requests int
		lastMax  int // the last request's output limit
	}{
		{"two cuts of 600", 600, 2, 400},
		{"usage not reported", 0, 1, 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := agenttest.NewCodeEnv(t, nil)
			srv := llmtest.NewServer(t, func(w http.ResponseWriter, r *http.Request, req llmtest.Request) {
				openAIAnswer(w, req.N, cutTurn{text: "{\"status\":", cut: true, out: tc.out})
			})
			rt := f.Runtime(config.Provider{Type: "openai", BaseURL: srv.URL + "/v1", Model: "gpt-test", APIKeyEnv: agenttest.KeyEnv, MaxRetries: -1})
			rt.Config.MaxOutputTokens = map[string]int{"codegen": 1000}
			rt.Config.Prices = map[string]config.Price{"gpt-test": {Input: 1, Output: 1}}
			_, err := phasetest.Run(context.Background(), f.O, f.ID, codegen.Worker{RT: rt})
			var cut *llm.TruncatedError
			if !errors.As(err, &cut) || cut.MaxTokens != 1000 {
				t.Fatalf("err = %v, want the cut answer naming the role's limit of 1000", err)
			}
			reqs := srv.Requests()
			if len(reqs) != tc.requests || maxTokens(reqs[len(reqs)-1].Body) != tc.lastMax {
				t.Fatalf("%d requests, the last with limit %d; want %d, %d", len(reqs), maxTokens(reqs[len(reqs)-1].Body), tc.requests, tc.lastMax)
			}
		})
	}
}
