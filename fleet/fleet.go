// Package fleet runs orch's tasks on Temporal (docs/fleet.md): one
// workflow per task, whose next step is orch's own pure decision
// (lifecycle.Pilot over the task's status, run inside the workflow), the
// phases' work and every change of the task as activities run by `orch
// worker` processes on any machine with a clone of the repository, the
// human gates as Updates whose validators are orch's own checks, and
// status and log as Queries.
//
// A task travels between machines as a git ref of the shared remote,
// refs/orch/tasks/<id>, whose tree is the task's folder: an activity
// fetches it, lets orch's engine do the step in the worker's clone
// (orchestrator.Run, Next, Redo, planner.Answer: the same code, locks and
// records as on one machine), and pushes the folder back as a new commit
// whose parent is the one the workflow knew and whose message names the
// activity (the Orch-Activity trailer). A retried activity therefore never
// commits twice: it finds its own commit and returns it.
//
// The package is linked only into orch-fleet (cmd/orch-fleet), never into
// orch: the Temporal SDK's initialisers stay out of every orch command.
package fleet

import (
	"encoding/json"
	"time"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/nextstep"
)

// Names the workflow, its queries and updates and the task queues are
// registered under.
const (
	WorkflowName = "orch.task"

	QueryStatus  = "status"
	QueryLog     = "log"
	QueryHistory = "history"

	UpdateAnswer   = "answer"
	UpdateAccept   = "accept"
	UpdateOverride = "override"
	UpdateRedo     = "redo"

	// QueueModel serves the model-backed phases (plan, plan review,
	// codegen, code review) and the short steps (observe, next, the
	// gates' edits); QueueTest the test phase; QueueLand accept and
	// revert, on the worker that holds the repository's branch.
	QueueModel = "orch-model"
	QueueTest  = "orch-test"
	QueueLand  = "orch-land"
)

// WorkflowID is the id of task id's workflow.
func WorkflowID(id string) string { return "orch-task-" + id }

// TaskRef is the ref of the shared remote that holds task id's folder.
func TaskRef(id string) string { return "refs/orch/tasks/" + id }

// LocalRef is a clone's copy of task id's ref. It lives under
// refs/remotes/, as a remote-tracking ref does: it moves whenever a step
// of any task fetches or pushes in the clone, and orch's check that a test
// run left the repository alone (accept's regression run on the landing
// worker, while other tasks' steps run there) leaves remote-tracking refs
// out.
func LocalRef(id string) string { return "refs/remotes/orch-fleet/tasks/" + id }

// Params start a task's workflow.
type Params struct {
	// Task is the task's id; Head the commit of its ref when submitted.
	Task string `json:"task"`
	Head string `json:"head"`
	// MaxAttempts bounds codegen runs (lifecycle.Pilot; default 3).
	MaxAttempts int `json:"max_attempts,omitempty"`
	// HeartbeatTimeout and StartToClose bound an activity: a worker
	// silent for HeartbeatTimeout is taken for dead and its activity
	// retried elsewhere. Zero means the defaults (DefaultHeartbeat,
	// DefaultStartToClose).
	HeartbeatTimeout time.Duration `json:"heartbeat_timeout,omitempty"`
	StartToClose     time.Duration `json:"start_to_close,omitempty"`
}

// Default activity bounds.
const (
	DefaultHeartbeat    = 20 * time.Second
	DefaultStartToClose = 2 * time.Hour
)

// Observation is what a step leaves: the task's ref after it, and the
// task's status as orch computes it there. The workflow decides its next
// step from it (lifecycle.Pilot) and answers its queries with it.
type Observation struct {
	// Head is the task ref's commit after the step.
	Head string `json:"head"`
	// Phase, Revision, Movable, Reason and Invalid are the status's
	// (orch status): Movable when it suggests a transition.
	Phase    lifecycle.Phase `json:"phase"`
	Revision int64           `json:"revision"`
	Movable  bool            `json:"movable"`
	Reason   string          `json:"reason"`
	Invalid  []string        `json:"invalid,omitempty"`
	// Running lists the phases with a live run in the committed state
	// (none normally: a step commits before it returns).
	Running []lifecycle.Phase `json:"running,omitempty"`
	// Plan is what the answer gate checks: whether planning.ai.json is
	// present, its error, its questions.
	Plan PlanView `json:"plan"`
	// Step is the command that moves the task on (orch status's "run:"
	// line): the accept and revert gates name it when they refuse.
	Step nextstep.Step `json:"step"`
	// Status is `orch status --json` of the task; Log `orch log --json`
	// (the transcript's events, one JSON value each).
	Status json.RawMessage   `json:"status"`
	Log    []json.RawMessage `json:"log"`
	// Artifacts maps each file of the task folder, by task-relative
	// path, to its sha256: the evidence binding as committed to the ref.
	Artifacts map[string]string `json:"artifacts"`
}

// PlanView is the plan as the answer gate sees it.
type PlanView struct {
	Present   bool                `json:"present"`
	Err       string              `json:"err,omitempty"`
	Questions []artifact.Question `json:"questions,omitempty"`
}

// StepKind names an activity's step.
type StepKind string

// The steps.
const (
	StepObserve  StepKind = "observe"
	StepWork     StepKind = "work"
	StepNext     StepKind = "next"
	StepAnswer   StepKind = "answer"
	StepAccept   StepKind = "accept"
	StepOverride StepKind = "override"
	StepRedo     StepKind = "redo"
	StepRevert   StepKind = "revert"
)

// Step is one activity's request: a step on task Task whose ref the
// workflow knows at Head.
type Step struct {
	Kind  StepKind        `json:"kind"`
	Task  string          `json:"task"`
	Head  string          `json:"head"`
	Phase lifecycle.Phase `json:"phase,omitempty"`
	// The gates' requests.
	Answer   *AnswerRequest   `json:"answer,omitempty"`
	Accept   *AcceptRequest   `json:"accept,omitempty"`
	Override *OverrideRequest `json:"override,omitempty"`
	Redo     *RedoRequest     `json:"redo,omitempty"`
	// Reason is a revert's reason.
	Reason string `json:"reason,omitempty"`
}

// StepResult is an activity's answer: the observation after the step, and
// what it changed.
type StepResult struct {
	Observation
	// Commit is the commit the step pushed ("" when it changed nothing);
	// Reused when a retried activity found its own commit already there.
	Commit string `json:"commit,omitempty"`
	Reused bool   `json:"reused,omitempty"`
	// Worker is the identity of the worker that did the step.
	Worker string `json:"worker"`
	// Error is orch's refusal of a gate's step, with its exit code
	// (the step changed nothing).
	Error    string   `json:"error,omitempty"`
	ExitCode int      `json:"exit_code,omitempty"`
	Hints    []string `json:"hints,omitempty"`
}

// AnswerRequest answers question Question with Text.
type AnswerRequest struct {
	Question string `json:"question"`
	Text     string `json:"text"`
}

// AcceptRequest is orch accept's decision.
type AcceptRequest struct {
	Verdict         string   `json:"verdict"`
	Target          string   `json:"target,omitempty"`
	Reasons         []string `json:"reasons"`
	Decider         string   `json:"decider,omitempty"`
	AllowIncomplete bool     `json:"allow_incomplete,omitempty"`
	// Revision, when not 0, is the task's revision the person decided on.
	Revision int64 `json:"revision,omitempty"`
}

// OverrideRequest is orch next --override REASON [--to PHASE].
type OverrideRequest struct {
	Reason string          `json:"reason"`
	To     lifecycle.Phase `json:"to,omitempty"`
}

// RedoRequest is orch redo [PHASE] --reason REASON.
type RedoRequest struct {
	Phase  lifecycle.Phase `json:"phase,omitempty"`
	Reason string          `json:"reason,omitempty"`
}

// GateResult is what a gate's Update returns.
type GateResult struct {
	Phase    lifecycle.Phase `json:"phase"`
	Revision int64           `json:"revision"`
	Commit   string          `json:"commit,omitempty"`
}

// HistoryEntry is one step of the workflow, as its Query "history"
// returns it: the commit it pushed and the artifacts' hashes there.
type HistoryEntry struct {
	Kind      StepKind          `json:"kind"`
	Phase     lifecycle.Phase   `json:"phase,omitempty"`
	Commit    string            `json:"commit,omitempty"`
	Reused    bool              `json:"reused,omitempty"`
	Worker    string            `json:"worker,omitempty"`
	Artifacts map[string]string `json:"artifacts,omitempty"`
}

// Final is the workflow's result: the task is done.
type Final struct {
	Task string `json:"task"`
	Head string `json:"head"`
}
