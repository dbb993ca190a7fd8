package evidence

import (
	"fmt"

	"github.com/orchdev/orch/internal/artifact"
)

// Summary is what a decision at accept is based on, as orch summarises it
// for the person and the accept advisor: the plan, the reviews' verdicts,
// the tests, the change.
type Summary struct {
	PlanTitle    string           `json:"plan_title,omitempty"`
	PlanSHA256   string           `json:"plan_sha256,omitempty"`
	PlanReview   string           `json:"plan_review"`
	CodeReview   string           `json:"code_review"`
	Tests        string           `json:"tests"`
	TestSummary  artifact.Summary `json:"test_summary"`
	Complete     bool             `json:"complete"`
	Files        []string         `json:"files"`
	DiffAdded    int              `json:"diff_added"`
	DiffRemoved  int              `json:"diff_removed"`
	HistoryNotes []string         `json:"notes,omitempty"`
}

// Gather reads the task's plan, reviews, test report and diff.
// Reviews that regressions archived are read from the newest history
// folder that holds them.
func Gather(taskDir string) Summary {
	var ev Summary
	if p := artifact.LoadPlan(taskDir); p.OK() {
		ev.PlanTitle, ev.PlanSHA256 = p.Value.Title, p.SHA256
	}
	switch pr := artifact.LoadPlanReview(taskDir); {
	case !pr.Present:
		ev.PlanReview = "missing"
	case pr.Err != nil:
		ev.PlanReview = "invalid"
	case pr.Value.OK && !pr.Value.Blocked:
		ev.PlanReview = "ok"
	default:
		ev.PlanReview = "not ok"
	}
	switch cr := artifact.LoadCodeReview(taskDir); {
	case !cr.Present:
		ev.CodeReview = "missing"
	case cr.Err != nil:
		ev.CodeReview = "invalid"
	case cr.Value.OK && len(cr.Value.BlockingIssues()) == 0:
		ev.CodeReview = fmt.Sprintf("ok (%d issue(s), none blocking)", len(cr.Value.Issues))
	default:
		ev.CodeReview = fmt.Sprintf("not ok (%d blocking issue(s))", len(cr.Value.BlockingIssues()))
	}
	switch tr := artifact.LoadTestReport(taskDir); {
	case !tr.Present:
		ev.Tests = "missing"
	case tr.Err != nil:
		ev.Tests = "invalid"
	case tr.Value.Status != artifact.TestCompleted:
		ev.Tests = tr.Value.Status
	case tr.Value.OverallPass:
		ev.Tests, ev.TestSummary, ev.Complete = "passed", tr.Value.Summary, true
	default:
		ev.Tests, ev.TestSummary = "failed", tr.Value.Summary
	}
	if d := artifact.LoadDiff(taskDir); d.OK() {
		for _, f := range d.Value.Files {
			ev.Files = append(ev.Files, f.Path())
		}
		ev.DiffAdded, ev.DiffRemoved = d.Value.Added, d.Value.Removed
	}
	return ev
}
