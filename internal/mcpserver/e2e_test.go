package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/cli"
	"github.com/orchdev/orch/internal/demo"
	"github.com/orchdev/orch/internal/mcpserver"
	"github.com/orchdev/orch/internal/sandbox"
	"github.com/orchdev/orch/internal/task"
)

// demoAnswer answers the demo planner's blocking question.
const demoAnswer = "Characters (runes): multi-byte text must stay intact."

// host is an MCP client session on the demo project.
type host struct {
	t   *testing.T
	dir string
	p   *task.Project
	cs  *mcp.ClientSession
}

// newHost prepares the demo's sample repository with the offline script
// provider (extra is appended to its configuration) and connects an
// in-memory client named "e2e-host".
func newHost(t *testing.T, extra string) *host {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "textkit")
	p, err := demo.Prepare(context.Background(), dir, "script")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sandbox.Available(); err != nil {
		if os.Getenv("ORCH_REQUIRE_BWRAP") != "" {
			t.Fatalf("bubblewrap is required here: %v", err)
		}
		extra += "\n[test]\nsandbox = \"none\"\n"
	}
	cfgPath := filepath.Join(p.Dir, "config.toml")
	cfg, _ := os.ReadFile(cfgPath)
	if err := os.WriteFile(cfgPath, append(cfg, "\n"+extra...), 0o644); err != nil {
		t.Fatal(err)
	}
	srv, err := mcpserver.New(mcpserver.Options{Dir: dir, Version: "e2e", Getenv: os.Getenv, Environ: os.Environ})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	st, ct := mcp.NewInMemoryTransports()
	go func() { _ = srv.Run(ctx, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e-host", Version: "0.1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return &host{t: t, dir: dir, p: p, cs: cs}
}

func (h *host) call(name string, args map[string]any) map[string]any {
	h.t.Helper()
	res, err := h.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		h.t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		h.t.Fatalf("%s(%v): %s", name, args, b.String())
	}
	var out map[string]any
	raw, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(raw, &out)
	return out
}

// driveToAccept creates the demo task and follows each result's next step,
// as an agent host would, until the task waits for the accept decision.
// It returns the tools called, in order.
func (h *host) driveToAccept() []string {
	h.t.Helper()
	var called []string
	h.call(mcpserver.ToolNewTask, map[string]any{"brief": demo.Brief, "id": demo.TaskID})
	for range 40 {
		st := h.call(mcpserver.ToolStatus, map[string]any{"task": demo.TaskID})
		next := st["next"].(map[string]any)
		if st["phase"] == "accept" {
			if next["human"] != true && next["tool"] != mcpserver.ToolAccept {
				h.t.Fatalf("in accept, next: %v", next)
			}
			return called
		}
		args := map[string]any{}
		for k, v := range next["arguments"].(map[string]any) {
			args[k] = v
		}
		tool := str(next["tool"])
		switch tool {
		case mcpserver.ToolRunPhase:
			called = append(called, "run_phase "+str(args["phase"]))
		case mcpserver.ToolNext:
			called = append(called, "next")
		case mcpserver.ToolAnswer:
			args["text"] = demoAnswer
			called = append(called, "answer "+str(args["question"]))
		default:
			h.t.Fatalf("in %v, no tool to follow: %v", st["phase"], next)
		}
		h.call(tool, args)
	}
	h.t.Fatalf("the task did not reach accept: %v", called)
	return nil
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// TestEndToEndHumanAccept drives the demo task from planning to accept
// through MCP alone, following the next steps the results give; the accept
// decision, a human gate the server does not offer, is taken by the CLI
// (`orch accept`), and the host sees the task done.
func TestEndToEndHumanAccept(t *testing.T) {
	t.Parallel()
	h := newHost(t, "")
	called := h.driveToAccept()
	want := []string{"run_phase planning", "answer q1", "run_phase planning", "next", "run_phase plan_review", "next",
		"run_phase codegen", "next", "run_phase review", "next", "run_phase test", "next", // the first attempt fails its test
		"run_phase codegen", "next", "run_phase review", "next", "run_phase test", "next"}
	if strings.Join(called, ", ") != strings.Join(want, ", ") {
		t.Errorf("steps:\n %v\nwant\n %v", called, want)
	}
	st := h.call(mcpserver.ToolStatus, map[string]any{"task": demo.TaskID})
	next := st["next"].(map[string]any)
	if next["human"] != true || !strings.HasPrefix(str(next["command"]), "orch accept --verdict") {
		t.Errorf("at the gate, next: %v", next)
	}
	// status through MCP is orch status --json (plus next).
	var stdout, stderr bytes.Buffer
	if code := cli.Run(context.Background(), cli.Env{Args: []string{"status", "--json"}, Dir: h.dir, Stdout: &stdout, Stderr: &stderr, Now: time.Now}); code != 0 {
		t.Fatalf("orch status: %d %s", code, stderr.String())
	}
	delete(st, "next")
	var cliStatus map[string]any
	json.Unmarshal(stdout.Bytes(), &cliStatus)
	a, _ := json.Marshal(st)
	b, _ := json.Marshal(cliStatus)
	if !bytes.Equal(a, b) {
		t.Errorf("status over MCP:\n%s\norch status --json:\n%s", a, b)
	}

	// The human decides with the CLI.
	stdout.Reset()
	stderr.Reset()
	code := cli.Run(context.Background(), cli.Env{Args: []string{"accept", "--verdict", "accepted", "--reason", "reviewed the diff; tests pass", "--decider", "pat"},
		Dir: h.dir, Stdout: &stdout, Stderr: &stderr, Now: time.Now, Getenv: os.Getenv, Environ: os.Environ})
	if code != 0 {
		t.Fatalf("orch accept: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	done := h.call(mcpserver.ToolNext, map[string]any{"task": demo.TaskID, "from": "accept"})
	if done["to"] != "done" {
		t.Fatalf("next after the human's accept: %v", done)
	}
	tk, _ := h.p.Open(demo.TaskID)
	d := artifact.LoadDecision(tk.Dir)
	if !d.OK() || d.Value.Verdict != "accepted" || d.Value.Decider.Kind != "human" || d.Value.Commit == "" {
		t.Fatalf("decision: %+v", d)
	}
	if head := gitOut(t, h.dir, "rev-parse", "HEAD"); head != d.Value.Commit {
		t.Errorf("HEAD %s, decision commit %s", head, d.Value.Commit)
	}
	if rep, err := tk.Verify(); err != nil || !rep.OK {
		t.Errorf("verify: %+v %v", rep, err)
	}
	// Every MCP action is in the transcript, naming the client.
	evs, _ := tk.Transcript()
	n := 0
	for _, ev := range evs {
		if ev.Kind == "mcp_call" {
			n++
			if ev.Data["client"] != "e2e-host 0.1" || ev.Data["outcome"] != "ok" {
				t.Errorf("mcp_call: %v", ev.Data)
			}
		}
	}
	if n != len(want)+2 { // + new_task and the final next
		t.Errorf("%d mcp_call events, want %d", n, len(want)+2)
	}
}

// TestEndToEndAgentGates: with [mcp] allow = ["accept", "revert"], the host
// takes the decision itself (recorded as an agent's) and carries out the
// revert it asked for.
func TestEndToEndAgentGates(t *testing.T) {
	t.Parallel()
	h := newHost(t, "[mcp]\nallow = [\"accept\", \"revert\"]\n")
	h.driveToAccept()
	st := h.call(mcpserver.ToolStatus, map[string]any{"task": demo.TaskID})
	if next := st["next"].(map[string]any); next["tool"] != mcpserver.ToolAccept {
		t.Fatalf("at the gate with accept allowed, next: %v", next)
	}
	acc := h.call(mcpserver.ToolAccept, map[string]any{"task": demo.TaskID, "verdict": "rejected", "reasons": []string{"not the approach we want"}})
	dec := acc["decision"].(map[string]any)
	if dec["verdict"] != "rejected" || dec["decider"].(map[string]any)["kind"] != "agent" || dec["decider"].(map[string]any)["name"] != "e2e-host 0.1 (orch mcp)" {
		t.Fatalf("accept: %v", acc)
	}
	h.call(mcpserver.ToolNext, map[string]any{"task": demo.TaskID})
	st = h.call(mcpserver.ToolStatus, map[string]any{"task": demo.TaskID})
	if st["phase"] != "revert" || st["next"].(map[string]any)["tool"] != mcpserver.ToolRevert {
		t.Fatalf("after rejected: %v", st)
	}
	rev := h.call(mcpserver.ToolRevert, map[string]any{"task": demo.TaskID, "reason": "rejected by the reviewer agent"})
	if rev["record"].(map[string]any)["status"] != "nothing_to_revert" || rev["done"].(map[string]any)["to"] != "done" {
		t.Fatalf("revert: %v", rev)
	}
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

// TestMissingArtifactAsTheCLI: an artifact not written yet is the same
// kind of error through MCP as through `orch show` (exit 4, naming the
// command that writes it), and an unknown task's next step is list_tasks,
// not status (which would fail the same way).
func TestMissingArtifactAsTheCLI(t *testing.T) {
	h := newHost(t, "")
	h.call(mcpserver.ToolNewTask, map[string]any{"brief": demo.Brief, "id": demo.TaskID})
	res, err := h.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpserver.ToolReadArtifact,
		Arguments: map[string]any{"task": demo.TaskID, "path": "review/code-review.md"}})
	if err != nil || !res.IsError {
		t.Fatalf("read_artifact of a missing file: %v %+v", err, res)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	var stdout, stderr bytes.Buffer
	code := cli.Run(context.Background(), cli.Env{Args: []string{"show", "code-review", "--task", demo.TaskID, "--no-pager"}, Dir: h.dir, Stdout: &stdout, Stderr: &stderr, Now: time.Now})
	if code != 4 || !strings.Contains(text, fmt.Sprintf("(exit code %d,", code)) {
		t.Errorf("orch show exits %d (%s); MCP says %q", code, stderr.String(), text)
	}
	for _, both := range []string{"task " + demo.TaskID + " has no review/code-review.md yet", "`orch review code` writes it"} {
		if !strings.Contains(text, both) || !strings.Contains(stderr.String(), both) {
			t.Errorf("%q: MCP says %q, orch show %q", both, text, stderr.String())
		}
	}
	res, err = h.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpserver.ToolStatus, Arguments: map[string]any{"task": "nope"}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "next: call list_tasks") {
		t.Errorf("status of an unknown task: %v %+v", err, res)
	}
}
