package lifecycle

// EdgeKind says how an edge is taken.
type EdgeKind int

const (
	// Decided edges are taken by `orch next` when their condition holds.
	Decided EdgeKind = iota
	// Rerun edges are self-loops: re-running the phase (`orch plan`,
	// `orch codegen`, `orch redo PHASE`), never a `next` decision.
	Rerun
)

// Edge is one transition of the lifecycle.
type Edge struct {
	From  Phase
	To    Phase
	Label string // the seed diagram's label; may be empty
	// Cond names the condition that must hold for the edge to be taken.
	Cond CondName
	// Requires names conditions that must hold too, checked once Cond
	// holds: a forward edge's guards (orch's commit of the change for
	// accept → done; after a regression, a changed plan, patch or review
	// for the edge out of the phase sent back).
	Requires []CondName
	Kind     EdgeKind
	// Forward marks the main-line edge of a phase: the default target of
	// an override.
	Forward bool
}

// Table is the lifecycle: states and edges in decision order. It is the
// single source of truth for `orch next`, `orch status`, overrides and the
// generated diagram.
type Table struct {
	Initial Phase
	Edges   []Edge
}

// Lifecycle returns orch's transition table. Edges of one phase appear in
// the order `orch next` tries them (docs/lifecycle.md); re-run self-loops
// come last.
func Lifecycle() *Table {
	return &Table{
		Initial: Planning,
		Edges: []Edge{
			{From: Planning, To: PlanReview, Label: "planning succeeded", Cond: CondPlanReady, Requires: []CondName{CondNewPlan}, Forward: true},
			{From: Planning, To: Planning, Label: "re-plan (redo)", Cond: CondRerun, Kind: Rerun},

			{From: PlanReview, To: Planning, Label: "review blocked", Cond: CondPlanReviewBlocked},
			{From: PlanReview, To: Planning, Label: "review needs changes", Cond: CondPlanReviewNeedsChanges},
			{From: PlanReview, To: Codegen, Label: "review ok", Cond: CondPlanReviewOK, Forward: true},

			{From: Codegen, To: PlanReview, Label: "plan unclear", Cond: CondPlanUnclear},
			{From: Codegen, To: Planning, Label: "scope mismatch", Cond: CondScopeMismatch},
			{From: Codegen, To: Review, Label: "codegen completed", Cond: CondCodegenCompleted, Requires: []CondName{CondNewPatch}, Forward: true},
			{From: Codegen, To: Codegen, Label: "re-run codegen", Cond: CondRerun, Kind: Rerun},

			{From: Review, To: Planning, Label: "plan flawed", Cond: CondPlanFlawed},
			{From: Review, To: Codegen, Label: "needs code changes", Cond: CondNeedsCodeChanges},
			{From: Review, To: Test, Label: "review passes", Cond: CondReviewPasses, Requires: []CondName{CondNewReview}, Forward: true},

			{From: Test, To: Codegen, Label: "test failures", Cond: CondTestsFailed},
			{From: Test, To: Accept, Label: "tests complete", Cond: CondTestsComplete, Forward: true},

			{From: Accept, To: Revert, Label: "revert requested", Cond: CondRevertRequested},
			{From: Accept, To: Done, Label: "accepted", Cond: CondAccepted, Requires: []CondName{CondCommitted}, Forward: true},
			{From: Accept, To: Codegen, Label: "requires further changes", Cond: CondChangesToCodegen},
			{From: Accept, To: Review, Label: "unclear / needs review", Cond: CondChangesToReview},
			{From: Accept, To: Planning, Label: "upstream problem", Cond: CondChangesToPlanning},

			{From: Revert, To: Done, Label: "", Cond: CondRevertRecorded, Forward: true},
		},
	}
}

// From returns the edges leaving phase p, in decision order.
func (t *Table) From(p Phase) []Edge {
	var out []Edge
	for _, e := range t.Edges {
		if e.From == p {
			out = append(out, e)
		}
	}
	return out
}

// Decided returns the edges leaving p that `orch next` may take.
func (t *Table) Decided(p Phase) []Edge {
	var out []Edge
	for _, e := range t.From(p) {
		if e.Kind == Decided {
			out = append(out, e)
		}
	}
	return out
}

// Forward returns the main-line edge leaving p, if any.
func (t *Table) Forward(p Phase) (Edge, bool) {
	for _, e := range t.From(p) {
		if e.Forward {
			return e, true
		}
	}
	return Edge{}, false
}

// Path returns the shortest sequence of phases leading from `from` to `to`
// through decided edges, both ends included, and whether `to` is reachable.
// Among paths of equal length the one following the table's edge order wins,
// so the result is deterministic.
func (t *Table) Path(from, to Phase) ([]Phase, bool) {
	if from == to {
		return []Phase{from}, true
	}
	prev := map[Phase]Phase{from: from}
	queue := []Phase{from}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, e := range t.Decided(cur) {
			if _, seen := prev[e.To]; seen {
				continue
			}
			prev[e.To] = cur
			if e.To == to {
				var path []Phase
				for p := to; p != from; p = prev[p] {
					path = append([]Phase{p}, path...)
				}
				return append([]Phase{from}, path...), true
			}
			queue = append(queue, e.To)
		}
	}
	return nil, false
}
