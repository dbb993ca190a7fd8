package orchestrator

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/task"
)

const (
	readyPlan   = `{"id":"t","title":"T","brief":"b","file_plan":[{"path":"a.go","intent":"create"}]}`
	invalidPlan = `{"id":"t","title":"T"}`
)

// inPhase puts the task in phase p (a setup commit, not a transition).
func inPhase(t *testing.T, tk *task.Task, p lifecycle.Phase) {
	t.Helper()
	st := state(t, tk)
	st.Phase, st.Revision = p, st.Revision+1
	if err := commitForTest(tk, st); err != nil {
		t.Fatal(err)
	}
}

func lastEvent(t *testing.T, tk *task.Task) task.Event {
	t.Helper()
	evs, err := tk.Transcript()
	if err != nil {
		t.Fatal(err)
	}
	return evs[len(evs)-1]
}

func TestNext(t *testing.T) {
	tests := []struct {
		name    string
		phase   lifecycle.Phase
		files   map[string]string
		req     NextRequest
		wantErr error // nil: the move is taken
		to      lifecycle.Phase
		status  lifecycle.Status // the entered phase's actor status
		kind    event.Kind
	}{
		{name: "plan ready moves to plan_review", phase: lifecycle.Planning, files: map[string]string{"planning/planning.ai.json": readyPlan},
			to: lifecycle.PlanReview, status: lifecycle.StatusPending, kind: event.KindTransition},
		{name: "no plan is refused", phase: lifecycle.Planning, wantErr: exit.ErrRefused},
		{name: "invalid plan is invalid", phase: lifecycle.Planning, files: map[string]string{"planning/planning.ai.json": invalidPlan}, wantErr: exit.ErrInvalid},
		{name: "--from mismatch is refused", phase: lifecycle.Planning, files: map[string]string{"planning/planning.ai.json": readyPlan},
			req: NextRequest{From: lifecycle.Codegen}, wantErr: exit.ErrRefused},
		{name: "--to a phase not one step away is refused", phase: lifecycle.Planning, files: map[string]string{"planning/planning.ai.json": readyPlan},
			req: NextRequest{To: lifecycle.Codegen}, wantErr: exit.ErrRefused},
		{name: "done is terminal", phase: lifecycle.Done, wantErr: exit.ErrRefused},
		{name: "blocked plan review goes back to planning", phase: lifecycle.PlanReview,
			files: map[string]string{"planning/planning.ai.json": readyPlan, "review/plan-review.json": `{"ok":false,"blocked":true,"reviewers":[]}`},
			to:    lifecycle.Planning, status: lifecycle.PlanWorkshop, kind: event.KindTransition},
		{name: "override skips a phase", phase: lifecycle.Planning, req: NextRequest{To: lifecycle.Codegen, Override: ptr("hotfix")},
			to: lifecycle.Codegen, status: lifecycle.StatusPending, kind: event.KindOverride},
		{name: "override defaults to the forward edge", phase: lifecycle.Planning, req: NextRequest{Override: ptr("no plan needed")},
			to: lifecycle.PlanReview, status: lifecycle.StatusPending, kind: event.KindOverride},
		{name: "blank override reason is a usage error", phase: lifecycle.Planning, req: NextRequest{Override: ptr("  ")}, wantErr: exit.ErrUsage},
		{name: "override to the current phase is refused", phase: lifecycle.Codegen, req: NextRequest{To: lifecycle.Codegen, Override: ptr("again")}, wantErr: exit.ErrRefused},
		{name: "nothing leaves revert by override", phase: lifecycle.Revert, req: NextRequest{To: lifecycle.Done, Override: ptr("skip")}, wantErr: exit.ErrRefused},
		{name: "override backwards archives and re-enters planning", phase: lifecycle.Review, req: NextRequest{To: lifecycle.Planning, Override: ptr("rethink")},
			to: lifecycle.Planning, status: lifecycle.PlanWorkshop, kind: event.KindOverride},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, tk := newTask(t)
			if tc.phase != lifecycle.Planning {
				inPhase(t, tk, tc.phase)
			}
			for rel, content := range tc.files {
				write(t, tk.Dir, rel, content)
			}
			before := state(t, tk)
			res, err := o.Next(context.Background(), "t", tc.req)
			after := state(t, tk)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				if after.Revision != before.Revision || after.Phase != before.Phase {
					t.Errorf("a refused next changed the state: %+v → %+v", before, after)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if after.Phase != tc.to || res.To != tc.to || res.From != tc.phase || after.Revision != before.Revision+1 || res.Revision != after.Revision {
				t.Errorf("result %+v, state phase %s revision %d; want %s → %s at revision %d", res, after.Phase, after.Revision, tc.phase, tc.to, before.Revision+1)
			}
			if got := after.Actors[tc.to].Status; got != tc.status {
				t.Errorf("actors.%s.status = %q, want %q", tc.to, got, tc.status)
			}
			if res.Override != (tc.req.Override != nil) {
				t.Errorf("override = %v", res.Override)
			}
			ev := lastEvent(t, tk)
			if ev.Kind != tc.kind || ev.State == nil || ev.State.Phase != tc.to || ev.Data["from"] != string(tc.phase) || ev.Data["to"] != string(tc.to) {
				t.Errorf("last event %s %v", ev.Kind, ev.Data)
			}
		})
	}
}

// TestOverrideRecordsWhatWasSkipped: the override event names the path, the
// skipped phases and the conditions that did not hold.
func TestOverrideRecordsWhatWasSkipped(t *testing.T) {
	o, tk := newTask(t)
	res, err := o.Next(context.Background(), "t", NextRequest{To: lifecycle.Test, Override: ptr("urgent")})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"plan_review", "codegen", "review"}; !slices.Equal(res.Skipped, want) {
		t.Errorf("skipped %v, want %v", res.Skipped, want)
	}
	ev := lastEvent(t, tk)
	conds, _ := ev.Data["skipped_conditions"].([]any)
	if ev.Data["reason"] != "urgent" || len(conds) != 1 || conds[0].(map[string]any)["condition"] != string(lifecycle.CondPlanReady) {
		t.Errorf("override event %v", ev.Data)
	}
}

func TestRedo(t *testing.T) {
	tests := []struct {
		name    string
		phase   lifecycle.Phase
		redo    lifecycle.Phase
		wantErr error
		to      lifecycle.Phase
		status  lifecycle.Status
		moved   []string // artifacts that go to history
		kept    []string // artifacts that stay
	}{
		{name: "redo the current phase", phase: lifecycle.Review, to: lifecycle.Review, status: lifecycle.StatusPending,
			moved: []string{"review/code-review.json", "test/report.json"}, kept: []string{"code/diff.patch", "planning/planning.ai.json"}},
		{name: "redo an earlier phase", phase: lifecycle.Test, redo: lifecycle.Codegen, to: lifecycle.Codegen, status: lifecycle.StatusPending,
			moved: []string{"code/diff.patch", "review/code-review.json", "test/report.json"}, kept: []string{"planning/planning.ai.json"}},
		{name: "from done, planning by default", phase: lifecycle.Done, to: lifecycle.Planning, status: lifecycle.PlanDraft,
			moved: []string{"planning/planning.ai.json", "code/diff.patch"}, kept: []string{"planning/brief.md"}},
		{name: "a later phase is refused", phase: lifecycle.Codegen, redo: lifecycle.Test, wantErr: exit.ErrRefused},
		{name: "done cannot be redone", phase: lifecycle.Review, redo: lifecycle.Done, wantErr: exit.ErrUsage},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, tk := newTask(t)
			inPhase(t, tk, tc.phase)
			for _, rel := range []string{"planning/planning.ai.json", "code/diff.patch", "review/code-review.json", "test/report.json"} {
				write(t, tk.Dir, rel, "{}")
			}
			before := state(t, tk)
			res, err := o.Redo(context.Background(), "t", tc.redo, " because ")
			after := state(t, tk)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || after.Revision != before.Revision {
					t.Fatalf("err = %v (want %v), revision %d → %d", err, tc.wantErr, before.Revision, after.Revision)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if after.Phase != tc.to || res.To != tc.to || res.Reason != "because" || after.Actors[tc.to].Status != tc.status {
				t.Errorf("redo %+v, phase %s, actor %+v", res, after.Phase, after.Actors[tc.to])
			}
			for _, rel := range tc.moved {
				if _, err := os.Stat(filepath.Join(tk.Dir, rel)); err == nil {
					t.Errorf("%s was not archived", rel)
				}
				if _, err := os.Stat(filepath.Join(tk.Dir, res.Archived, rel)); err != nil {
					t.Errorf("%s is not in %s: %v", rel, res.Archived, err)
				}
			}
			for _, rel := range tc.kept {
				if _, err := os.Stat(filepath.Join(tk.Dir, rel)); err != nil {
					t.Errorf("%s was moved: %v", rel, err)
				}
			}
			if ev := lastEvent(t, tk); ev.Kind != event.KindRedo || ev.Data["reason"] != "because" || ev.Data["archived"] != res.Archived {
				t.Errorf("redo event %s %v", ev.Kind, ev.Data)
			}
		})
	}
}

// After a redo to codegen, the actors of the later phases are gone: their
// artifacts were archived, so a "test passed" would be stale. The actors
// of the phase entered and of earlier phases stay.
func TestRedoForgetsLaterActors(t *testing.T) {
	o, tk := newTask(t)
	st := state(t, tk)
	st.Phase, st.Revision = lifecycle.Accept, st.Revision+1
	st.Actors = task.Actors{
		lifecycle.Planning: {Status: lifecycle.PlanReviewReady, Round: 2},
		lifecycle.Codegen:  {Status: lifecycle.Status("completed"), Attempt: 2},
		lifecycle.Test:     {Status: lifecycle.Status("passed")},
		lifecycle.Accept:   {Status: lifecycle.StatusPending},
	}
	if err := commitForTest(tk, st); err != nil {
		t.Fatal(err)
	}
	if _, err := o.Redo(context.Background(), "t", lifecycle.Codegen, "again"); err != nil {
		t.Fatal(err)
	}
	after := state(t, tk)
	for _, p := range []lifecycle.Phase{lifecycle.Review, lifecycle.Test, lifecycle.Accept} {
		if a, ok := after.Actors[p]; ok {
			t.Errorf("actor %s survived the redo to codegen: %+v", p, a)
		}
	}
	if a := after.Actors[lifecycle.Planning]; a.Round != 2 || a.Status != lifecycle.PlanReviewReady {
		t.Errorf("planning actor %+v, want round 2 and ready kept", a)
	}
	if a := after.Actors[lifecycle.Codegen]; a.Attempt != 2 || a.Status != lifecycle.StatusPending {
		t.Errorf("codegen actor %+v, want attempt 2 kept and status pending", a)
	}
}
