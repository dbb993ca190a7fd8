package lifecycle

// Status is a phase actor's sub-state, state.json's actors.<phase>.status.
// The orchestrator sets the generic ones; a phase's work reports its own
// (a test run's passed or failed, codegen's plan_unclear, accept's
// decided) through its outcome.
type Status string

// Generic actor statuses.
const (
	// StatusPending: the phase was entered; its work has not run yet.
	StatusPending Status = "pending"
	// StatusRunning: the phase's work is running (with the pid and run id
	// beside it in the actor).
	StatusRunning Status = "running"
	// StatusCompleted: the work finished and reported no status of its own.
	StatusCompleted Status = "completed"
)

// Values of actors.<phase>.last_run after a run whose work failed (the
// status itself stays what it was).
const (
	RunFailed    Status = "failed"
	RunCancelled Status = "cancelled"
)

// Planning sub-states, kept in actors.planning.status. They are decided by
// orch from the artifacts, never by the model.
const (
	// PlanDraft: no plan yet; the state before the first round.
	PlanDraft Status = "draft"
	// PlanClarifying: the plan has an open blocking question (blocking and
	// not answered); a person answers with `orch answer`.
	PlanClarifying Status = "clarifying"
	// PlanFormalizing: no open question, but the file plan is empty or
	// invalid; another `orch plan` round must list the files.
	PlanFormalizing Status = "formalizing"
	// PlanReviewReady: the plan is valid, has no open question and a valid,
	// non-empty file plan; `orch next` moves to plan_review.
	PlanReviewReady Status = "review_ready"
	// PlanWorkshop: everything else — a plan file that exists but is not
	// valid (a hand edit broke it). The orchestrator also sets workshop when
	// a task comes back to planning from a later phase, until the next round.
	PlanWorkshop Status = "workshop"
)

// Sub-states the other phases' work reports (work.Output.Status), kept in
// actors.<phase>.status.
const (
	// PlanApproved, PlanBlocked, PlanChangesRequested: plan_review's
	// aggregate verdict.
	PlanApproved         Status = "approved"
	PlanBlocked          Status = "blocked"
	PlanChangesRequested Status = "changes_requested"
	// ReviewOK, ReviewChangesRequested: the code review's verdict (in
	// the plan review's words: changes requested).
	ReviewOK               Status = "ok"
	ReviewChangesRequested Status = "changes_requested"
	// TestPassed, TestFailed: the suites ran (test/report.json completed);
	// a run that could not start reports the report's own status (error).
	TestPassed Status = "passed"
	TestFailed Status = "failed"
	// AcceptDecided: the decision is recorded.
	AcceptDecided Status = "decided"
)

// EntryStatus is the status a phase's actor gets when the task enters the
// phase by a transition: workshop for planning (the plan is revised in
// place), pending for the others.
func EntryStatus(p Phase) Status {
	if p == Planning {
		return PlanWorkshop
	}
	return StatusPending
}
