// Package worker is the one registry of phase workers: for each phase, the
// code that produces its artifacts. The CLI's phase commands (and through
// them the REPL), `orch run` (the autopilot) and `orch demo` all find a
// phase's work here; Registry below is the answer to "where does phase X's
// work happen".
//
// Every phase's work is a work.Worker of its own package (planner.Worker,
// review.PlanWorker, codegen.Worker, review.CodeWorker, testphase.Worker,
// landing.Acceptor, landing.Reverter), run by the engine
// (orchestrator.Run): enter the phase if its edge holds, mark it running,
// hand the worker its input, commit what it staged with a revision check.
// The worker never calls the engine (docs/workers.md).
package worker

import (
	"context"

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
	"github.com/orchdev/orch/internal/work"
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
// typed result, in the field of its phase (nil in the others).
type Outcome struct {
	Phase      orchestrator.PhaseResult
	Plan       *planner.Result
	PlanReview *review.PlanResult
	Codegen    *codegen.Result
	CodeReview *review.CodeResult
	Test       *testphase.Result
	Accept     *landing.AcceptResult
	Revert     *landing.RevertResult
	// Done is the transition into done that follows a revert.
	Done *orchestrator.NextResult
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

// commands names the orch command of each phase's worker.
var commands = map[lifecycle.Phase]string{
	lifecycle.Planning:   "plan",
	lifecycle.PlanReview: "review plan",
	lifecycle.Codegen:    "codegen",
	lifecycle.Review:     "review code",
	lifecycle.Test:       "test",
	lifecycle.Accept:     "accept",
	lifecycle.Revert:     "revert",
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
		Func(lifecycle.Planning, commands[lifecycle.Planning], func(ctx context.Context, run Run) (Outcome, error) {
			return do(ctx, o, run.Task, planner.Worker{RT: d.Agents}, func(out *Outcome, r *planner.Result) { out.Plan = r })
		}),
		Func(lifecycle.PlanReview, commands[lifecycle.PlanReview], func(ctx context.Context, run Run) (Outcome, error) {
			return do(ctx, o, run.Task, review.PlanWorker{RT: d.Agents}, func(out *Outcome, r *review.PlanResult) { out.PlanReview = r })
		}),
		Func(lifecycle.Codegen, commands[lifecycle.Codegen], func(ctx context.Context, run Run) (Outcome, error) {
			// run_tests runs the suites like orch test, in worktrees of its
			// own below the build cache when the warm one is busy.
			tests := testphase.Runner{Config: cfg, OwnWorktrees: codegen.RunTestsDir}
			return do(ctx, o, run.Task, codegen.Worker{RT: d.Agents, Tests: tests}, func(out *Outcome, r *codegen.Result) { out.Codegen = r })
		}),
		Func(lifecycle.Review, commands[lifecycle.Review], func(ctx context.Context, run Run) (Outcome, error) {
			return do(ctx, o, run.Task, review.CodeWorker{RT: d.Agents}, func(out *Outcome, r *review.CodeResult) { out.CodeReview = r })
		}),
		Func(lifecycle.Test, commands[lifecycle.Test], func(ctx context.Context, run Run) (Outcome, error) {
			return do(ctx, o, run.Task, testphase.Worker{Config: cfg, Options: test(run)}, func(out *Outcome, r *testphase.Result) { out.Test = r })
		}),
		Func(lifecycle.Accept, commands[lifecycle.Accept], func(ctx context.Context, run Run) (Outcome, error) {
			opt := run.Accept
			if opt == nil {
				opt = d.Accept
			}
			if opt == nil {
				return Outcome{}, exit.New(exit.ErrUsage, "accept for task %s needs a decision: `orch accept --verdict V --reason R`", run.Task)
			}
			dec := *opt
			if run.Seen != 0 && dec.Expect.Empty() {
				dec.Expect.Revision = run.Seen
			}
			// The regression check after HEAD moved runs the suites with
			// the decision's test settings.
			tests := testphase.Runner{Config: cfg, Options: work.TestOptions{Sandbox: dec.Test.Sandbox, Stream: dec.Test.Stream, Env: dec.Test.Env}}
			return do(ctx, o, run.Task, &landing.Acceptor{Options: dec, Engine: o, Tests: tests}, func(out *Outcome, r *landing.AcceptResult) { out.Accept = r })
		}),
		Func(lifecycle.Revert, commands[lifecycle.Revert], func(ctx context.Context, run Run) (Outcome, error) {
			out, err := do(ctx, o, run.Task, landing.Reverter{Reason: run.Reason, Engine: o}, func(out *Outcome, r *landing.RevertResult) { out.Revert = r })
			if err != nil {
				return out, err
			}
			// The revert is recorded: the task moves on to done.
			nr, err := o.Next(ctx, run.Task, orchestrator.NextRequest{From: lifecycle.Revert})
			if err != nil {
				return out, err
			}
			out.Done = &nr
			return out, nil
		}),
	)
}

// do runs w for task id through the engine and files its typed result in
// the outcome with put.
func do[R any](ctx context.Context, o *orchestrator.Orchestrator, id string, w work.Worker[R], put func(*Outcome, *R)) (Outcome, error) {
	pr, res, err := orchestrator.Run(ctx, o, id, w)
	out := Outcome{Phase: pr}
	put(&out, &res.Value)
	return out, err
}

// Commands names the orch command of each phase's worker ("review plan").
func Commands() map[lifecycle.Phase]string {
	out := make(map[lifecycle.Phase]string, len(commands))
	for p, c := range commands {
		out[p] = c
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

// Submit runs the codegen phase of task id with answer, code written by
// someone else than orch's codegen model (codegen.Submitter).
func Submit(ctx context.Context, rt *agent.Runtime, o *orchestrator.Orchestrator, id string, answer []byte) (orchestrator.PhaseResult, codegen.Result, error) {
	pr, res, err := orchestrator.Run(ctx, o, id, codegen.Submitter{RT: rt, Answer: answer})
	return pr, res.Value, err
}
