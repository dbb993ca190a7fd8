package cli

import (
	"context"
	"fmt"
	"io"
	"path"
	"time"

	"github.com/spf13/cobra"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/task"
	"github.com/orchdev/orch/internal/worker"
)

// agentCall is the frame shared by the commands that run an agent (plan,
// review plan, codegen, review code): the orchestrator, the runtime, the
// task, and where output and streamed tokens go.
type agentCall struct {
	o    *orchestrator.Orchestrator
	cfg  config.Config
	rt   *agent.Runtime
	tid  string
	out  io.Writer
	errw io.Writer
	prog *progress
}

// startAgent loads the project, the configuration and the task, and builds
// the agents' runtime. Progress goes to stderr: a line per tool call, and
// in a terminal (outside the REPL, which has its own spinner, and not with
// --json) a live status line with the role, the time and the tokens.
func (env *Env) startAgent(cmd *cobra.Command, wait time.Duration, id string, fresh, asJSON, local bool) (*agentCall, error) {
	o, cfg, tid, err := env.phaseSetup(wait, id)
	if err != nil {
		return nil, err
	}
	if err := notInFleet(o.Project, cfg, tid, "`"+cmd.CommandPath()+"`", local); err != nil {
		return nil, err
	}
	a := &agentCall{o: o, cfg: cfg, tid: tid, out: cmd.OutOrStdout(), errw: cmd.ErrOrStderr()}
	// TERM=dumb cannot redraw a line: plain lines only.
	live := !asJSON && !env.REPL && isTerminal(a.errw) && env.Getenv("TERM") != "dumb"
	a.prog = newProgress(unwrap(a.errw), live, env.Now, workerOf(cmd))
	a.rt = env.agentRuntime(o.Project, cfg, fresh, a.prog)
	return a, nil
}

// workerOf names who works for an agent command, for the status line
// until the model's own role is heard.
func workerOf(cmd *cobra.Command) string {
	switch cmd.CommandPath() {
	case "orch plan":
		return "planner"
	case "orch review plan":
		return "plan reviewers"
	case "orch review code":
		return "code reviewers"
	case "orch advise":
		return "accept advisor"
	}
	return cmd.Name()
}

// runAgentPhase is the run of an agent command: it starts the agents, runs
// phase p's worker for the task, ends the progress line (reporting a
// failure), prints the runtime's notes and hands the phase's result to
// show.
func runAgentPhase[R any](cmd *cobra.Command, env *Env, wait time.Duration, id string, fresh, asJSON, local bool, p lifecycle.Phase, pick func(worker.Outcome) *R, show func(a *agentCall, entered *orchestrator.NextResult, res R) error) error {
	a, err := env.startAgent(cmd, wait, id, fresh, asJSON, local)
	if err != nil {
		return err
	}
	if err := env.wrongPhase(a.o, a.tid, p); err != nil {
		return err
	}
	w, err := a.work(cmd.Context(), p)
	if err := a.finish(w.Phase, err); err != nil {
		return err
	}
	a.notes(asJSON)
	var res R
	if r := pick(w); r != nil {
		res = *r
	}
	return show(a, w.Phase.Entered, res)
}

// work runs phase p's worker (internal/worker's registry) for the task.
func (a *agentCall) work(ctx context.Context, p lifecycle.Phase) (worker.Outcome, error) {
	return work(ctx, worker.Deps{Orch: a.o, Config: a.cfg, Agents: a.rt}, p, worker.Run{Task: a.tid})
}

// work runs phase p's worker from the registry over deps.
func work(ctx context.Context, deps worker.Deps, p lifecycle.Phase, run worker.Run) (worker.Outcome, error) {
	w, ok := worker.Registry(deps).For(p)
	if !ok {
		return worker.Outcome{}, exit.New(exit.ErrInternal, "no worker for phase %s", p)
	}
	return w.Work(ctx, run)
}

// finish ends the streamed tokens' line and, on failure, shows the
// runtime's notes and where the failed run's output was kept.
func (a *agentCall) finish(pr orchestrator.PhaseResult, err error) error {
	a.prog.stop()
	if err == nil {
		return nil
	}
	printNotes(a.errw, a.rt)
	if pr.FailedKept != "" {
		fmt.Fprintf(a.errw, "the failed run's output is kept in %s\n", path.Join(task.OrchDir, "tasks", a.tid, pr.FailedKept))
	}
	return err
}

// notes prints the runtime's notes: to stderr with --json, else to stdout.
func (a *agentCall) notes(asJSON bool) {
	if asJSON {
		printNotes(a.errw, a.rt)
		return
	}
	printNotes(a.out, a.rt)
}
