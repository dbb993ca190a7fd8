package cli

import (
	"fmt"
	"strings"

	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/nextstep"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/view"
)

// step is the command that moves a task on (see internal/nextstep).
type step = nextstep.Step

// stepFor decides the command to run for a task whose status is v
// (nextstep.For).
func stepFor(v orchestrator.StatusView, open string) step { return nextstep.For(v, open) }

// command renders CLI words as the user types them: `orch codegen` in a
// shell, `/codegen` in the REPL.
func (env *Env) command(args string) string {
	if env.REPL {
		return "/" + args
	}
	return "orch " + args
}

// listTasksHint says how to see the task ids, after an unknown one.
func (env *Env) listTasksHint() string {
	if env.REPL {
		return "/task list shows the tasks"
	}
	return "run `orch list` to see the tasks"
}

// stepLine is the status line naming the command to run.
func (env *Env) stepLine(s step) string {
	if s.Args == "" {
		return env.words(s.Why)
	}
	return fmt.Sprintf("run: %s  (%s)", env.command(s.Args), strings.TrimSpace(s.Why))
}

// wrongPhase refuses phase p's command (exit 3, nothing changed) for a
// task whose phase is neither p nor one step before it. The advice is the
// command `orch status` suggests (internal/nextstep), never a way past the
// gates; skipping phases with --override is named only as the deliberate
// escape hatch. From the phase before p, from done and during an
// interrupted commit the command's own checks answer.
func (env *Env) wrongPhase(o *orchestrator.Orchestrator, tid string, p lifecycle.Phase) error {
	sj, s, err := view.StatusOf(o, tid)
	if err != nil {
		return nil // the command itself reports an unreadable task
	}
	return nextstep.WrongPhase(sj.StatusView, p, env.command, env.stepLine(s))
}
