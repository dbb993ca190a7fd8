package agent

import (
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/lifecycle"
)

// Planning sub-states, as strings; their definitions are in lifecycle.
const (
	PlanDraft       = string(lifecycle.PlanDraft)
	PlanClarifying  = string(lifecycle.PlanClarifying)
	PlanFormalizing = string(lifecycle.PlanFormalizing)
	PlanReviewReady = string(lifecycle.PlanReviewReady)
	PlanWorkshop    = string(lifecycle.PlanWorkshop)
)

// PlanningStatus maps the planning artifacts as `orch next` reads them to
// the sub-state, in this order:
//
//	plan missing                                    → draft
//	plan present but invalid                        → workshop
//	an open blocking question                       → clarifying
//	file plan valid and non-empty                   → review_ready
//	otherwise (file plan missing, empty or invalid) → formalizing
//
// review_ready is exactly the condition of the planning → plan_review edge.
func PlanningStatus(plan artifact.Loaded[artifact.Plan], fp artifact.Loaded[artifact.FilePlan]) string {
	switch {
	case !plan.Present:
		return PlanDraft
	case plan.Err != nil:
		return PlanWorkshop
	case len(plan.Value.OpenQuestions()) > 0:
		return PlanClarifying
	case fp.OK() && len(fp.Value.Files) > 0:
		return PlanReviewReady
	}
	return PlanFormalizing
}
