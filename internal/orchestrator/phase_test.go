package orchestrator

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/task"
	"github.com/orchdev/orch/internal/work"
)

// newTask makes a project with one task in planning, in a temp folder.
func newTask(t *testing.T) (*Orchestrator, *task.Task) {
	t.Helper()
	return newTaskIn(t, t.TempDir())
}

// newTaskIn makes a project in dir with one task, "t", in planning.
func newTaskIn(t *testing.T, dir string) (*Orchestrator, *task.Task) {
	t.Helper()
	p, _, err := task.InitProject(dir)
	if err != nil {
		t.Fatal(err)
	}
	tk, _, err := p.CreateTask("t", "brief", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	o := New(p)
	o.Wait = 2 * time.Second
	return o, tk
}

func write(t *testing.T, dir, rel, content string) { t.Helper(); gittest.Write(t, dir, rel, content) }

func state(t *testing.T, tk *task.Task) task.State {
	t.Helper()
	st, err := tk.ReadState()
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestRunPhaseCommitsStagedArtifacts(t *testing.T) {
	o, tk := newTask(t)
	ctx := context.Background()
	var during task.State
	res, err := o.RunPhase(ctx, "t", lifecycle.Planning, func(ctx context.Context, in work.Input) (Outcome, error) {
		during = state(t, tk)
		p, err := in.Out.Path("planning/planning.ai.json")
		if err != nil {
			return Outcome{}, err
		}
		// Nothing staged is visible in the task folder yet.
		if _, err := os.Stat(filepath.Join(tk.Dir, "planning", "planning.ai.json")); !os.IsNotExist(err) {
			t.Errorf("artifact visible before commit: %v", err)
		}
		return Outcome{Status: "review_ready", Round: 1}, os.WriteFile(p, []byte(`{"id":"t","title":"T","brief":"b","file_plan":[{"path":"a.go","intent":"create"}]}`), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if during.Actors["planning"].Status != "running" {
		t.Errorf("while running, actors.planning = %v", during.Actors["planning"])
	}
	st := state(t, tk)
	if st.Actors["planning"].Status != "review_ready" || st.Actors["planning"].Round != 1 || st.Phase != "planning" || res.Revision != st.Revision {
		t.Errorf("after the run: %+v (result %+v)", st, res)
	}
	if st.Actors["planning"].PID != 0 || st.Actors["planning"].Run != "" {
		t.Errorf("pid left in the actor: %v", st.Actors["planning"])
	}
	if _, err := os.Stat(filepath.Join(tk.Dir, "planning", "planning.ai.json")); err != nil {
		t.Errorf("artifact not in place: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Join(tk.Dir, StagingDir)); len(entries) != 0 {
		t.Errorf("staging left behind: %v", entries)
	}
	// A second run archives the first attempt's plan.
	res, err = o.RunPhase(ctx, "t", lifecycle.Planning, func(ctx context.Context, in work.Input) (Outcome, error) {
		p, _ := in.Out.Path("planning/planning.ai.json")
		return Outcome{}, os.WriteFile(p, []byte(`{"id":"t","title":"T2","brief":"b"}`), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Archived == "" {
		t.Fatalf("second run archived nothing")
	}
	if _, err := os.Stat(filepath.Join(tk.Dir, filepath.FromSlash(res.Archived), "planning", "planning.ai.json")); err != nil {
		t.Errorf("first attempt not archived: %v", err)
	}
	if _, err := os.Stat(filepath.Join(tk.Dir, "planning", "brief.md")); err != nil {
		t.Errorf("brief must stay: %v", err)
	}
	rep, err := tk.Verify()
	if err != nil || !rep.OK {
		t.Errorf("verify: %+v %v", rep, err)
	}
}

func TestRunPhaseFailureKeepsOutputAside(t *testing.T) {
	o, tk := newTask(t)
	boom := errors.New("model refused")
	res, err := o.RunPhase(context.Background(), "t", lifecycle.Planning, func(ctx context.Context, in work.Input) (Outcome, error) {
		p, _ := in.Out.Path("planning/raw/planner.txt")
		_ = os.WriteFile(p, []byte("raw answer"), 0o644)
		return Outcome{}, boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the work's error", err)
	}
	st := state(t, tk)
	if a := st.Actors["planning"]; a.Status != "draft" || a.LastRun != "failed" {
		t.Errorf("actor = %v, want the status before the run (draft) and last_run failed", a)
	}
	if _, err := os.Stat(filepath.Join(tk.Dir, "planning", "raw")); !os.IsNotExist(err) {
		t.Errorf("a failed run's output reached the task's artifacts")
	}
	if res.FailedKept == "" {
		t.Fatal("failed output not kept")
	}
	if b, err := os.ReadFile(filepath.Join(tk.Dir, filepath.FromSlash(res.FailedKept), "planning", "raw", "planner.txt")); err != nil || string(b) != "raw answer" {
		t.Errorf("kept raw answer: %q %v", b, err)
	}
}

func TestRunPhaseStaleRevisionDiscards(t *testing.T) {
	o, tk := newTask(t)
	_, err := o.RunPhase(context.Background(), "t", lifecycle.Planning, func(ctx context.Context, in work.Input) (Outcome, error) {
		// Someone moves the task while the work runs.
		if _, err := o.Next(ctx, "t", NextRequest{Override: ptr("concurrent move"), To: lifecycle.PlanReview}); err != nil {
			t.Fatal(err)
		}
		p, _ := in.Out.Path("planning/planning.ai.json")
		return Outcome{}, os.WriteFile(p, []byte(`{}`), 0o644)
	})
	if !errors.Is(err, exit.ErrRefused) || !strings.Contains(err.Error(), "changed while planning ran") {
		t.Fatalf("err = %v, want a stale-revision refusal", err)
	}
	if _, err := os.Stat(filepath.Join(tk.Dir, "planning", "planning.ai.json")); !os.IsNotExist(err) {
		t.Errorf("stale output was committed")
	}
	if st := state(t, tk); st.Phase != "plan_review" {
		t.Errorf("phase = %s", st.Phase)
	}
}

func TestRunPhaseRefusals(t *testing.T) {
	o, tk := newTask(t)
	ctx := context.Background()
	noop := func(ctx context.Context, in work.Input) (Outcome, error) { return Outcome{}, nil }
	// Entering a phase needs its normal transition to hold.
	_, err := o.RunPhase(ctx, "t", lifecycle.PlanReview, noop)
	if !errors.Is(err, exit.ErrRefused) || !strings.Contains(err.Error(), "plan_ready") {
		t.Errorf("entering plan_review without a plan: %v", err)
	}
	// Not more than one step.
	_, err = o.RunPhase(ctx, "t", lifecycle.Test, noop)
	if !errors.Is(err, exit.ErrRefused) {
		t.Errorf("entering test from planning: %v", err)
	}
	// A live run of the phase blocks another one and `next`.
	_, err = o.RunPhase(ctx, "t", lifecycle.Planning, func(ctx context.Context, in work.Input) (Outcome, error) {
		if _, err := o.RunPhase(ctx, "t", lifecycle.Planning, noop); !errors.Is(err, exit.ErrRefused) || !strings.Contains(err.Error(), "already running") {
			t.Errorf("second run while running: %v", err)
		}
		if _, err := o.Next(ctx, "t", NextRequest{}); !errors.Is(err, exit.ErrRefused) || !strings.Contains(err.Error(), "is running") {
			t.Errorf("next while running: %v", err)
		}
		return Outcome{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A run whose process died does not block: its pid is gone.
	st := state(t, tk)
	a := st.Actors["planning"]
	a.Status, a.PID = "running", 999999999
	st.Actors["planning"] = a
	next := st
	next.Revision++
	if err := commitForTest(tk, next); err != nil {
		t.Fatal(err)
	}
	if _, err := o.RunPhase(ctx, "t", lifecycle.Planning, noop); err != nil {
		t.Errorf("a dead run blocked a new one: %v", err)
	}
}

func commitForTest(tk *task.Task, next task.State) error {
	lock, err := tk.Lock(context.Background(), time.Second)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	return tk.Commit(task.Event{Kind: "test_setup", Data: map[string]any{}}, next)
}

func ptr(s string) *string { return &s }

func TestRunPhaseCancelledIsRecorded(t *testing.T) {
	o, tk := newTask(t)
	ctx, cancel := context.WithCancel(context.Background())
	_, err := o.RunPhase(ctx, "t", lifecycle.Planning, func(ctx context.Context, in work.Input) (Outcome, error) {
		cancel()
		<-ctx.Done()
		return Outcome{}, ctx.Err()
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if a := state(t, tk).Actors["planning"]; a.LastRun != "cancelled" || a.Status != "draft" {
		t.Errorf("actor = %v, want last_run cancelled", a)
	}
}
