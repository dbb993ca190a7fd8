package cli

import (
	"fmt"
	"strings"

	"github.com/orchdev/orch/internal/nextstep"
	"github.com/orchdev/orch/internal/orchestrator"
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

// stepLine is the status line naming the command to run.
func (env *Env) stepLine(s step) string {
	if s.Args == "" {
		return s.Why
	}
	return fmt.Sprintf("run: %s  (%s)", env.command(s.Args), strings.TrimSpace(s.Why))
}
