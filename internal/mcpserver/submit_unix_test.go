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

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSubmitCodeWhileCodegenRuns: a live codegen run holds the phase;
// submit_code is refused (exit 3) and writes nothing.
func TestSubmitCodeWhileCodegenRuns(t *testing.T) {
	// orch's codegen model is a command that says it started (through a
	// FIFO the test reads) and then takes a minute.
	fifo := filepath.Join(t.TempDir(), "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	f, _ := codegenFixtureWith(t, fmt.Sprintf("[providers.default]\ntype = \"command\"\ncommand = [\"sh\", \"-c\", \"echo started > '%s'; exec sleep 60\"]\n", fifo))
	ran := make(chan error, 1)
	f.srv.acted = func(tool, id string, err error) {
		if tool == ToolRunPhase {
			ran <- err
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := f.cs.CallTool(ctx, &mcp.CallToolParams{Name: ToolRunPhase, Arguments: map[string]any{"task": "t1", "phase": "codegen"}})
		done <- err
	}()
	// Blocks until the model command runs: the codegen run is live then.
	if _, err := os.ReadFile(fifo); err != nil {
		t.Fatal(err)
	}
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
