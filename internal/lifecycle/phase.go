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

	"github.com/orchdev/orch/internal/clip"
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
		meant := ""
		if near := nearestPhase(norm); near != "" {
			meant = fmt.Sprintf(" (did you mean %q?)", near)
		}
		return "", fmt.Errorf("unknown phase %q%s: expected one of %s", s, meant, PhaseList())
	}
	return p, nil
}

// nearestPhase is the phase a mistyped name most likely meant, by the
// distance cobra uses for "did you mean" on commands: an edit distance of
// at most 2, or a prefix; "" when none is that close.
func nearestPhase(s string) string {
	best, bestD := "", 3
	for _, p := range Phases() {
		d := clip.EditDistance(s, string(p))
		if s != "" && strings.HasPrefix(string(p), s) {
			d = min(d, 2)
		}
		if d < bestD {
			best, bestD = string(p), d
		}
	}
	return best
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
