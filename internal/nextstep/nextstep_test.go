package nextstep

import (
	"os"
	"os/exec"
	"testing"

	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/task"
)

func TestFor(t *testing.T) {
	ph := func(p lifecycle.Phase) *lifecycle.Phase { return &p }
	// A pid that is surely gone: a finished child's.
	dead := deadPID(t)
	for _, tc := range []struct {
		name string
		v    orchestrator.StatusView
		open string
		want string
	}{
		{"edge holds", orchestrator.StatusView{Phase: lifecycle.Review, Suggested: ph(lifecycle.Test)}, "", "next"},
		{"planning, nothing yet", orchestrator.StatusView{Phase: lifecycle.Planning}, "", "plan"},
		{"planning, open question", orchestrator.StatusView{Phase: lifecycle.Planning}, "q2", "answer q2 TEXT"},
		{"plan review", orchestrator.StatusView{Phase: lifecycle.PlanReview}, "", "review plan"},
		{"codegen", orchestrator.StatusView{Phase: lifecycle.Codegen}, "", "codegen"},
		{"review", orchestrator.StatusView{Phase: lifecycle.Review}, "", "review code"},
		{"test", orchestrator.StatusView{Phase: lifecycle.Test}, "", "test"},
		{"accept gate", orchestrator.StatusView{Phase: lifecycle.Accept}, "", "accept --verdict accepted|changes_requested|rejected --reason R"},
		{"revert", orchestrator.StatusView{Phase: lifecycle.Revert}, "", "revert --reason R"},
		{"done", orchestrator.StatusView{Phase: lifecycle.Done}, "", ""},
		{"running, alive", orchestrator.StatusView{Phase: lifecycle.Codegen, Actors: task.Actors{lifecycle.Codegen: {Status: lifecycle.StatusRunning, PID: os.Getpid()}}}, "", ""},
		{"running, pid gone", orchestrator.StatusView{Phase: lifecycle.Codegen, Suggested: ph(lifecycle.Review), Actors: task.Actors{lifecycle.Codegen: {Status: lifecycle.StatusRunning, PID: dead}}}, "", "codegen"},
		{"accepted by hand, nothing committed", orchestrator.StatusView{Phase: lifecycle.Accept, Edges: []orchestrator.EdgeView{
			{To: lifecycle.Revert, Cond: lifecycle.CondRevertRequested},
			{To: lifecycle.Done, Cond: lifecycle.CondAccepted, Unmet: lifecycle.CondCommitted}}}, "", "accept"},
		{"plan sent back unchanged", orchestrator.StatusView{Phase: lifecycle.Planning, Edges: []orchestrator.EdgeView{
			{To: lifecycle.PlanReview, Cond: lifecycle.CondPlanReady, Unmet: lifecycle.CondNewPlan}}}, "", "plan"},
		{"patch sent back unchanged", orchestrator.StatusView{Phase: lifecycle.Codegen, Edges: []orchestrator.EdgeView{
			{To: lifecycle.Review, Cond: lifecycle.CondCodegenCompleted, Unmet: lifecycle.CondNewPatch}}}, "", "codegen"},
		{"review sent back unchanged", orchestrator.StatusView{Phase: lifecycle.Review, Edges: []orchestrator.EdgeView{
			{To: lifecycle.Test, Cond: lifecycle.CondReviewPasses, Unmet: lifecycle.CondNewReview}}}, "", "review code"},
		{"interrupted commit", orchestrator.StatusView{Phase: lifecycle.Test, Pending: &task.Pending{}}, "", "next --from test"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := For(tc.v, tc.open); got.Args != tc.want {
				t.Errorf("For = %q (%s), want %q", got.Args, got.Why, tc.want)
			}
		})
	}
}

// deadPID returns the pid of a child that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// TestWaits: the words a card and orch list show; an edge back to an
// earlier phase says why, never "ready to move".
func TestWaits(t *testing.T) {
	ph := func(p lifecycle.Phase) *lifecycle.Phase { return &p }
	for _, tc := range []struct {
		name  string
		v     orchestrator.StatusView
		open  string
		want  string
		human bool
	}{
		{"forward edge holds", orchestrator.StatusView{Phase: lifecycle.Review, Suggested: ph(lifecycle.Test), Edges: []orchestrator.EdgeView{
			{To: lifecycle.Codegen, Label: "needs code changes"},
			{To: lifecycle.Test, Label: "review passes", Holds: true, Forward: true}}}, "", "ready to move to test", false},
		{"tests failed", orchestrator.StatusView{Phase: lifecycle.Test, Suggested: ph(lifecycle.Codegen), Edges: []orchestrator.EdgeView{
			{To: lifecycle.Codegen, Label: "test failures", Holds: true},
			{To: lifecycle.Accept, Label: "tests complete", Forward: true}}}, "", "test failures: back to codegen", false},
		{"plan review asks for changes", orchestrator.StatusView{Phase: lifecycle.PlanReview, Suggested: ph(lifecycle.Planning), Edges: []orchestrator.EdgeView{
			{To: lifecycle.Planning, Label: "review blocked"},
			{To: lifecycle.Planning, Label: "review needs changes", Holds: true},
			{To: lifecycle.Codegen, Label: "review ok", Forward: true}}}, "", "review needs changes: back to planning", false},
		{"revert requested at the gate", orchestrator.StatusView{Phase: lifecycle.Accept, Suggested: ph(lifecycle.Revert), Edges: []orchestrator.EdgeView{
			{To: lifecycle.Revert, Label: "revert requested", Holds: true},
			{To: lifecycle.Done, Label: "accepted", Forward: true}}}, "", "revert requested: on to revert", false},
		{"open question", orchestrator.StatusView{Phase: lifecycle.Planning}, "q1", "waits for your answer to q1", true},
		{"accept gate", orchestrator.StatusView{Phase: lifecycle.Accept}, "", "waits for your accept decision", true},
		{"done", orchestrator.StatusView{Phase: lifecycle.Done}, "", "done", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			words, human := Waits(For(tc.v, tc.open), tc.v)
			if words != tc.want || human != tc.human {
				t.Errorf("Waits = %q, %v; want %q, %v", words, human, tc.want, tc.human)
			}
		})
	}
}
