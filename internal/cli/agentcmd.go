package cli

import (
	"fmt"
	"io"
	"path"
	"time"

	"github.com/spf13/cobra"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/task"
)

// agentCall is the frame shared by the commands that run an agent (plan,
// review plan, codegen, review code): the orchestrator, the runtime, the
// task, and where output and streamed tokens go.
type agentCall struct {
	o      *orchestrator.Orchestrator
	rt     *agent.Runtime
	tid    string
	out    io.Writer
	errw   io.Writer
	stream bool
}

// startAgent loads the project, the configuration and the task, and builds
// the agents' runtime. Model tokens stream to stderr when it is a terminal
// and the output is not JSON.
func (env *Env) startAgent(cmd *cobra.Command, wait time.Duration, id string, fresh, asJSON bool) (*agentCall, error) {
	o, cfg, tid, err := env.phaseSetup(wait, id)
	if err != nil {
		return nil, err
	}
	a := &agentCall{o: o, tid: tid, out: cmd.OutOrStdout(), errw: cmd.ErrOrStderr()}
	a.stream = !asJSON && isTerminal(a.errw)
	a.rt = env.agentRuntime(o.Project, cfg, fresh, a.errw, a.stream)
	return a, nil
}

// finish ends the streamed tokens' line and, on failure, shows the
// runtime's notes and where the failed run's output was kept.
func (a *agentCall) finish(pr orchestrator.PhaseResult, err error) error {
	if a.stream {
		fmt.Fprintln(a.errw)
	}
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
