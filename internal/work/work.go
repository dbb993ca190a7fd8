// Package work is the contract between orch's engine and a phase's worker
// (docs/workers.md). A worker is
// Work(ctx, Input) (Output, error): everything it may use comes in its
// Input — the task's committed folder (read only), the repository and the
// base commit, its run's id, counters and the budget spent — and everything it produces goes
// out through the Input's stage (the files) and recorder (the records) and
// its Output (the status). The engine (internal/orchestrator) alone locks
// the task, enters the phase, marks it running, commits the staged files
// with a revision check and writes the records, keyed by the run id.
//
// Worker packages import this package, never the engine or the task store
// (internal/layers' test says so); the engine runs any Worker.
package work

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/lifecycle"
)

// Input is what a phase's work is given.
type Input struct {
	// Task is the task's id, Phase the phase the work is for.
	Task  string
	Phase lifecycle.Phase
	// Run is the run's id ("" in a Check, before the run exists); the
	// engine keys the run's records by it.
	Run string
	// Revision is the task's revision once the phase was marked running
	// (in a Check: the committed revision).
	Revision int64
	// Base is the repository's HEAD when the run started, the commit the
	// work is made against; "" when it could not be read (BaseErr says
	// why).
	Base    string
	BaseErr error
	// Repo is the repository at Base, read only (nil when Base could not
	// be read): workers read tracked files through it, not from Root.
	Repo Repo
	// Dir is the task's folder as committed. Work reads it and never
	// writes it: what it produces goes to Out.
	Dir string
	// Root is the repository's root folder.
	Root string
	// Current is the task's phase as committed (in a Check, it may differ
	// from Phase: the engine enters Phase if its edge holds).
	Current lifecycle.Phase
	// Running holds the phases with a live run and their processes' ids,
	// as committed.
	Running map[lifecycle.Phase]int
	// Counters are the actors' round and attempt counters as committed
	// (planning rounds, codegen attempts).
	Counters map[lifecycle.Phase]Counter
	// Now is when the run started.
	Now time.Time
	// Spent is what the task's model calls used, as committed when the
	// run started (a killed run's records included, once): the worker's
	// budget left is its limits less this, plus what its own calls use.
	Spent Spent
	// Out is where the run's files are staged (task-relative paths);
	// nothing written there is visible in the task folder before the
	// engine commits the run. Zero in a Check.
	Out Stage
	// Records receives the run's records (model calls, refused budgets)
	// as they happen; the engine writes them with the run's commit. Nil
	// in a Check: records are dropped.
	Records Recorder
}

// Counter is one actor's counters.
type Counter struct {
	Round, Attempt int
}

// Round returns phase p's round counter as committed.
func (in Input) Round(p lifecycle.Phase) int { return in.Counters[p].Round }

// Attempt returns phase p's attempt counter as committed.
func (in Input) Attempt(p lifecycle.Phase) int { return in.Counters[p].Attempt }

// Record hands p to the input's recorder, if it has one.
func (in Input) Record(p event.Payload) {
	if in.Records != nil {
		in.Records.Record(p)
	}
}

// Recorder receives a run's records.
type Recorder interface {
	Record(event.Payload)
}

// Output is what a phase's work reports besides its staged files.
type Output struct {
	// Status is the phase actor's status after the run; "" means
	// completed.
	Status lifecycle.Status
	// Round and Attempt, when not zero, are set on the phase's actor
	// (planning rounds, codegen attempts).
	Round, Attempt int
	// Summary is recorded in the phase_finished event.
	Summary *event.PhaseSummary
}

// Result is a worker's output with its phase's own typed result R (what
// the command that ran it shows).
type Result[R any] struct {
	Output
	Value R
}

// Worker does one phase's work. R is the phase's typed result.
type Worker[R any] interface {
	// Phase is the phase whose artifacts the worker produces.
	Phase() lifecycle.Phase
	// Check refuses, before the phase is entered or marked running, what
	// the work would refuse anyway (a missing plan, a bad answer): the
	// refusal changes nothing. in has no run, stage or recorder.
	Check(ctx context.Context, in Input) error
	// Work produces the phase's artifacts into in.Out. On an error, the
	// result still carries what is known (the engine keeps the staged
	// files aside).
	Work(ctx context.Context, in Input) (Result[R], error)
}

// Stage is the folder a run's files are staged in, by task-relative path.
type Stage struct {
	// Dir is the staging folder's absolute path.
	Dir string
}

// Path returns the absolute staging path of the task-relative artifact
// rel, creating its parent folders.
func (s Stage) Path(rel string) (string, error) {
	if s.Dir == "" {
		return "", fmt.Errorf("stage %s: no staging folder (a check stages nothing)", rel)
	}
	p := filepath.Join(s.Dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", fmt.Errorf("stage %s: %w", rel, err)
	}
	return p, nil
}

// Write stages data as the task-relative artifact rel.
func (s Stage) Write(rel string, data []byte) error {
	p, err := s.Path(rel)
	if err != nil {
		return err
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		return fmt.Errorf("stage %s: %w", rel, err)
	}
	return nil
}

// WriteJSON stages v, as indented JSON ending in a newline, as the
// task-relative artifact rel.
func (s Stage) WriteJSON(rel string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("stage %s: %w", rel, err)
	}
	return s.Write(rel, append(data, '\n'))
}

// Tasks is the engine's side of a short edit of a task outside a phase
// run (a person's answer, the accept advisor's advice): the engine locks
// the task, finishes an interrupted commit, and hands fn the task as
// committed. *orchestrator.Orchestrator is one.
type Tasks interface {
	Edit(ctx context.Context, id string, fn func(t Locked) error) error
}

// Locked is a task held under its lock, as committed.
type Locked interface {
	// ID is the task's id, Dir its folder.
	ID() string
	Dir() string
	// Phase and Revision are the task's as committed.
	Phase() lifecycle.Phase
	Revision() int64
	// Running returns the live process running phase p, if any.
	Running(p lifecycle.Phase) (pid int, ok bool)
	// Now is the engine's clock.
	Now() time.Time
	// Append records p in the task's transcript.
	Append(p event.Payload) error
	// Spent is what the task's recorded model calls used.
	Spent() (Spent, error)
}
