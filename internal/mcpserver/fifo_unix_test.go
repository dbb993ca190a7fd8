//go:build unix

package mcpserver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/orchdev/orch/internal/artifact"
)

// A named pipe or a symbolic link where an artifact should be is refused
// at once by the resource reader and read_artifact, naming what was found;
// the deadline proves nothing blocks (a plain open of a FIFO waits for a
// writer forever).
func TestReadRefusesSpecialFilesWithoutBlocking(t *testing.T) {
	f := newFixture(t, "")
	f.call(ToolNewTask, map[string]any{"brief": "add a flag", "id": "t1"})
	tk, _ := f.project.Open("t1")
	// Regular files first, so that the resources are listed; then swapped.
	plan, md := filepath.Join(tk.Dir, artifact.PlanFile), filepath.Join(tk.Dir, "planning", "plan.md")
	for _, p := range []string{plan, md} {
		if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f.srv.watch.scan(context.Background())
	for _, p := range []string{plan, md} {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(plan, 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	if err := os.Symlink("brief.md", md); err != nil {
		t.Fatal(err)
	}
	for rel, what := range map[string]string{artifact.PlanFile: "a named pipe", "planning/plan.md": "a symbolic link"} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := f.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: ArtifactURI("t1", rel)})
		cancel()
		if err == nil || !strings.Contains(err.Error(), what) {
			t.Errorf("read resource %s: %v, want a refusal naming %s", rel, err, what)
		}
		done := make(chan string, 1)
		go func() { done <- f.refused(ToolReadArtifact, map[string]any{"task": "t1", "path": rel}) }()
		select {
		case msg := <-done:
			if !strings.Contains(msg, what) {
				t.Errorf("read_artifact %s: %q, want a refusal naming %s", rel, msg, what)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("read_artifact %s blocked", rel)
		}
	}
}

// A state.json whose phase was set by hand is not shown as the task's
// state: status fails naming both phases, list_tasks shows the
// transcript's phase and flags the task.
func TestTamperedStateFlagged(t *testing.T) {
	f := newFixture(t, "")
	f.call(ToolNewTask, map[string]any{"brief": "add a flag", "id": "t1"})
	tk, _ := f.project.Open("t1")
	p := filepath.Join(tk.Dir, "state.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(b), `"planning"`, `"accept"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	msg := f.refused(ToolStatus, map[string]any{"task": "t1"})
	if !strings.Contains(msg, "state.json says phase accept") || !strings.Contains(msg, "the transcript committed phase planning") {
		t.Errorf("status: %q", msg)
	}
	l := f.call(ToolListTasks, map[string]any{})
	tasks := l["tasks"].([]any)
	e := tasks[0].(map[string]any)
	if e["phase"] != "planning" || !strings.Contains(str(e["state_disagrees"]), "state.json says phase accept") {
		t.Errorf("list_tasks: %v", e)
	}
}
