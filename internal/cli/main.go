// Package cli is orch's command line: one cobra command per file, built by
// constructors over an Env (no package globals), errors mapped to the
// documented exit codes in one place.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/lazyre"
	"github.com/orchdev/orch/internal/llm"
	"github.com/orchdev/orch/internal/pager"
	"github.com/orchdev/orch/internal/repl"
	"github.com/orchdev/orch/internal/task"
	"github.com/orchdev/orch/internal/termtext"
)

// Env is everything a command may touch of the outside world.
type Env struct {
	Args   []string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Dir is the working directory orch searches .orch/ from.
	Dir    string
	Getenv func(string) string
	// Environ returns the environment for child processes; nil means the
	// process's own.
	Environ func() []string
	Now     func() time.Time
	// Hooks are test-only crash points; nil in production.
	Hooks task.Hooks
	// LLMOptions are passed to model providers (tests inject HTTP clients).
	LLMOptions []llm.Option
	// REPL is set for commands typed in the REPL: hints name slash
	// commands (/codegen) instead of shell ones (orch codegen).
	REPL bool
	// gitSettled is set once the project's interrupted git effects were
	// looked for (see settleGit).
	gitSettled bool
	// noPager is --no-pager; pager is the running pager of a command's
	// long output and pagerDone gives its terminal back (see paged).
	noPager   bool
	pager     *pager.Pager
	pagerDone func()
	pagerIn   *termtext.Writer // the guard in front of pager
}

// Main runs orch with the process's arguments and returns its exit code.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	dir, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, exit.Format(err))
		return int(exit.Internal)
	}
	return Run(ctx, Env{Args: os.Args[1:], Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Dir: dir, Getenv: os.Getenv, Environ: os.Environ, Now: time.Now})
}

// Run executes one orch command line and returns its exit code.
func Run(ctx context.Context, env Env) int {
	if env.Now == nil {
		env.Now = time.Now
	}
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	root := newRootCmd(&env)
	root.SetArgs(env.Args)
	root.SetIn(env.Stdin)
	// Every command's output and errors pass through the guard: text a
	// model, a test suite or a person wrote cannot drive the terminal
	// (docs/terminal.md); JSON stays the same JSON.
	stdout, stderr := termtext.NewWriter(env.Stdout), termtext.NewWriter(env.Stderr)
	defer stderr.Flush()
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	stdout.Flush()
	// The pager shows the output until the person quits it; the error
	// comes after, on the terminal.
	if perr := env.closePager(); perr != nil && err == nil {
		err = perr
	}
	if err == nil {
		return int(exit.OK)
	}
	code := exit.Of(err)
	if code == exit.Internal && ctx.Err() != nil && errors.Is(err, context.Canceled) {
		// Stopped by the person (Ctrl-C, SIGTERM, the REPL's Ctrl-C), not
		// an internal error.
		code = exit.Interrupted
	}
	fmt.Fprintln(stderr, termtext.Sanitize(env.words(exit.Format(err))))
	if errors.Is(err, task.ErrNoTask) {
		fmt.Fprintln(stderr, env.listTasksHint())
	}
	if code == exit.Usage && isFlagError(err) {
		fmt.Fprintf(stderr, "run `%s` for usage\n", env.command("help"))
	}
	return int(code)
}

// words is msg in the syntax at hand: as written in a shell, replSyntax
// in the REPL.
func (env *Env) words(msg string) string {
	if env.REPL {
		return replSyntax(msg)
	}
	return msg
}

// replSyntax names in the REPL's syntax the orch commands a message quotes
// (`orch redo test` → `/redo test`, `orch list` → `/task list`, `orch new`
// → `/task new BRIEF`): messages made below the command line are written
// in shell words. A command the REPL has no slash form of (`orch config`,
// `orch serve`) stays as a shell command, and "pass --task" becomes the
// REPL's way to pick a task.
func replSyntax(msg string) string {
	msg = quotedOrch.Get().ReplaceAllStringFunc(msg, func(q string) string {
		m := quotedOrch.FindStringSubmatch(q)
		name, rest := m[1], m[2]
		switch {
		case name == "list":
			return "`/task list" + rest + "`"
		case name == "new" && rest == "":
			return "`/task new BRIEF`"
		case name == "new":
			return "`/task new" + rest + "`"
		case repl.Knows("/" + name):
			return "`/" + name + rest + "`"
		}
		return q
	})
	return strings.ReplaceAll(msg, " or pass --task", " or pick one with `/task switch ID`")
}

// quotedOrch is an orch command line quoted in a message: its command
// name and the rest of the line.
var quotedOrch = lazyre.New("`orch ([a-z][a-z-]*)([^`]*)`")
