package lifecycle

import (
	"slices"

	"github.com/orchdev/orch/internal/artifact"
)

// PlanningStatus is the planning sub-state the artifacts imply, in this
// order:
//
//	plan missing                                    → draft
//	plan present but invalid                        → workshop
//	an open blocking question                       → clarifying
//	plan_ready holds (the planning → plan_review edge) → review_ready
//	otherwise (file plan missing, empty or invalid) → formalizing
//
// It reads only s.Plan and s.FilePlan.
func PlanningStatus(s Snapshot) Status {
	switch {
	case !s.Plan.Present:
		return PlanDraft
	case s.Plan.Err != nil:
		return PlanWorkshop
	case len(s.Plan.Value.OpenQuestions()) > 0:
		return PlanClarifying
	case Evaluate(CondPlanReady, s).Holds:
		return PlanReviewReady
	}
	return PlanFormalizing
}

// PlanReviewVerdict is the conservative aggregate of plan reviewers'
// verdicts that review/plan-review.json records: blocked when any reviewer
// is not ok with severity blocking (the plan_review → planning edge's
// rule); ok only when every reviewer is ok and nothing blocks. No
// reviewers is not ok.
func PlanReviewVerdict(rs []artifact.Reviewer) (ok, blocked bool) {
	r := artifact.PlanReview{Reviewers: rs}
	blocked = len(r.BlockingReviewers()) > 0
	ok = len(rs) > 0
	for _, v := range rs {
		ok = ok && v.OK
	}
	return ok && !blocked, blocked
}

// CodeReviewVerdict is the aggregate of the code reviewers that
// review/code-review.json records as ok: true only when at least one
// reviewer answered, every one says ok and none of their issues is
// blocking — the rule the review → test edge holds the review to.
func CodeReviewVerdict(oks []bool, issues []artifact.Issue) bool {
	if len(oks) == 0 || slices.Contains(oks, false) {
		return false
	}
	r := artifact.CodeReview{Issues: issues}
	return len(r.BlockingIssues()) == 0
}
