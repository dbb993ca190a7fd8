// Package event holds the kinds of transcript events: one struct per kind,
// the fields it carries in transcript.jsonl, and the catalogue the docs'
// event table is generated from.
//
// A transcript line is the common fields (seq, ts, kind, state, moves,
// prev; see internal/task) with the fields of one of these payloads
// flattened into the same JSON object. Writers hand a payload to
// task.Task.Append or task.Task.Commit; nothing writes a kind by name.
package event

import (
	"github.com/orchdev/orch/internal/lifecycle"
)

// Kind names an event kind, the transcript's "kind" field.
type Kind string

// The event kinds.
const (
	KindCreated        Kind = "created"
	KindRecovered      Kind = "recovered"
	KindTransition     Kind = "transition"
	KindOverride       Kind = "override"
	KindRedo           Kind = "redo"
	KindPhaseStarted   Kind = "phase_started"
	KindPhaseFinished  Kind = "phase_finished"
	KindModelCall      Kind = "model_call"
	KindBudgetExceeded Kind = "budget_exceeded"
	KindUserInput      Kind = "user_input"
	KindAdvice         Kind = "advice"
	KindGitIntent      Kind = "git_intent"
	KindGitDone        Kind = "git_done"
	KindMCPCall        Kind = "mcp_call"
)

// Payload is the kind-specific part of an event. Its JSON fields must not
// be one of the common fields (seq, ts, kind, state, moves, prev).
type Payload interface {
	Kind() Kind
}

// Created: the task was created, with its first state.
type Created struct {
	BriefSHA256 string `json:"brief_sha256" doc:"sha256 hex of planning/brief.md"`
}

// Recovered: a command found what a crash left and repaired it.
type Recovered struct {
	RemovedTemp     []string `json:"removed_temp,omitempty" doc:"stray temporary files of atomic writes that were removed"`
	TornBytes       int64    `json:"torn_bytes,omitempty" doc:"bytes of an incomplete last line cut off the transcript"`
	RolledForwardTo int64    `json:"rolled_forward_to,omitempty" doc:"the revision state.json was rolled forward to from the transcript"`
}

// Edge is one outgoing edge as evaluated for a decision.
type Edge struct {
	To        lifecycle.Phase    `json:"to"`
	Label     string             `json:"label,omitempty"`
	Condition lifecycle.CondName `json:"condition"`
	Holds     bool               `json:"holds"`
	Reason    string             `json:"reason"`
}

// Transition: `orch next` (or a phase command entering its phase) took an
// edge whose condition held.
type Transition struct {
	From      lifecycle.Phase    `json:"from" doc:"the phase left"`
	To        lifecycle.Phase    `json:"to" doc:"the phase entered"`
	Label     string             `json:"label" doc:"the edge's label in the seed's diagram"`
	Condition lifecycle.CondName `json:"condition" doc:"the edge's named condition"`
	Reason    string             `json:"reason" doc:"why the condition held"`
	Edges     []Edge             `json:"edges" doc:"every outgoing edge evaluated: to, label, condition, holds, reason"`
	Inputs    map[string]string  `json:"inputs,omitempty" doc:"sha256 of each artifact file the decision read"`
	Archived  string             `json:"archived,omitempty" doc:"history folder the stale artifacts of a backward move went to"`
	Evidence  map[string]string  `json:"evidence,omitempty" doc:"a gate's record (see the README: Evidence is bound to the change): the sha256 of what it judged, by key: plan_sha256, files_sha256, diff_sha256, review_sha256, report_sha256 (see the gates table)"`
}

// Override: `orch next --override` moved without checking conditions.
type Override struct {
	From              lifecycle.Phase   `json:"from" doc:"the phase left"`
	To                lifecycle.Phase   `json:"to" doc:"the phase entered"`
	Reason            string            `json:"reason" doc:"the person's reason"`
	Path              []lifecycle.Phase `json:"path" doc:"the phases from from to to through the graph"`
	SkippedPhases     []string          `json:"skipped_phases" doc:"the phases between from and to"`
	SkippedConditions []Edge            `json:"skipped_conditions" doc:"edges towards the next phase on the path that did not hold"`
	Edges             []Edge            `json:"edges" doc:"every outgoing edge evaluated"`
	Archived          string            `json:"archived,omitempty" doc:"history folder of a backward move"`
	Evidence          map[string]string `json:"evidence,omitempty" doc:"on a forward move, the sha256 of every bindable artifact present (plan_sha256, files_sha256, diff_sha256, review_sha256, report_sha256): what later gates and orch accept hold the change to"`
}

// Redo: `orch redo` re-opened a phase.
type Redo struct {
	From     lifecycle.Phase `json:"from" doc:"the phase the task was in"`
	To       lifecycle.Phase `json:"to" doc:"the phase re-opened"`
	Reason   string          `json:"reason" doc:"--reason, possibly empty"`
	Archived string          `json:"archived,omitempty" doc:"history folder the artifacts of to and later phases went to"`
}

// PhaseStarted: a phase's work began; the state marks the phase's actor
// running (a run whose pid is gone no longer blocks).
type PhaseStarted struct {
	Phase lifecycle.Phase `json:"phase" doc:"the phase run"`
	Run   string          `json:"run" doc:"the run's id"`
	PID   int             `json:"pid" doc:"the process doing the work"`
}

// PhaseFinished: a phase's work ended and its result was committed, with
// moves and the new state. A failed run leaves the actor's sub-state as it
// was and sets last_run.
type PhaseFinished struct {
	Phase    lifecycle.Phase `json:"phase" doc:"the phase run"`
	Run      string          `json:"run" doc:"the run's id"`
	Status   string          `json:"status" doc:"completed, a phase-specific status (passed, failed, decided, …), or failed/cancelled when the work failed"`
	Error    string          `json:"error,omitempty" doc:"why the work failed"`
	Kept     string          `json:"kept,omitempty" doc:"history folder keeping a failed run's partial output"`
	Archived string          `json:"archived,omitempty" doc:"history folder the previous attempt's artifacts went to"`
	Files    []string        `json:"files,omitzero" doc:"the artifacts moved into place (on success)"`
	Summary  *PhaseSummary   `json:"summary,omitzero" doc:"the phase's own summary of its result"`
}

// ModelCall: a model was called (or its answer read from the cache).
type ModelCall struct {
	Phase     lifecycle.Phase `json:"phase" doc:"the phase the call served"`
	Role      string          `json:"role" doc:"the agent role (planner, plan_reviewer, …)"`
	Provider  string          `json:"provider" doc:"the provider's name"`
	Model     string          `json:"model" doc:"the model"`
	TokensIn  int64           `json:"tokens_in" doc:"input tokens"`
	TokensOut int64           `json:"tokens_out" doc:"output tokens"`
	LatencyMS int64           `json:"latency_ms" doc:"duration of the call"`
	CostUSD   *float64        `json:"cost_usd,omitempty" doc:"cost in dollars when the price is known"`
	Cached    bool            `json:"cached" doc:"the answer came from orch's cache"`
	Error     string          `json:"error,omitempty" doc:"why the call failed"`
	// Prompt caching and the tool loop.
	CachedTokensIn   int64    `json:"cached_tokens_in,omitempty" doc:"input tokens read from the provider's prompt cache"`
	CacheWriteTokens int64    `json:"cache_write_tokens,omitempty" doc:"input tokens written to the provider's prompt cache"`
	Turn             int      `json:"turn,omitempty" doc:"the turn of the role's tool loop (1, 2, …); absent without tools"`
	ToolCalls        []string `json:"tool_calls,omitempty" doc:"the tools the model called in this turn, in order"`
	Truncated        bool     `json:"truncated,omitempty" doc:"the answer was cut off by the output limit and not used"`
	// The run it belongs to, by which the engine writes it once.
	Run string `json:"run,omitempty" doc:"the phase run that made the call (absent outside a run)"`
	N   int    `json:"n,omitempty" doc:"the record's number in its run (1, 2, …)"`
}

// BudgetLimit says which budget refused a call.
type BudgetLimit struct {
	Scope string `json:"scope" doc:"task or the phase"`
	Limit string `json:"limit" doc:"calls, tokens_in, tokens_out, cost_usd or wall_time"`
	Spent string `json:"spent" doc:"what was spent"`
	Max   string `json:"max" doc:"the limit's value"`
	Key   string `json:"key" doc:"the configuration key to raise"`
}

// BudgetExceeded: a model call was refused by a budget before it was made.
type BudgetExceeded struct {
	Phase lifecycle.Phase `json:"phase" doc:"the phase the call would have served"`
	Role  string          `json:"role" doc:"the agent role"`
	Error string          `json:"error" doc:"the refusal"`
	*BudgetLimit
	Run string `json:"run,omitempty" doc:"the phase run the call was refused in (absent outside a run)"`
	N   int    `json:"n,omitempty" doc:"the record's number in its run (1, 2, …)"`
}

// UserInput: a person's answer to a planning question.
type UserInput struct {
	Phase    lifecycle.Phase `json:"phase" doc:"planning"`
	Input    string          `json:"input" doc:"answer"`
	Question string          `json:"question" doc:"the question's id"`
	Answer   string          `json:"answer" doc:"the answer"`
	Previous *string         `json:"previous,omitempty" doc:"the answer it replaced"`
	File     string          `json:"file" doc:"the plan file changed"`
}

// Advice: the accept advisor's recommendation was written.
type Advice struct {
	Recommendation string   `json:"recommendation" doc:"accepted, changes_requested or rejected"`
	Target         string   `json:"target" doc:"with changes_requested: where to go back to"`
	Confidence     string   `json:"confidence" doc:"low, medium or high"`
	Files          []string `json:"files" doc:"the advice files written"`
	Cautions       int      `json:"cautions" doc:"how many cautions orch added from the evidence"`
}

// GitIntent: `orch accept` or `orch revert` built a commit (objects only,
// on no branch) and is about to move the branch to it and bring the
// touched paths of the index and work tree along. Logged before any of
// that; a git_done with the same run closes it.
type GitIntent struct {
	Op      string   `json:"op" doc:"accept or revert"`
	Run     string   `json:"run" doc:"the phase run's id"`
	Ref     string   `json:"ref" doc:"the branch moved (refs/heads/…)"`
	Old     string   `json:"old" doc:"the commit the branch holds before"`
	New     string   `json:"new" doc:"the commit built, whose parent is old"`
	Paths   []string `json:"paths" doc:"the paths the commit changes: the only index entries and files orch touches"`
	Reverts string   `json:"reverts,omitempty" doc:"revert: the commit undone"`
}

// Outcomes of a git effect (GitDone.Outcome).
const (
	GitCommitted = "committed"
	GitAborted   = "aborted"
)

// GitDone: the git effect of a git_intent ended, in the command that
// logged it or, after that one died, in the next orch command.
type GitDone struct {
	Op        string   `json:"op" doc:"accept or revert"`
	Run       string   `json:"run" doc:"the run of the intent it closes"`
	Outcome   string   `json:"outcome" doc:"committed (the branch holds new) or aborted (it never moved: nothing changed)"`
	Commit    string   `json:"commit,omitempty" doc:"committed: the new commit"`
	Recovered bool     `json:"recovered,omitempty" doc:"finished by a later command because the one that logged the intent died"`
	Left      []string `json:"left,omitempty" doc:"touched paths someone else changed meanwhile: left as they were"`
	Note      string   `json:"note,omitempty" doc:"what happened, in words"`
}

// MCPCall: an MCP client of `orch mcp` called a tool that acts on the
// task. Logged after the action, whatever its outcome; the action's own
// events (transition, user_input, phase_started, …) precede it.
type MCPCall struct {
	Client    string            `json:"client" doc:"the client as it introduced itself: clientInfo name and version"`
	Transport string            `json:"transport" doc:"stdio or http"`
	Tool      string            `json:"tool" doc:"the tool called"`
	Args      map[string]string `json:"args,omitempty" doc:"the call's arguments; content and long text as sha256 and length"`
	Outcome   string            `json:"outcome" doc:"ok, refused (nothing changed) or failed"`
	Error     string            `json:"error,omitempty" doc:"why it was refused or failed"`
}

func (Created) Kind() Kind        { return KindCreated }
func (Recovered) Kind() Kind      { return KindRecovered }
func (Transition) Kind() Kind     { return KindTransition }
func (Override) Kind() Kind       { return KindOverride }
func (Redo) Kind() Kind           { return KindRedo }
func (PhaseStarted) Kind() Kind   { return KindPhaseStarted }
func (PhaseFinished) Kind() Kind  { return KindPhaseFinished }
func (ModelCall) Kind() Kind      { return KindModelCall }
func (BudgetExceeded) Kind() Kind { return KindBudgetExceeded }
func (UserInput) Kind() Kind      { return KindUserInput }
func (Advice) Kind() Kind         { return KindAdvice }
func (GitIntent) Kind() Kind      { return KindGitIntent }
func (GitDone) Kind() Kind        { return KindGitDone }
func (MCPCall) Kind() Kind        { return KindMCPCall }

// RunRecord is a record a phase run hands to the engine (a model call, a
// refused budget): the engine numbers it within the run and writes it
// once, keyed by the run's id and that number.
type RunRecord interface {
	Payload
	// Keyed returns the record with its run and number set.
	Keyed(run string, n int) Payload
	// Key returns the record's run and number.
	Key() (run string, n int)
}

// Keyed returns c as record n of run.
func (c ModelCall) Keyed(run string, n int) Payload { c.Run, c.N = run, n; return c }

// Key returns c's run and number.
func (c ModelCall) Key() (string, int) { return c.Run, c.N }

// Keyed returns b as record n of run.
func (b BudgetExceeded) Keyed(run string, n int) Payload { b.Run, b.N = run, n; return b }

// Key returns b's run and number.
func (b BudgetExceeded) Key() (string, int) { return b.Run, b.N }

// Catalogue returns one zero payload of every kind, in the docs' order.
func Catalogue() []Payload {
	return []Payload{
		Created{}, Recovered{}, Transition{}, Override{}, Redo{},
		PhaseStarted{}, PhaseFinished{}, ModelCall{}, BudgetExceeded{},
		UserInput{}, Advice{}, GitIntent{}, GitDone{}, MCPCall{},
	}
}
