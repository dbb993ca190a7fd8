package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/llm/llmtest"
	"github.com/orchdev/orch/internal/ptytest"
)

// waitFor waits until the terminal shows a match of re and returns it.
func waitFor(t *testing.T, tm *ptytest.Terminal, re *regexp.Regexp) string {
	t.Helper()
	var m string
	if !tm.Output.Await(30*time.Second, func(raw string) bool { m = re.FindString(raw); return m != "" }) {
		t.Fatalf("the terminal does not show %s:\n%q", re, tm.Output.String())
	}
	return m
}

// sseChunk is one streamed chat-completions event.
func sseChunk(delta any, finish string) string {
	ch := map[string]any{"index": 0, "delta": delta, "finish_reason": nil}
	if finish != "" {
		ch["finish_reason"] = finish
	}
	b, _ := json.Marshal(map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1764065130, "model": "gpt-test", "choices": []any{ch}})
	return "data: " + string(b) + "\n\n"
}

// What a person sees while a model works, in a terminal: a status line
// with the role, the elapsed seconds and the tokens streamed so far, a
// line per tool call, then the rendered result — never the model's JSON.
// The model is an OpenAI-compatible server (httptest, the real streaming
// wire format) that holds its answer until the test has seen the status
// line, so nothing depends on timing.
func TestProgressInTerminal(t *testing.T) {
	dir, _ := newProject(t)
	seen := make(chan struct{})
	plan := `{"title":"Add a feature","goals":["a feature"],"scope":{"in_scope":["a.go"],"out_of_scope":[]},"work":{"tasks":[]},"risks":[],"assumptions":[],"acceptance_criteria":[],"test_plan":{"strategy":"","cases":[]},"file_plan":[{"path":"a.go","intent":"create","summary":"the feature"}],"questions":[]}`
	var first atomic.Int64 // the number of the current run's first request
	first.Store(1)
	srv := llmtest.NewServer(t, func(w http.ResponseWriter, r *http.Request, req llmtest.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		send := func(s string) { io.WriteString(w, s); fl.Flush() }
		send(sseChunk(map[string]any{"role": "assistant", "content": ""}, ""))
		if int64(req.N) == first.Load() {
			// 40 characters streamed: about 10 tokens; then wait until
			// the terminal shows them, then ask to read README.md.
			send(sseChunk(map[string]any{"content": strings.Repeat("thinking", 5)}, ""))
			select {
			case <-seen:
			case <-r.Context().Done():
				return
			}
			send(sseChunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": "call_1", "type": "function", "function": map[string]any{"name": "read_file", "arguments": `{"path":"README.md","offset":1,"limit":5}`}}}}, ""))
			send(sseChunk(map[string]any{}, "tool_calls"))
		} else {
			if !strings.Contains(string(req.Raw), `"role":"tool"`) {
				t.Errorf("the second call carries no tool result: %.300s", req.Raw)
			}
			send(sseChunk(map[string]any{"content": plan}, ""))
			send(sseChunk(map[string]any{}, "stop"))
		}
		send("data: [DONE]\n\n")
	})
	writeFile(t, filepath.Join(dir, "README.md"), "# demo\n")
	writeFile(t, filepath.Join(dir, ".orch", "config.toml"), fmt.Sprintf(`[providers.default]
type = "openai"
base_url = %q
model = "gpt-test"
api_key_env = "ORCH_TEST_OPENAI_KEY"
tools = true

[prices."gpt-test"]
input = 1.0
output = 1.0
`, srv.URL+"/v1"))
	gittest.Git(t, dir, "add", "README.md")
	gittest.Git(t, dir, "commit", "-qm", "base")

	cmd := orchCmd(dir, []string{"TERM=xterm", "NO_COLOR=", "ORCH_TEST_OPENAI_KEY=test-key"}, "plan")
	tm := ptytest.Start(t, cmd, 40, 120)
	// The status line: spinner, role, elapsed seconds, tokens so far.
	line := waitFor(t, tm, regexp.MustCompile(`\r\x1b\[K[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] planner · \d+s · ~10 tokens`))
	close(seen)
	// The tool call's line replaces the status line.
	waitFor(t, tm, regexp.MustCompile(`\r\x1b\[Kplanner: read README\.md:1-5\r?\n`))
	waitFor(t, tm, regexp.MustCompile(`task t1: planning round 1 → review_ready`))
	if code := tm.Exit(time.Minute); code != 0 {
		t.Fatalf("orch plan: exit %d\n%q", code, tm.Output.String())
	}
	out := tm.ReadAll(time.Minute)
	if strings.Contains(out, `"file_plan"`) || strings.Contains(out, "thinkingthinking") {
		t.Errorf("the model's raw answer reached the terminal:\n%q", out)
	}
	if !strings.Contains(out, "create a.go") {
		t.Errorf("the result is not rendered (the file plan):\n%q", out)
	}
	t.Logf("status line seen: %q", line)

	// Piped: the tool-call line, plain; no status line, no escape codes.
	first.Store(int64(len(srv.Requests())) + 1)
	code, piped := runOrch(t, dir, []string{"ORCH_TEST_OPENAI_KEY=test-key"}, "plan", "--fresh")
	if code != 0 || !strings.Contains(piped, "planner: read README.md:1-5\n") || strings.Contains(piped, "\x1b") || strings.Contains(piped, "tokens") {
		t.Errorf("orch plan piped: exit %d\n%q", code, piped)
	}

	// TERM=dumb cannot redraw a line: plain lines in the terminal too.
	first.Store(int64(len(srv.Requests())) + 1)
	cmd = orchCmd(dir, []string{"TERM=dumb", "ORCH_TEST_OPENAI_KEY=test-key"}, "plan", "--fresh")
	dumb := ptytest.Start(t, cmd, 40, 120)
	if code := dumb.Exit(time.Minute); code != 0 {
		t.Fatalf("TERM=dumb orch plan: exit %d", code)
	}
	if out := dumb.ReadAll(time.Minute); !strings.Contains(out, "planner: read README.md:1-5") || strings.Contains(out, "\x1b") {
		t.Errorf("TERM=dumb: %q", out)
	}
}
