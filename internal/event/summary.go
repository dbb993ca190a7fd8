package event

import (
	"encoding/json"
	"maps"
	"slices"

	"github.com/orchdev/orch/internal/artifact"
)

// PhaseSummary is a phase's own summary of its result, carried by its
// phase_finished event and handed to the front ends (orch mcp's run_phase)
// as the worker's typed output: the fields of the phase that ran, the
// others absent. Counts and flags are pointers so that a zero that was
// reported (no blocking issue, ok false) is told from one that was not.
type PhaseSummary struct {
	// Status is the phase's own status word (planning's actor status,
	// codegen.json's status, the test report's status, a revert's).
	Status string `json:"status,omitempty"`

	// Planning.
	Round           *int     `json:"round,omitempty"`
	OpenQuestions   []string `json:"open_questions,omitzero"`
	RestoredAnswers []string `json:"restored_answers,omitzero"`
	// Files is the file plan's size (planning) or the files written
	// (codegen).
	Files *int `json:"files,omitempty"`

	// Plan review and code review.
	OK        *bool `json:"ok,omitempty"`
	Reviewers *int  `json:"reviewers,omitempty"`
	// Plan review.
	Blocked    *bool  `json:"blocked,omitempty"`
	PlanSHA256 string `json:"plan_sha256,omitempty"`
	// Code review.
	Issues   *int `json:"issues,omitempty"`
	Blocking *int `json:"blocking,omitempty"`

	// Codegen (Base also for test).
	Base      string   `json:"base,omitempty"`
	Deletes   *int     `json:"deletes,omitempty"`
	Unplanned []string `json:"unplanned,omitempty"`
	Attempt   *int     `json:"attempt,omitempty"`

	// Test.
	OverallPass *bool             `json:"overall_pass,omitempty"`
	Tests       *artifact.Summary `json:"summary,omitempty"`
	Sandbox     string            `json:"sandbox,omitempty"`

	// Accept.
	Verdict    string            `json:"verdict,omitempty"`
	Target     string            `json:"target,omitempty"`
	Commit     string            `json:"commit,omitempty"`
	Regression *bool             `json:"regression,omitempty"`
	Decider    *artifact.Decider `json:"decider,omitempty"`
	Judged     *Judged           `json:"judged,omitempty"`

	// Revert.
	RevertedCommit string `json:"reverted_commit,omitempty"`
	RevertCommit   string `json:"revert_commit,omitempty"`
}

// Judged names the revision of a task and the evidence hashes a decision
// was made on.
type Judged struct {
	Revision int64             `json:"revision"`
	SHA256   map[string]string `json:"sha256"`
}

// Ref returns a pointer to v, for PhaseSummary's counts and flags.
func Ref[T any](v T) *T { return &v }

// SummaryField is one field a phase reported in its summary: its JSON
// name and its value as JSON text.
type SummaryField struct {
	Name, Value string
}

// Fields lists the fields s reports, by name, as its phase_finished
// event holds them (for the log and the board's timeline).
func (s *PhaseSummary) Fields() []SummaryField {
	if s == nil {
		return nil
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	out := make([]SummaryField, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, SummaryField{Name: k, Value: string(m[k])})
	}
	return out
}
