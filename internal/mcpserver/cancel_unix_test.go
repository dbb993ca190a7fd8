//go:build unix

package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRunPhaseCancel: cancelling the request stops the model call; the
// run is recorded as cancelled and the phase no longer counts as running.
func TestRunPhaseCancel(t *testing.T) {
	config, started := slowModel(t)
	f := newFixture(t, config)
	f.call(ToolNewTask, map[string]any{"brief": "add a flag", "id": "t1"})
	acted := f.actedOn(ToolRunPhase)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// The phase is running once the model command runs.
		started()
		cancel()
	}()
	_, err := f.cs.CallTool(ctx, &mcp.CallToolParams{Name: ToolRunPhase, Arguments: map[string]any{"task": "t1", "phase": "planning"}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v", err)
	}
	select {
	case err := <-acted:
		if err == nil {
			t.Fatal("the cancelled run succeeded")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the run did not end within 30 s of the cancellation (the model command takes 60 s)")
	}
	fin := f.events("t1", "phase_finished")
	if len(fin) != 1 || fin[0].Data["status"] != "cancelled" {
		t.Fatalf("phase_finished: %v", fin)
	}
	calls := f.events("t1", "mcp_call")
	if last := calls[len(calls)-1]; last.Data["tool"] != ToolRunPhase || last.Data["outcome"] != "failed" {
		t.Errorf("mcp_call: %v", last.Data)
	}
	st := f.call(ToolStatus, map[string]any{"task": "t1"})
	if a := st["actors"].(map[string]any)["planning"].(map[string]any); a["status"] == "running" {
		t.Errorf("planning still running: %v", a)
	}
}

// TestSubmitCodeWhileCodegenRuns: a live codegen run holds the phase;
// submit_code is refused (exit 3) and writes nothing.
func TestSubmitCodeWhileCodegenRuns(t *testing.T) {
	config, started := slowModel(t)
	f, _ := codegenFixtureWith(t, config)
	ran := f.actedOn(ToolRunPhase)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := f.cs.CallTool(ctx, &mcp.CallToolParams{Name: ToolRunPhase, Arguments: map[string]any{"task": "t1", "phase": "codegen"}})
		done <- err
	}()
	// The codegen run is live once the model command runs.
	started()
	assertRefusedSubmit(t, f, fmt.Sprintf("orch: codegen is already running for task t1 (pid %d); wait for it or stop that process", os.Getpid()), 3)
	// While the run is live, next offers no tool at all.
	if n := f.call(ToolStatus, map[string]any{"task": "t1"})["next"].(map[string]any); n["tool"] != nil || n["or"] != nil {
		t.Errorf("next while codegen runs: %v", n)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled run: %v", err)
	}
	// The server records the cancelled run before the test's folder goes.
	if err := <-ran; err == nil {
		t.Error("the cancelled codegen run succeeded")
	}
}

// slowModel is the configuration of a model command that says it started
// and then takes a minute; started blocks until it has said so (through a
// FIFO).
func slowModel(t *testing.T) (config string, started func()) {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("[providers.default]\ntype = \"command\"\ncommand = [\"sh\", \"-c\", \"echo started > '%s'; exec sleep 60\"]\n", fifo), func() {
		if _, err := os.ReadFile(fifo); err != nil {
			t.Error(err)
		}
	}
}

// actedOn hears the outcome of every call of tool once it is logged.
func (f *fixture) actedOn(tool string) <-chan error {
	ch := make(chan error, 10)
	f.srv.acted = func(name, id string, err error) {
		if name == tool {
			ch <- err
		}
	}
	return ch
}
