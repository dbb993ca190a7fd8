package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/phasetest"
	"github.com/orchdev/orch/internal/view"
)

// failingSteps is the activity of TestWorkflowWaitsAfterFailure: a real
// task (phasetest's) observed by the worker's own code, whose first step
// after the observation fails for good as fail says; a redo is orch's
// redo on the task; any later step moves the task to done (an override)
// so that the workflow can end.
type failingSteps struct {
	f     phasetest.Fixture
	steps *Steps
	fail  func(attempt int32) error

	mu       sync.Mutex
	failed   *Step // the step that failed
	attempts int32 // its attempts
	kinds    []StepKind
}

func (s *failingSteps) Step(ctx context.Context, st Step) (StepResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.kinds = append(s.kinds, st.Kind)
	switch {
	case st.Kind == StepObserve:
	case s.failed == nil || activity.GetInfo(ctx).Attempt > 1:
		// The first step after the observation and its retries (no
		// other step fails, so none other is retried).
		cp := st
		s.failed = &cp
		s.attempts = activity.GetInfo(ctx).Attempt
		return StepResult{}, s.fail(s.attempts)
	case st.Kind == StepRedo:
		if _, err := s.f.O.Redo(ctx, st.Task, st.Redo.Phase, st.Redo.Reason); err != nil {
			return StepResult{}, err
		}
	default:
		reason := "the scripted step finished the task"
		if _, err := s.f.O.Next(ctx, st.Task, orchestrator.NextRequest{To: lifecycle.Done, Override: &reason}); err != nil {
			return StepResult{}, err
		}
	}
	obs, err := s.steps.observe(st.Task, "c0ffee")
	if err != nil {
		return StepResult{}, err
	}
	return StepResult{Observation: obs, Worker: "test"}, nil
}

// TestWorkflowWaitsAfterFailure is a step whose activity fails for good
// (it uses up its attempts; it finds the task's ref moved, a conflict
// that is not retried): the workflow does not end, it waits for a person
// with the failure in its status and history queries; a gate's Update
// that orch refuses is refused with orch's message; a redo runs the
// phase again and the task moves on. A workflow recorded before this
// behaviour (its version) still ends with the step's error.
func TestWorkflowWaitsAfterFailure(t *testing.T) {
	cases := []struct {
		name     string
		fail     func(attempt int32) error
		attempts int32
		errType  string // ErrConflict, or the type a plain error gets
		old      bool
	}{
		{name: "attempts used up", fail: func(n int32) error { return errors.New("the model cannot be reached") }, attempts: 10},
		{name: "conflict", fail: func(int32) error {
			return temporal.NewNonRetryableApplicationError("the task's ref moved", ErrConflict, nil)
		}, attempts: 1, errType: ErrConflict},
		{name: "conflict, workflow before the change", fail: func(int32) error {
			return temporal.NewNonRetryableApplicationError("the task's ref moved", ErrConflict, nil)
		}, attempts: 1, errType: ErrConflict, old: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := phasetest.New(t, lifecycle.Codegen)
			a := &failingSteps{f: f, steps: &Steps{Root: f.Dir}, fail: c.fail}
			var ts testsuite.WorkflowTestSuite
			env := ts.NewTestWorkflowEnvironment()
			env.RegisterWorkflow(TaskWorkflow)
			env.RegisterActivityWithOptions(a.Step, activity.RegisterOptions{Name: ActivityName})
			if c.old {
				env.OnGetVersion(failVersion, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
			}
			var waited FlowView
			var status json.RawMessage
			var refused, redoErr error
			var redone *GateResult
			env.RegisterDelayedCallback(func() {
				v, err := env.QueryWorkflow(QueryHistory)
				if err != nil || v.Get(&waited) != nil {
					t.Errorf("history query: %v", err)
				}
				v, err = env.QueryWorkflow(QueryStatus)
				if err != nil || v.Get(&status) != nil {
					t.Errorf("status query: %v", err)
				}
				// orch refuses an accept in codegen.
				env.UpdateWorkflow(UpdateAccept, "accept", &testsuite.TestUpdateCallback{
					OnReject:   func(err error) { refused = err },
					OnAccept:   func() { t.Error("accept in codegen was accepted") },
					OnComplete: func(any, error) {},
				}, AcceptRequest{Verdict: "accepted", Reasons: []string{"looks fine"}})
				env.UpdateWorkflow(UpdateRedo, "redo", &testsuite.TestUpdateCallback{
					OnReject: func(err error) { redoErr = err },
					OnAccept: func() {},
					OnComplete: func(res any, err error) {
						redoErr = err
						if r, ok := res.(GateResult); ok {
							redone = &r
						}
					},
				}, RedoRequest{Reason: "the model is back"})
			}, time.Hour)
			env.ExecuteWorkflow(TaskWorkflow, Params{Task: "t", Head: "c0ffee"})
			if !env.IsWorkflowCompleted() {
				t.Fatal("the workflow did not end")
			}
			werr := env.GetWorkflowError()
			if a.failed == nil || a.attempts != c.attempts {
				t.Fatalf("the failing step ran %d times (%v), want %d", a.attempts, a.failed, c.attempts)
			}
			if c.old {
				if werr == nil || !strings.Contains(werr.Error(), "the task's ref moved") {
					t.Fatalf("a workflow recorded before the change ended with %v, want the step's error", werr)
				}
				return
			}
			if werr != nil {
				t.Fatalf("workflow error: %v", werr)
			}
			var fin Final
			if err := env.GetWorkflowResult(&fin); err != nil || fin.Task != "t" {
				t.Fatalf("result %+v, %v", fin, err)
			}
			// While it waited: why, in both queries.
			if waited.Failed == nil || waited.Failed.Step.Kind != a.failed.Kind || (waited.Failed.Type == ErrConflict) != (c.errType == ErrConflict) {
				t.Fatalf("history query while waiting: %+v (failed %+v)", waited, waited.Failed)
			}
			if !strings.Contains(waited.Waiting, "a person decides: orch redo") || !strings.Contains(waited.Waiting, string(a.failed.Kind)) {
				t.Fatalf("waiting: %q", waited.Waiting)
			}
			// The status query's answer is still orch status --json,
			// field for field (orch's bridge reads it strictly), with
			// the failure as its last warning.
			dec := json.NewDecoder(bytes.NewReader(status))
			dec.DisallowUnknownFields()
			var sv view.Status
			if err := dec.Decode(&sv); err != nil {
				t.Fatalf("status query's answer is not orch status --json: %v (%s)", err, status)
			}
			if len(sv.Warnings) == 0 || sv.Warnings[len(sv.Warnings)-1] != waited.Waiting {
				t.Fatalf("status query's warnings %q, want the failure last", sv.Warnings)
			}
			if sv.Phase != lifecycle.Codegen {
				t.Fatalf("status query's phase %s, want codegen (the task stays in its phase)", sv.Phase)
			}
			// The refused Update: orch's message and exit code.
			local := localWrongPhase(t, phasetest.New(t, lifecycle.Codegen), lifecycle.Accept)
			if got := FromTemporal(refused); refused == nil || exit.Format(got) != exit.Format(local) || exit.Of(got) != exit.Of(local) {
				t.Fatalf("refused accept: %v, want orch's %q (exit %d)", refused, exit.Format(local), exit.Of(local))
			}
			if redoErr != nil || redone == nil || redone.Phase != lifecycle.Codegen {
				t.Fatalf("redo: %+v, %v", redone, redoErr)
			}
			// Then: the failing attempts, the redo, the phase's step
			// again (after a redo of codegen, its work), done.
			kinds := a.kinds[int(c.attempts)+1:]
			if len(kinds) != 2 || kinds[0] != StepRedo || kinds[1] != StepWork {
				t.Fatalf("steps after the failure %v, want [redo work]", kinds)
			}
		})
	}
}
