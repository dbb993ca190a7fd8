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
	// The model is a command that says it started (through a FIFO the
	// test reads) and then takes a minute.
	fifo := filepath.Join(t.TempDir(), "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, fmt.Sprintf("[providers.default]\ntype = \"command\"\ncommand = [\"sh\", \"-c\", \"echo started > '%s'; exec sleep 60\"]\n", fifo))
	f.call(ToolNewTask, map[string]any{"brief": "add a flag", "id": "t1"})
	acted := make(chan error, 1)
	f.srv.acted = func(tool, id string, err error) {
		if tool == ToolRunPhase {
			acted <- err
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// Blocks until the model command runs: the phase is running then.
		os.ReadFile(fifo)
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
