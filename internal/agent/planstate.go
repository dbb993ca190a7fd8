package agent

import (
	"encoding/json"
	"strconv"

	"github.com/orchdev/orch/internal/artifact"
)

// Planning sub-states, kept in state.json's actors.planning.status. They
// are decided by orch from the artifacts, never by the model.
const (
	// PlanDraft: no plan yet; the state before the first round.
	PlanDraft = "draft"
	// PlanClarifying: the plan has an open blocking question (blocking and
	// not answered); a person answers with `orch answer`.
	PlanClarifying = "clarifying"
	// PlanFormalizing: no open question, but the file plan is empty or
	// invalid; another `orch plan` round must list the files.
	PlanFormalizing = "formalizing"
	// PlanReviewReady: the plan is valid, has no open question and a valid,
	// non-empty file plan; `orch next` moves to plan_review.
	PlanReviewReady = "review_ready"
	// PlanWorkshop: everything else — a plan file that exists but is not
	// valid (a hand edit broke it). The orchestrator also sets workshop when
	// a task comes back to planning from a later phase, until the next round.
	PlanWorkshop = "workshop"
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

// actorRound reads actors.planning.round from a state (a JSON number after
// a round trip through state.json); 0 when absent or not a count.
func actorRound(actors map[string]map[string]any) int {
	a := actors["planning"]
	if a == nil {
		return 0
	}
	switch v := a["round"].(type) {
	case int:
		return max(v, 0)
	case int64:
		return int(max(v, 0))
	case float64:
		if v >= 0 && v == float64(int(v)) {
			return int(v)
		}
	case json.Number:
		if n, err := strconv.Atoi(v.String()); err == nil && n >= 0 {
			return n
		}
	}
	return 0
}
