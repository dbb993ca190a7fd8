package agenttest

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/llm"
)

// ToolModel is a model in a test: it speaks tool calling (or not, with
// noTools) and answers each request with turn(n, req); every request is
// recorded.
type ToolModel struct {
	T       *testing.T
	NoTools bool
	Turn    func(n int, req llm.Request) (llm.Response, error)

	mu   sync.Mutex
	reqs []llm.Request
}

func (m *ToolModel) Name() string        { return "default" }
func (m *ToolModel) SupportsTools() bool { return !m.NoTools }

func (m *ToolModel) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	m.mu.Lock()
	m.reqs = append(m.reqs, req)
	n := len(m.reqs)
	m.mu.Unlock()
	if len(req.Tools) > 0 && m.NoTools {
		return llm.Response{}, errors.New("tools sent to a provider that does not speak them")
	}
	resp, err := m.Turn(n, req)
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
		resp.Usage = llm.Usage{InputTokens: int64(agent.EstimateTokens(req)), OutputTokens: 20}
	}
	return resp, err
}

func (m *ToolModel) Requests() []llm.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]llm.Request(nil), m.reqs...)
}

// Use makes m the provider of every role of rt.
func (m *ToolModel) Use(rt *agent.Runtime) *agent.Runtime {
	rt.SetProvider("default", m, llm.Config{Type: "test", Name: "default", Model: "test-model"})
	return rt
}

// ToolCall is a tool ToolCall with arguments v.
func ToolCall(t *testing.T, name string, v any) llm.ToolCall {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return llm.ToolCall{Name: name, Arguments: data}
}

// Calls is a response asking for the tool Calls cs.
func Calls(cs ...llm.ToolCall) llm.Response {
	return llm.Response{ToolCalls: cs, StopReason: "tool_calls"}
}

// Scripted answers request n with turns[n-1] (the last one again after
// the end).
func Scripted(turns ...llm.Response) func(int, llm.Request) (llm.Response, error) {
	return func(n int, _ llm.Request) (llm.Response, error) {
		if n > len(turns) {
			n = len(turns)
		}
		return turns[n-1], nil
	}
}

// ToolResults returns the tool messages of a request, in order.
func ToolResults(req llm.Request) []llm.Message {
	var out []llm.Message
	for _, m := range req.Messages {
		if m.Role == llm.RoleTool {
			out = append(out, m)
		}
	}
	return out
}
