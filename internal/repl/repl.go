package repl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/task"
	"github.com/orchdev/orch/internal/termtext"
)

// HistoryFile is the REPL's line history inside .orch/.
const HistoryFile = "repl_history"

// Exit codes of Run. A session without a terminal that ends normally
// returns the exit code of its last failing line instead of ExitOK.
const (
	ExitOK    = 0 // the user left (Ctrl-D, /quit, end of input)
	ExitError = 1 // the input failed, or the session was ended by ctx
	ExitUsage = 2 // piped: the last failing line was not understood
)

// exitCode is what a session that ends normally returns: in a terminal
// ExitOK (the person saw every failure), piped the code of the last line
// that failed, so a script notices.
func (s *session) exitCode() int {
	if s.cfg.Terminal {
		return ExitOK
	}
	return s.failed
}

// RunFunc runs one orch command line (the arguments after "orch") under
// ctx, writing to stdout and stderr, and returns its exit code. The caller
// builds a fresh command tree for every call.
type RunFunc func(ctx context.Context, args []string, stdout, stderr io.Writer) int

// Config configures a session.
type Config struct {
	// Run runs one orch command line.
	Run RunFunc
	// Dir is the working directory .orch/ is searched from.
	Dir    string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Terminal: Stdin and Stdout are a terminal. Lines are edited with
	// history and completion, the prompt shows the task and phase, a
	// spinner runs on Stderr while a command does, Markdown is rendered.
	// Otherwise one command is read per line and nothing is decorated.
	Terminal bool
	// Color allows ANSI colours (a terminal, and NO_COLOR unset).
	Color bool
	// Interrupts delivers Ctrl-C while a command runs (SIGINT): it cancels
	// that command's context; the session goes on. Without a terminal, an
	// interrupt while waiting for input ends the session. May be nil.
	Interrupts <-chan os.Signal
	// Now is the clock of the spinner; nil means time.Now.
	Now func() time.Time
	// Width returns the terminal's width in columns; nil or a result
	// below 20 means 80.
	Width func() int
}

// session is one REPL run.
type session struct {
	cfg Config
	in  lineReader
	scr *screen
	// failed is the exit code of the last line that failed (a command's
	// code, or 2 for a line that was not understood); 0 when none did.
	// A piped session exits with it.
	failed int
}

// Run runs the session until the input ends, /quit, or ctx is done, and
// returns its exit code.
func Run(ctx context.Context, cfg Config) int {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &session{cfg: cfg, scr: newScreen(cfg.Stdout, cfg.Stderr, cfg.Terminal, cfg.Now)}
	s.scr.width = cfg.Width
	first := observe(cfg.Dir)
	if cfg.Terminal {
		history := ""
		if first.project != nil {
			history = filepath.Join(first.project.Dir, HistoryFile)
		}
		ed, err := newEditor(cfg.Stdin, cfg.Stdout, history, sources{
			tasks:     func() []string { return taskIDs(cfg.Dir) },
			questions: func() []string { return questionIDs(cfg.Dir) },
		})
		if err != nil {
			fmt.Fprintln(cfg.Stderr, termtext.Sanitize(exit.Format(err)))
			return ExitError
		}
		s.in = ed
		if tty, ok := cfg.Stdout.(*os.File); ok {
			// A pager a command starts may have the terminal: the line
			// editor reads keys only inside Readline (readline reads a
			// rune only when its line asks for one), so the pager gets
			// every key typed while it runs (TestTerminalPager).
			s.scr.take = func() (*os.File, func(), bool) { return tty, func() {}, true }
		}
		s.banner(first)
	} else {
		s.in = newPlain(cfg.Stdin, cfg.Interrupts)
	}
	defer s.in.close()
	for {
		v := observe(cfg.Dir)
		line, err := s.in.readLine(ctx, s.prompt(v))
		switch {
		case errors.Is(err, errInterrupt):
			if strings.TrimSpace(line) == "" {
				fmt.Fprintln(cfg.Stdout, "(Ctrl-D or /quit leaves)")
			}
			continue
		case errors.Is(err, io.EOF):
			return s.exitCode()
		case ctx.Err() != nil:
			return ExitError
		case err != nil:
			fmt.Fprintln(cfg.Stderr, termtext.Sanitize(exit.Format(err)))
			return ExitError
		}
		if s.do(ctx, parse(line, v.context()), line) {
			return s.exitCode()
		}
		if ctx.Err() != nil {
			return ExitError
		}
	}
}

// do carries out one line's action; it reports whether to leave.
func (s *session) do(ctx context.Context, a action, line string) (quit bool) {
	out, errw := s.cfg.Stdout, s.cfg.Stderr
	switch a.kind {
	case actQuit:
		return true
	case actHelp:
		fmt.Fprint(out, helpText())
	case actHint:
		fmt.Fprintln(errw, termtext.Sanitize(a.msg))
		s.failed = ExitUsage
	case actSwitch:
		s.switchTask(a.id)
	case actRun:
		code := s.exec(ctx, label(line), a.args)
		if code != 0 {
			s.failed = code
		} else if a.show != "" {
			s.show(ctx, a.show)
		}
	}
	return false
}

// exec runs one orch command line with its own context. An interrupt
// cancels that context (the model call, the test suites stop) and the
// session waits for the command to return. A panic in the command is
// reported, not fatal.
func (s *session) exec(ctx context.Context, label string, args []string) int {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	drain(s.cfg.Interrupts)
	stop := s.scr.start(label)
	done := make(chan int, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				fmt.Fprintf(s.scr.stderr(), "orch: internal error in %q: %s\n", label, termtext.Sanitize(fmt.Sprint(r)))
				done <- ExitError
			}
		}()
		done <- s.cfg.Run(cctx, args, s.scr.stdout(), s.scr.stderr())
	}()
	ended := ctx.Done()
	interrupted := false
	for {
		select {
		case code := <-done:
			stop()
			if interrupted {
				fmt.Fprintf(s.cfg.Stderr, "cancelled: %s (exit %d)\n", label, code)
			}
			return code
		case <-s.cfg.Interrupts:
			if !interrupted {
				interrupted = true
				cancel()
				s.scr.note("cancelling " + label + " …")
			} else {
				s.scr.note("still stopping " + label + " …")
			}
		case <-ended:
			ended = nil
			cancel()
		}
	}
}

// label names a command line in the spinner and notices: sanitized, on
// one line, short enough for the spinner to fit a terminal's width.
func label(line string) string {
	const max = 40
	l := termtext.Sanitize(strings.Join(strings.Fields(line), " "))
	if r := []rune(l); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return l
}

// drain discards interrupts that arrived while no command ran.
func drain(c <-chan os.Signal) {
	for {
		select {
		case <-c:
		default:
			return
		}
	}
}

// shownBy names the `orch show` argument of the artifacts shown after a
// command.
var shownBy = map[string]string{
	artifact.PlanMarkdownFile:       "plan",
	artifact.PlanReviewMarkdownFile: "plan-review",
	artifact.CodeReviewMarkdownFile: "code-review",
}

// show renders an artifact of the current task after the command that
// wrote it, through `orch show` (laid out, and paged when it is long).
func (s *session) show(ctx context.Context, rel string) {
	if v := observe(s.cfg.Dir); v.task == "" {
		return
	}
	fmt.Fprintf(s.cfg.Stdout, "── %s ──\n", termtext.Line(rel))
	s.cfg.Run(ctx, []string{"show", shownBy[rel]}, s.scr.stdout(), s.scr.stderr())
}

// switchTask makes id the current task.
func (s *session) switchTask(id string) {
	p, err := task.FindProject(s.cfg.Dir)
	if err != nil {
		fmt.Fprintln(s.cfg.Stderr, noTask(view{}))
		return
	}
	t, err := p.Open(id)
	if err != nil {
		// One hint, in the REPL's syntax (task errors name no command).
		fmt.Fprintf(s.cfg.Stderr, "%s\n/task list shows the tasks\n", termtext.Sanitize(exit.Format(err)))
		return
	}
	if err := p.SetCurrent(t.ID); err != nil {
		fmt.Fprintln(s.cfg.Stderr, termtext.Sanitize(exit.Format(err)))
		return
	}
	v := observe(s.cfg.Dir)
	fmt.Fprintf(s.cfg.Stdout, "current task: %s (%s)\n", termtext.Line(t.ID), termtext.Line(orUnknown(v.phase)))
}

func noTask(v view) string {
	if v.project == nil {
		return "no orch project here: run `orch init` at the top of your git repository"
	}
	return "no current task: type the brief of a new one, or /task switch ID"
}

// prompt shows the current task and its phase.
func (s *session) prompt(v view) string {
	if v.task == "" {
		return "orch> "
	}
	// The prompt is drawn raw by the line editor: the task id and the
	// phase (read from files) are sanitized here.
	id, phase := termtext.Line(v.task), termtext.Line(v.phase)
	if phase == "" {
		phase = "?"
	}
	if v.status == "running" || v.status == "interrupted" {
		phase += " " + v.status
	}
	if s.cfg.Color {
		return fmt.Sprintf("orch \x1b[1;36m%s\x1b[0m [\x1b[33m%s\x1b[0m]> ", id, phase)
	}
	return fmt.Sprintf("orch %s [%s]> ", id, phase)
}

// banner greets a terminal session.
func (s *session) banner(v view) {
	out := s.cfg.Stdout
	fmt.Fprintln(out, "orch REPL: /help lists the commands, Tab completes, Ctrl-C cancels a running command, Ctrl-D leaves.")
	switch {
	case v.problem != "":
		fmt.Fprintln(out, termtext.Sanitize(v.problem))
	case v.task == "":
		fmt.Fprintln(out, "no current task: type what the change should do to start one")
	case len(v.open) > 0:
		fmt.Fprint(out, waitingLine(v.task, v.open[0]))
	}
}

// waitingLine greets a session whose task waits for the answer to q.
func waitingLine(task string, q artifact.Question) string {
	return fmt.Sprintf("task %s waits for your answer to %s: %s\n(type the answer; %s answers another question)\n", termtext.Line(task), termtext.Line(q.ID), termtext.Sanitize(q.Text), answerUsage)
}
