package repl

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/task"
)

// TestPromptInterruptedRun: the prompt says a phase is running only while
// the process that runs it lives; once it is gone (killed) it says
// interrupted, as `orch status` does.
func TestPromptInterruptedRun(t *testing.T) {
	dir := t.TempDir()
	p, _, err := task.InitProject(dir)
	if err != nil {
		t.Fatal(err)
	}
	tk, _, err := p.CreateTask("t1", "brief", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	s := &session{}
	for _, tc := range []struct {
		pid  int
		want string
	}{
		{gone.Process.Pid, "orch t1 [test interrupted]> "},
		{os.Getpid(), "orch t1 [test running]> "},
	} {
		lock, err := tk.Lock(context.Background(), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		st, err := tk.ReadState()
		if err != nil {
			t.Fatal(err)
		}
		next := st.Clone()
		next.Revision++
		next.Phase = lifecycle.Test
		next.Actors[lifecycle.Test] = task.Actor{Status: lifecycle.StatusRunning, PID: tc.pid}
		if err := tk.Commit(task.Event{Kind: "phase_started"}, next); err != nil {
			t.Fatal(err)
		}
		lock.Unlock()
		if got := s.prompt(observe(dir)); got != tc.want {
			t.Errorf("pid %d: prompt %q, want %q", tc.pid, got, tc.want)
		}
	}
}
