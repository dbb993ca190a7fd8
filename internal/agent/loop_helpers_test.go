package agent

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/orchdev/orch/internal/llm"
)

// toolModel is a model in a test: it speaks tool calling (or not, with
// noTools) and answers each request with turn(n, req); every request is
// recorded.
type toolModel struct {
	t       *testing.T
	noTools bool
	turn    func(n int, req llm.Request) (llm.Response, error)

	mu   sync.Mutex
	reqs []llm.Request
}

func (m *toolModel) Name() string        { return "default" }
func (m *toolModel) SupportsTools() bool { return !m.noTools }

func (m *toolModel) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	m.mu.Lock()
	m.reqs = append(m.reqs, req)
	n := len(m.reqs)
	m.mu.Unlock()
	if len(req.Tools) > 0 && m.noTools {
		return llm.Response{}, errors.New("tools sent to a provider that does not speak them")
	}
	resp, err := m.turn(n, req)
	if resp.Provider == "" {
		resp.Provider = "default"
	}
	if resp.Model == "" {
		resp.Model = "test-model"
	}
	if resp.StopReason == "" {
		resp.StopReason = "stop"
	}
	if resp.Usage.InputTokens == 0 {
		resp.Usage = llm.Usage{InputTokens: int64(estimateTokens(req)), OutputTokens: 20}
	}
	return resp, err
}

func (m *toolModel) requests() []llm.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]llm.Request(nil), m.reqs...)
}

// use makes m the provider of every role of rt.
func (m *toolModel) use(rt *Runtime) *Runtime {
	rt.providers["default\x00"] = resolved{p: m, cfg: llm.Config{Type: "test", Name: "default", Model: "test-model"}}
	return rt
}

// call is a tool call with arguments v.
func call(t *testing.T, name string, v any) llm.ToolCall {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return llm.ToolCall{Name: name, Arguments: data}
}

// calls is a response asking for the tool calls cs.
func calls(cs ...llm.ToolCall) llm.Response {
	return llm.Response{ToolCalls: cs, StopReason: "tool_calls"}
}

// scripted answers request n with turns[n-1] (the last one again after
// the end).
func scripted(turns ...llm.Response) func(int, llm.Request) (llm.Response, error) {
	return func(n int, _ llm.Request) (llm.Response, error) {
		if n > len(turns) {
			n = len(turns)
		}
		return turns[n-1], nil
	}
}

// toolResults returns the tool messages of a request, in order.
func toolResults(req llm.Request) []llm.Message {
	var out []llm.Message
	for _, m := range req.Messages {
		if m.Role == llm.RoleTool {
			out = append(out, m)
		}
	}
	return out
}
