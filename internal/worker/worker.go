// Package worker is the one registry of phase workers: for each phase, the
// code that produces its artifacts. The CLI's phase commands (and through
// them the REPL), `orch run` (the autopilot) and `orch demo` all find a
// phase's work here; Registry below is the answer to "where does phase X's
// work happen".
//
// Every worker follows the orchestrator's phase protocol
// (orchestrator.RunPhase): enter the phase if its edge holds, mark it
// running, work outside the lock into a staging folder, commit the result
// with a revision check.
package worker

import (
	"context"
	"fmt"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/agent/codegen"
	"github.com/orchdev/orch/internal/agent/planner"
	"github.com/orchdev/orch/internal/agent/review"
	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/landing"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/testphase"
)

// Run is one request for a phase's work.
type Run struct {
	// Task is the task's id.
	Task string
	// Test replaces the registry's test options for this run (orch test
	// --keep, --sandbox).
	Test *testphase.Options
	// Accept is the decision to record (orch accept); nil means the
	// registry's standing decision (orch run --yes), if it has one.
	Accept *landing.AcceptOptions
	// Reason is why the change is reverted (revert only).
	Reason string
	// Seen is the task's revision the caller decided on (accept with the
	// registry's standing decision: orch run --yes); 0 names none.
	Seen int64
}

// Outcome is what a worker reports: the committed run and the phase's own
// result, one of planner.PlanResult, review.PlanReviewResult,
// codegen.CodegenResult, review.CodeReviewResult, testphase.Result,
// landing.AcceptResult or landing.RevertResult.
type Outcome struct {
	Phase  orchestrator.PhaseResult
	Result any
}

// Worker does one phase's work.
type Worker interface {
	// Phase is the phase whose artifacts the worker produces.
	Phase() lifecycle.Phase
	// Command is the orch command that runs it ("review plan").
	Command() string
	// Work runs the phase for run.Task.
	Work(ctx context.Context, run Run) (Outcome, error)
}

// Func makes a Worker of a function.
func Func(p lifecycle.Phase, command string, work func(ctx context.Context, run Run) (Outcome, error)) Worker {
	return funcWorker{phase: p, command: command, work: work}
}

type funcWorker struct {
	phase   lifecycle.Phase
	command string
	work    func(ctx context.Context, run Run) (Outcome, error)
}

func (w funcWorker) Phase() lifecycle.Phase                           { return w.phase }
func (w funcWorker) Command() string                                  { return w.command }
func (w funcWorker) Work(ctx context.Context, r Run) (Outcome, error) { return w.work(ctx, r) }

// Set holds one worker per phase.
type Set map[lifecycle.Phase]Worker

// For returns the worker of phase p.
func (s Set) For(p lifecycle.Phase) (Worker, bool) {
	w, ok := s[p]
	return w, ok
}

// Deps is what the workers work with.
type Deps struct {
	Orch   *orchestrator.Orchestrator
	Config config.Config
	// Agents serves the model-backed phases (plan, review plan, codegen,
	// review code).
	Agents *agent.Runtime
	// Test are the test options of the test phase and of accept's
	// regression check.
	Test testphase.Options
	// Accept is the standing decision of the accept worker when a run
	// brings none (orch run --yes); nil means accept needs one.
	Accept *landing.AcceptOptions
}

// Registry returns the worker of every phase that has work: the one table
// from a phase to the code that produces its artifacts.
func Registry(d Deps) Set {
	o, cfg := d.Orch, d.Config
	test := func(run Run) testphase.Options {
		if run.Test != nil {
			return *run.Test
		}
		return d.Test
	}
	return set(
		Func(lifecycle.Planning, "plan", func(ctx context.Context, run Run) (Outcome, error) {
			res, err := planner.Plan(ctx, d.Agents, o, run.Task)
			return Outcome{Phase: res.Phase, Result: res}, err
		}),
		Func(lifecycle.PlanReview, "review plan", func(ctx context.Context, run Run) (Outcome, error) {
			res, err := review.Plan(ctx, d.Agents, o, run.Task)
			return Outcome{Phase: res.Phase, Result: res}, err
		}),
		Func(lifecycle.Codegen, "codegen", func(ctx context.Context, run Run) (Outcome, error) {
			res, err := codegen.Run(ctx, d.Agents, o, run.Task)
			return Outcome{Phase: res.Phase, Result: res}, err
		}),
		Func(lifecycle.Review, "review code", func(ctx context.Context, run Run) (Outcome, error) {
			res, err := review.Code(ctx, d.Agents, o, run.Task)
			return Outcome{Phase: res.Phase, Result: res}, err
		}),
		Func(lifecycle.Test, "test", func(ctx context.Context, run Run) (Outcome, error) {
			res, err := testphase.Run(ctx, o, cfg, run.Task, test(run))
			return Outcome{Phase: res.Phase, Result: res}, err
		}),
		Func(lifecycle.Accept, "accept", func(ctx context.Context, run Run) (Outcome, error) {
			opt := run.Accept
			if opt == nil {
				opt = d.Accept
			}
			if opt == nil {
				return Outcome{}, exit.UsageError(fmt.Sprintf("orch: accept for task %s needs a decision: `orch accept --verdict V --reason R`", run.Task))
			}
			dec := *opt
			if run.Seen != 0 && dec.Expect.Empty() {
				dec.Expect.Revision = run.Seen
			}
			res, err := landing.Accept(ctx, o, cfg, run.Task, dec)
			return Outcome{Phase: res.Phase, Result: res}, err
		}),
		Func(lifecycle.Revert, "revert", func(ctx context.Context, run Run) (Outcome, error) {
			res, err := landing.Revert(ctx, o, run.Task, run.Reason)
			return Outcome{Phase: res.Phase, Result: res}, err
		}),
	)
}

// Commands names the orch command of each phase's worker ("review plan").
func Commands() map[lifecycle.Phase]string {
	out := map[lifecycle.Phase]string{}
	for p, w := range Registry(Deps{}) {
		out[p] = w.Command()
	}
	return out
}

func set(ws ...Worker) Set {
	s := make(Set, len(ws))
	for _, w := range ws {
		s[w.Phase()] = w
	}
	return s
}
