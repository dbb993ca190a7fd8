// Package lifecycle holds orch's task lifecycle as data: the phases, the one
// transition table (edges, labels, named conditions, decision order), the
// pure decision function over a snapshot of inspected artifacts, and the
// Mermaid rendering of the table.
//
// Nothing in this package touches the disk: callers observe artifacts into a
// Snapshot, call Decide, and apply the outcome themselves.
package lifecycle

import (
	"fmt"
	"strings"
)

// Phase is a top-level lifecycle state.
type Phase string

// The eight phases, in lifecycle order.
const (
	Planning   Phase = "planning"
	PlanReview Phase = "plan_review"
	Codegen    Phase = "codegen"
	Review     Phase = "review"
	Test       Phase = "test"
	Accept     Phase = "accept"
	Revert     Phase = "revert"
	Done       Phase = "done"
)

// Phases returns every phase in lifecycle order.
func Phases() []Phase {
	return []Phase{Planning, PlanReview, Codegen, Review, Test, Accept, Revert, Done}
}

// Index returns the phase's position in lifecycle order, or -1 when the
// phase is unknown.
func (p Phase) Index() int {
	for i, q := range Phases() {
		if q == p {
			return i
		}
	}
	return -1
}

// Valid reports whether p is one of the eight phases.
func (p Phase) Valid() bool { return p.Index() >= 0 }

// Terminal reports whether p is the terminal phase.
func (p Phase) Terminal() bool { return p == Done }

// ParsePhase converts a phase name to a Phase. It accepts the names of
// state.json ("plan_review") and the spaced form of the CLI ("plan review").
func ParsePhase(s string) (Phase, error) {
	norm := strings.ReplaceAll(strings.TrimSpace(strings.ToLower(s)), " ", "_")
	norm = strings.ReplaceAll(norm, "-", "_")
	p := Phase(norm)
	if !p.Valid() {
		return "", fmt.Errorf("unknown phase %q: expected one of %s", s, PhaseList())
	}
	return p, nil
}

// PhaseList names the phases in lifecycle order, for messages:
// "planning, plan_review, …, done".
func PhaseList() string {
	names := make([]string, 0, 8)
	for _, p := range Phases() {
		names = append(names, string(p))
	}
	return strings.Join(names, ", ")
}
