package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/agent/agenttest"
	"github.com/orchdev/orch/internal/agent/codegen"
	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/llm/llmtest"
	"github.com/orchdev/orch/internal/phasetest"
)

// chatServer is an OpenAI-compatible server (chat completions, the real
// wire format) that serves codegen for the calc task: with tools it edits
// calc.go, writes calc_test.go and finishes; without tools it answers the
// same change as one structured answer. refuse makes it refuse any request
// offering tools the way Ollama does for a model without tool support.
type chatServer struct {
	srv    *llmtest.Server
	refuse bool

	mu       sync.Mutex
	withTool []bool // per request: did it offer tools
}

func newChatServer(t *testing.T, refuse bool) *chatServer {
	c := &chatServer{refuse: refuse}
	c.srv = llmtest.NewServer(t, func(w http.ResponseWriter, r *http.Request, req llmtest.Request) {
		if req.Path != "/v1/chat/completions" {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		tools, _ := req.Body["tools"].([]any)
		c.mu.Lock()
		c.withTool = append(c.withTool, len(tools) > 0)
		c.mu.Unlock()
		if len(tools) > 0 && c.refuse {
			llmtest.JSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"message": "registry.ollama.ai/library/gemma2:2b does not support tools", "type": "api_error", "param": nil, "code": nil}})
			return
		}
		msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil}
		finish := "tool_calls"
		call := func(name string, args any) {
			data, _ := json.Marshal(args)
			msg["tool_calls"] = []any{map[string]any{"id": "call_" + name, "type": "function", "function": map[string]any{"name": name, "arguments": string(data)}}}
		}
		turn := strings.Count(string(req.Raw), `"role":"tool"`)
		switch {
		case len(tools) == 0:
			data, _ := json.Marshal(map[string]any{"status": "completed",
				"edits":   []any{map[string]any{"path": "calc.go", "old_string": "a - b", "new_string": "a + b"}},
				"files":   []any{map[string]any{"path": "calc_test.go", "content": agenttest.CalcTest}},
				"deletes": []any{}})
			msg["content"], finish = string(data), "stop"
		case turn == 0:
			call("edit_file", map[string]any{"path": "calc.go", "old_string": "a - b", "new_string": "a + b"})
		case turn == 1:
			call("write_file", map[string]any{"path": "calc_test.go", "content": agenttest.CalcTest})
		default:
			call("finish", map[string]any{"status": "completed"})
		}
		llmtest.JSON(w, http.StatusOK, map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "created": 1764064806, "model": "gemma2:2b",
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   map[string]any{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
		})
	})
	return c
}

func (c *chatServer) offered() []bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]bool(nil), c.withTool...)
}

// runtimeAt is a runtime whose only provider is the OpenAI-compatible
// server at c, configured by its base URL alone (no key, no tools key),
// remembering refusals under cache and speaking to stderr.
func runtimeAt(f *agenttest.CodeEnv, c *chatServer, cache string, stderr *bytes.Buffer) *agent.Runtime {
	rt := f.Runtime(config.Provider{Type: "openai", BaseURL: c.srv.URL + "/v1", Model: "gemma2:2b"})
	rt.UserCache, rt.Stderr = cache, stderr
	rt.Config.Prices = map[string]config.Price{"gemma2": {}} // a free local model
	return rt
}

// An openai provider configured only by a non-default base URL gets the
// tools in codegen.
func TestToolsOnAnyBaseURL(t *testing.T) {
	f := agenttest.NewCodeEnv(t, nil)
	c := newChatServer(t, false)
	var stderr bytes.Buffer
	rt := runtimeAt(f, c, t.TempDir(), &stderr)
	if !rt.ToolsFor(agent.RoleCodegen) {
		t.Fatal("no tools for an openai provider at a local base URL")
	}
	if _, err := phasetest.Run(context.Background(), f.O, f.ID, codegen.Worker{RT: rt}); err != nil {
		t.Fatal(err)
	}
	if got := c.offered(); len(got) != 3 || !got[0] || !got[2] {
		t.Errorf("requests offering tools: %v, want 3 turns with tools", got)
	}
	if f.Read("code/files/calc.go") != agenttest.CalcFixed || stderr.Len() != 0 {
		t.Errorf("calc.go %q; stderr %q", f.Read("code/files/calc.go"), stderr.String())
	}
}

// A server that refuses tools: the same role is asked again without them
// (and succeeds), the refusal is said once on stderr and remembered in the
// user cache by base URL and model, so the next run (a new runtime) asks
// without tools from the start and says nothing; tools = false still turns
// tools off without asking.
func TestToolsRefusedFallsBack(t *testing.T) {
	f := agenttest.NewCodeEnv(t, nil)
	c := newChatServer(t, true)
	cache := t.TempDir()
	var stderr bytes.Buffer
	rt := runtimeAt(f, c, cache, &stderr)
	if _, err := phasetest.Run(context.Background(), f.O, f.ID, codegen.Worker{RT: rt}); err != nil {
		t.Fatal(err)
	}
	if got := c.offered(); len(got) != 2 || !got[0] || got[1] {
		t.Fatalf("requests offering tools: %v, want [true false] (refused, then asked without)", got)
	}
	if f.Read("code/files/calc.go") != agenttest.CalcFixed {
		t.Errorf("calc.go %q", f.Read("code/files/calc.go"))
	}
	say := stderr.String()
	if strings.Count(say, "refused tool calling") != 1 || !strings.Contains(say, "does not support tools") || !strings.Contains(say, c.srv.URL+"/v1 gemma2:2b") || !strings.Contains(say, "tools = false") {
		t.Errorf("stderr:\n%s", say)
	}
	data, err := os.ReadFile(filepath.Join(cache, "tools-refused.json"))
	if err != nil || !strings.Contains(string(data), "openai "+c.srv.URL+"/v1 gemma2:2b") {
		t.Fatalf("memory: %s, %v", data, err)
	}
	calls := f.ModelCalls()
	if len(calls) != 2 || !strings.Contains(calls[0]["error"].(string), "refused tool calling") || calls[1]["error"] != nil {
		t.Errorf("model_call events: %v", calls)
	}

	// A new process remembers: no request offers tools, nothing is said.
	stderr.Reset()
	rt2 := runtimeAt(f, c, cache, &stderr)
	if rt2.ToolsFor(agent.RoleCodegen) {
		t.Error("the remembered refusal is not read")
	}
	rt2.Fresh = true // asked again, not answered from the call cache
	if _, err := phasetest.Run(context.Background(), f.O, f.ID, codegen.Worker{RT: rt2}); err != nil {
		t.Fatal(err)
	}
	if got := c.offered(); len(got) != 3 || got[2] || stderr.Len() != 0 {
		t.Errorf("after the refusal was remembered: requests offering tools %v, stderr %q", got, stderr.String())
	}

	// tools = false: never offered, whatever the memory holds.
	off := false
	rt3 := f.Runtime(config.Provider{Type: "openai", BaseURL: c.srv.URL + "/v1", Model: "other", Tools: &off})
	if rt3.ToolsFor(agent.RoleCodegen) {
		t.Error("tools = false does not turn tools off")
	}
}
