package cli

import (
	"fmt"
	"io"
	"os"
	"os/exec"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/orchdev/orch/internal/pager"
	"github.com/orchdev/orch/internal/termtext"
)

// terminalHost is an output that stands for a terminal it shares with
// others (the REPL's): TakeTerminal hands the terminal to a pager (the
// REPL stops reading keys and drawing its spinner) and giveBack returns
// it. ok is false when the terminal cannot be handed over.
type terminalHost interface {
	TakeTerminal() (tty *os.File, giveBack func(), ok bool)
}

// widthReporter is an output that knows its terminal's width (the REPL's).
type widthReporter interface {
	TerminalWidth() int
}

// paged returns the writer for a command's long output (the log, a diff,
// a plan): the pager when stdout is a terminal, --no-pager is not given
// and a pager is configured (ORCH_PAGER, PAGER, else `less -FRX`), and
// stdout itself otherwise — never a pager without a terminal. Run closes
// the pager (waiting for the person to quit it) before it reports the
// command's error.
//
// What goes to the pager passes through the same guard as the command's
// output (termtext.Writer: orch's colours only, docs/terminal.md).
func (env *Env) paged(cmd *cobra.Command) io.Writer {
	out := cmd.OutOrStdout()
	if env.noPager || env.pager != nil || !isTerminal(out) {
		if env.pager != nil {
			return env.pagerIn
		}
		return out
	}
	line := pager.Command(env.Getenv, exec.LookPath)
	if line == "" {
		return out
	}
	var tty *os.File
	giveBack := func() {}
	switch o := unwrap(out).(type) {
	case *os.File:
		tty = o
	case terminalHost:
		var ok bool
		if tty, giveBack, ok = o.TakeTerminal(); !ok {
			return out
		}
	default:
		return out
	}
	environ := env.environ()
	if environ == nil {
		environ = os.Environ()
	}
	p, err := pager.Start(line, tty, env.Stderr, pager.Environ(environ))
	if err != nil {
		giveBack()
		fmt.Fprintf(env.Stderr, "orch: warning: %s; printing without it\n", termtext.Sanitize(err.Error()))
		return out
	}
	env.pager, env.pagerDone, env.pagerIn = p, giveBack, termtext.NewWriter(p)
	return env.pagerIn
}

// closePager ends the pager, if one runs, and waits for it.
func (env *Env) closePager() error {
	if env.pager == nil {
		return nil
	}
	env.pagerIn.Flush()
	err := env.pager.Close()
	env.pagerDone()
	env.pager, env.pagerDone, env.pagerIn = nil, nil, nil
	return err
}

// termWidth is the width in columns of the terminal out writes to, or 0
// when out is no terminal.
func termWidth(out io.Writer) int {
	switch o := unwrap(out).(type) {
	case widthReporter:
		return o.TerminalWidth()
	case *os.File:
		if w, _, err := term.GetSize(int(o.Fd())); err == nil {
			return w
		}
	}
	return 0
}
