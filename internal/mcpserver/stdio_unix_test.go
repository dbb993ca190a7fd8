//go:build unix

package mcpserver_test

import (
	"bufio"
	"encoding/json"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/agent/agenttest"
	"github.com/orchdev/orch/internal/task"
)

// mcpLine is a JSON-RPC message as `orch mcp` writes it.
type mcpLine struct {
	ID     *int            `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// initLines open a session, as a client writes them.
const initLines = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
`

// orchMCP starts the test binary as `orch mcp` in dir (TestMain) with
// extra environment.
func orchMCP(t *testing.T, dir string, env ...string) (*exec.Cmd, io.WriteCloser, *bufio.Reader) {
	t.Helper()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "mcp")
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), runOrch+"=1", "GORACE=atexit_sleep_ms=0"), env...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd, in, bufio.NewReader(out)
}

// planningRun is orch mcp running run_phase planning on a model that
// answers only once release is closed.
type planningRun struct {
	env     *agenttest.PlanEnv
	cmd     *exec.Cmd
	in      io.WriteCloser
	out     *bufio.Reader
	release chan struct{}
}

// startPlanning starts orch mcp in a new project, calls run_phase
// planning (id 2) and returns once the model call arrived.
func startPlanning(t *testing.T) planningRun {
	t.Helper()
	arrived, release := make(chan struct{}, 1), make(chan struct{})
	api := agenttest.NewOpenAIAPI(t, func(agenttest.ChatRequest) string {
		arrived <- struct{}{}
		<-release
		return agenttest.JSONOf(t, agenttest.PlannerAnswer("Retry", []map[string]any{agenttest.FileEntry("fetch/fetch.go", "update")}))
	})
	e := agenttest.NewPlanEnv(t, nil, agenttest.Brief, api.Config())
	cmd, in, out := orchMCP(t, e.Root, "OPENAI_API_KEY=sk-test-drain")
	if _, err := io.WriteString(in, initLines+`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_phase","arguments":{"task":"t1","phase":"planning"}}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-arrived:
	case <-time.After(60 * time.Second):
		t.Fatal("the planner's model call did not arrive within 60 s")
	}
	return planningRun{env: e, cmd: cmd, in: in, out: out, release: release}
}

// TestStdioDrainsAtEOF: a client that writes a slow request (run_phase on
// a model that answers only when the test says) and closes standard input
// gets the response all the same, and orch mcp then exits 0.
func TestStdioDrainsAtEOF(t *testing.T) {
	r := startPlanning(t)
	// The run is in flight: the client leaves.
	r.in.Close()
	// Give the server time to see the end of its input before the model
	// answers (without draining it would cancel the run and exit now; a
	// slow machine can only make this test pass when it should not).
	time.Sleep(300 * time.Millisecond)
	close(r.release)
	cmd, out, e := r.cmd, r.out, r.env

	got := map[int]mcpLine{}
	for {
		line, err := out.ReadBytes('\n')
		if len(line) > 0 {
			var m mcpLine
			if err := json.Unmarshal(line, &m); err != nil {
				t.Fatalf("orch mcp wrote %q: %v", line, err)
			}
			if m.ID != nil {
				got[*m.ID] = m
			}
		}
		if err != nil {
			break
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("orch mcp after the end of its input: %v, want exit 0", err)
	}
	if _, ok := got[1]; !ok {
		t.Fatalf("no response to initialize (responses to %v only)", slices.Collect(maps.Keys(got)))
	}
	res, ok := got[2]
	if !ok {
		t.Fatalf("no response to the run_phase call written before the end of input (responses to %v only)", slices.Collect(maps.Keys(got)))
	}
	var call struct {
		IsError    bool `json:"isError"`
		Structured struct {
			Phase  string `json:"phase"`
			Status string `json:"status"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(res.Result, &call); err != nil || call.IsError || call.Structured.Phase != "planning" || call.Structured.Status == "" {
		t.Fatalf("run_phase response: %s %s (%v)", res.Result, res.Error, err)
	}
	// The run finished and is in the transcript, the mcp_call last.
	evs := e.Events()
	var kinds []string
	for _, ev := range evs {
		kinds = append(kinds, string(ev.Kind))
	}
	last := evs[len(evs)-1]
	if last.Kind != "mcp_call" || last.Data["outcome"] != "ok" || !strings.Contains(strings.Join(kinds, " "), "phase_finished") {
		t.Errorf("transcript %v, last %v", kinds, last.Data)
	}
}

// TestStdioDrainEndsAtSignal: SIGTERM while orch mcp drains cancels the
// request it waits for, as Ctrl-C would, and the process ends without
// waiting for the model.
func TestStdioDrainEndsAtSignal(t *testing.T) {
	r := startPlanning(t)
	// Before the server's own cleanup, which waits for the handler.
	t.Cleanup(func() { close(r.release) })
	cmd, in, out, e := r.cmd, r.in, r.out, r.env
	in.Close()
	go io.Copy(io.Discard, out)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("orch mcp still drains 60 s after SIGTERM (the model never answers)")
	}
	evs := e.Events()
	var fin []task.Event
	for _, ev := range evs {
		if ev.Kind == "phase_finished" {
			fin = append(fin, ev)
		}
	}
	if len(fin) != 1 || fin[0].Data["status"] != "cancelled" {
		t.Errorf("phase_finished %v, want one, cancelled", fin)
	}
}

// TestStdioAnswersEveryLine: with a run in flight, every malformed line is
// answered with a JSON-RPC error (parse error -32700, invalid request
// -32600; the line's id when it has a valid one), a 20 MB line is answered
// and skipped, and the session goes on: a ping after them is answered and
// the run's own response arrives when the model answers.
func TestStdioAnswersEveryLine(t *testing.T) {
	r := startPlanning(t)
	defer func() {
		select {
		case <-r.release:
		default:
			close(r.release)
		}
	}()
	type answer struct {
		ID    json.RawMessage `json:"id"`
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
		Result json.RawMessage `json:"result"`
	}
	// next reads the next answer that is not the initialize response or a
	// notification.
	next := func() answer {
		t.Helper()
		for {
			line, err := r.out.ReadBytes('\n')
			if err != nil {
				t.Fatalf("orch mcp ended its output: %v (the session did not go on)", err)
			}
			var a answer
			if err := json.Unmarshal(line, &a); err != nil {
				t.Fatalf("orch mcp wrote %q: %v", line, err)
			}
			if string(a.ID) == "1" || a.ID == nil {
				continue
			}
			return a
		}
	}
	cases := []struct {
		name, line string
		code       int
		id         string
		msg        string
	}{
		{"open brace", `{`, -32700, "null", "Parse error"},
		{"empty batch", `[]`, -32600, "null", "empty batch"},
		{"null", `null`, -32600, "null", "Invalid Request"},
		{"NUL bytes", "\x00\x00", -32700, "null", "Parse error"},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":5,"method":"ping"}`, -32600, "5", "version"},
		{"object id", `{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`, -32600, "null", "Invalid Request"},
		{"200k-deep nesting", strings.Repeat("[", 200000) + strings.Repeat("]", 200000), -32700, "null", "deeper than"},
		{"20 MB line", `{"jsonrpc":"2.0","id":6,"method":"ping","params":{"x":"` + strings.Repeat("a", 20<<20) + `"}}`, -32600, "null", "over the limit"},
	}
	for _, c := range cases {
		if _, err := io.WriteString(r.in, c.line+"\n"); err != nil {
			t.Fatalf("%s: write: %v", c.name, err)
		}
		a := next()
		if string(a.ID) != c.id || a.Error.Code != c.code || !strings.Contains(a.Error.Message, c.msg) {
			t.Errorf("%s: answered id %s, error %d %q; want id %s, %d containing %q", c.name, a.ID, a.Error.Code, a.Error.Message, c.id, c.code, c.msg)
		}
	}
	if _, err := io.WriteString(r.in, "\n"+`{"jsonrpc":"2.0","id":7,"method":"ping"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	if a := next(); string(a.ID) != "7" || a.Result == nil {
		t.Fatalf("ping after the malformed lines: %+v", a)
	}
	close(r.release)
	a := next()
	if string(a.ID) != "2" || a.Result == nil {
		t.Fatalf("the run in flight: %+v", a)
	}
	var call struct {
		IsError    bool `json:"isError"`
		Structured struct {
			Phase string `json:"phase"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(a.Result, &call); err != nil || call.IsError || call.Structured.Phase != "planning" {
		t.Fatalf("run_phase result %s (%v)", a.Result, err)
	}
	r.in.Close()
	if err := r.cmd.Wait(); err != nil {
		t.Errorf("orch mcp at the end of its input: %v, want exit 0", err)
	}
}
