package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/chzyer/readline"
	"github.com/spf13/cobra"

	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/repl"
	"github.com/orchdev/orch/internal/termtext"
)

func newReplCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "repl",
		Short: "an interactive session: slash commands over the same commands, with history and completion",
		Long: `Start an interactive session on the current task. Slash commands run the orch
command of the same name (their flags may follow, quoted like a shell):
/plan, /answer ID TEXT, /review plan, /codegen, /review code, /test, /accept,
/revert, /next [--to PHASE] [--override "REASON"], /redo [PHASE], /status,
/log, /cost, /advise; and /diff, /task new BRIEF|switch ID|list, /help, /quit.
Plain text answers the first open blocking question while planning, or is the
brief of a new task when there is none.

In a terminal: the prompt shows the task and phase, Tab completes, the history
is kept in .orch/repl_history, plans and reviews are rendered as Markdown,
Ctrl-C cancels the running command (the session goes on) and Ctrl-D leaves.
Without a terminal, one command is read per line and the output is plain.
Colours follow NO_COLOR.`,
		Example: `  orch repl
  printf '/status\n/next --override "checked by hand" --to codegen\n' | orch repl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return env.repl(cmd.Context(), unwrap(cmd.OutOrStdout()), unwrap(cmd.ErrOrStderr()))
		},
	}
}

// replOrHelp is meant as the root command's RunE: bare `orch` starts the
// REPL when standard input and output are a terminal, and prints the help
// otherwise.
func replOrHelp(env *Env) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error {
		if isTerminal(env.Stdin) && isTerminal(unwrap(cmd.OutOrStdout())) {
			return env.repl(cmd.Context(), unwrap(cmd.OutOrStdout()), unwrap(cmd.ErrOrStderr()))
		}
		return cmd.Help()
	}
}

// RunREPL runs the REPL as `orch repl` does, on env's input and output,
// and returns its exit code.
func RunREPL(ctx context.Context, env Env) int {
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	if err := env.repl(ctx, env.Stdout, env.Stderr); err != nil {
		fmt.Fprintln(env.Stderr, termtext.Sanitize(exit.Format(err)))
		return int(exit.Of(err))
	}
	return int(exit.OK)
}

// repl runs a session. Its interrupts are its own: SIGINT cancels the
// running command only, so the session does not inherit the cancellation
// of ctx (which Main cancels on SIGINT); SIGTERM and SIGHUP end it.
func (env *Env) repl(ctx context.Context, stdout, stderr io.Writer) error {
	term := isTerminal(env.Stdin) && isTerminal(stdout)
	ctx, stop := signal.NotifyContext(context.WithoutCancel(ctx), syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	intr := make(chan os.Signal, 1)
	signal.Notify(intr, os.Interrupt)
	defer signal.Stop(intr)
	code := repl.Run(ctx, repl.Config{
		Run:        env.runLine(term),
		Dir:        env.Dir,
		Stdin:      env.Stdin,
		Stdout:     stdout,
		Stderr:     stderr,
		Terminal:   term,
		Color:      term && termtext.ColorAllowed(env.Getenv),
		Interrupts: intr,
		Now:        env.Now,
		Width:      readline.GetScreenWidth,
	})
	if code != repl.ExitOK {
		if cause := context.Cause(ctx); cause != nil {
			return fmt.Errorf("repl: %w", cause)
		}
		// A piped session: the code of its last failing command, whose
		// message was already printed.
		return exit.New(exit.NewSentinel(exit.Code(code), "repl"), "repl: the last failing command exited %d", code)
	}
	return nil
}

// runLine runs one command line of the REPL through a fresh command tree,
// as if typed after `orch`. Without a terminal the REPL reads its commands
// from stdin, so the commands get an empty one.
func (env *Env) runLine(term bool) repl.RunFunc {
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
		e := *env
		e.Args = args
		e.REPL = true
		e.Stdout, e.Stderr = stdout, stderr
		if !term {
			e.Stdin = strings.NewReader("")
		}
		return Run(ctx, e)
	}
}
