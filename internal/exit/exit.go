// Package exit holds orch's exit codes (README, "Exit codes", plus `orch
// run`'s 6 and 7) and the errors that carry them. Any package's error can
// name its code by having an ExitCode method; the CLI maps an error to its
// code with one errors.As (Of), and only main exits.
package exit

import (
	"errors"
	"fmt"
	"strings"
)

// Code is a process exit code.
type Code int

// The exit codes of every orch command.
const (
	OK       Code = 0 // done
	Internal Code = 1 // unexpected internal error
	Usage    Code = 2 // bad flag, bad id, unknown phase name, blank reason, no project
	Refused  Code = 3 // transition refused: condition unmet, --from mismatch, terminal state, budget
	Invalid  Code = 4 // invalid state or artifact
	Busy     Code = 5 // task locked by another process beyond --wait, or a git lock file of the repository exists
	Gate     Code = 6 // orch run stopped at a human gate: answer the questions or decide
	Attempts Code = 7 // orch run's codegen loop ran out of attempts
	Provider Code = 8 // the model provider failed: unreachable, an API error, no key, a command provider that failed or printed no valid answer
	Failed   Code = 9 // orch test --exit-code: the suites ran and a test failed
	// Interrupted is 128 + SIGINT, as shells report a command ended by
	// Ctrl-C: the command was interrupted before it finished.
	Interrupted Code = 130
)

// Coder is an error that knows its exit code.
type Coder interface {
	error
	ExitCode() Code
}

// Of maps err to its exit code: OK for nil, the code of the first error in
// its chain that has one, else Internal.
func Of(err error) Code {
	if err == nil {
		return OK
	}
	var c Coder
	if errors.As(err, &c) {
		return c.ExitCode()
	}
	return Internal
}

// Sentinel is an error value with an exit code, matched with errors.Is.
type Sentinel struct {
	code Code
	text string
}

// NewSentinel returns a sentinel error of code c.
func NewSentinel(c Code, text string) *Sentinel { return &Sentinel{code: c, text: text} }

func (s *Sentinel) Error() string { return s.text }

// ExitCode returns the sentinel's code.
func (s *Sentinel) ExitCode() Code { return s.code }

// The kinds of error, one per exit code, matched with errors.Is. A
// package may declare its own finer kinds with NewSentinel (task.ErrNoTask
// is a usage error); New accepts either.
var (
	// ErrInternal: an unexpected internal error.
	ErrInternal = NewSentinel(Internal, "internal error")
	// ErrUsage: a request that is malformed (blank reason, unknown phase).
	// Nothing changed.
	ErrUsage = NewSentinel(Usage, "usage error")
	// ErrRefused: the transition or command was refused (condition unmet,
	// --from mismatch, terminal state). Nothing changed.
	ErrRefused = NewSentinel(Refused, "transition refused")
	// ErrInvalid: state or an artifact is invalid. Nothing changed.
	ErrInvalid = NewSentinel(Invalid, "invalid state or artifact")
	// ErrBusy: the task is locked by another process.
	ErrBusy = NewSentinel(Busy, "task is busy")
	// ErrGate: orch run stopped at a human gate.
	ErrGate = NewSentinel(Gate, "stopped at a human gate")
	// ErrAttempts: orch run's codegen loop ran out of attempts.
	ErrAttempts = NewSentinel(Attempts, "out of attempts")
	// ErrProvider: the model provider failed.
	ErrProvider = NewSentinel(Provider, "model provider failed")
	// ErrFailed: orch test --exit-code ran the suites and a test failed.
	ErrFailed = NewSentinel(Failed, "tests failed")
	// ErrInterrupted: the command was interrupted (Ctrl-C, SIGTERM) before
	// it finished.
	ErrInterrupted = NewSentinel(Interrupted, "interrupted")
)

// KindOf returns the kind of code c (ErrInternal for a code that has none).
func KindOf(c Code) *Sentinel {
	for _, k := range []*Sentinel{ErrUsage, ErrRefused, ErrInvalid, ErrBusy, ErrGate, ErrAttempts, ErrProvider, ErrFailed, ErrInterrupted} {
		if k.code == c {
			return k
		}
	}
	return ErrInternal
}

// Error is the error a person sees (docs/workers.md, "Errors"): its kind,
// which carries the exit code; its message, which never starts with
// "orch: " (Format adds the prefix once, where the error is shown); an
// optional hint saying what to do next, shown on its own lines after the
// message; and an optional cause.
type Error struct {
	Kind *Sentinel
	Msg  string
	Hint string
	Err  error // optional cause
}

// New returns an error of kind saying format, formatted as fmt.Errorf
// does: a %w verb makes its operand the cause, matched by errors.Is and
// errors.As.
func New(kind *Sentinel, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	e := &Error{Kind: kind, Msg: err.Error()}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		e.Err = u.Unwrap()
	case interface{ Unwrap() []error }:
		e.Err = errors.Join(u.Unwrap()...)
	}
	return e
}

// WithHint returns a copy of e with the hint format, formatted as
// fmt.Sprintf does, added on a line of its own after any hint e has.
func (e *Error) WithHint(format string, args ...any) *Error {
	c := *e
	h := fmt.Sprintf(format, args...)
	if c.Hint != "" {
		h = c.Hint + "\n" + h
	}
	c.Hint = h
	return &c
}

func (e *Error) Error() string { return e.Msg }

// Is matches the kind (and, through Unwrap, the cause).
func (e *Error) Is(target error) bool { return e.Kind != nil && target == error(e.Kind) }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ExitCode returns the kind's code.
func (e *Error) ExitCode() Code {
	if e.Kind == nil {
		return Internal
	}
	return e.Kind.code
}

// Prefix starts every error message orch shows; only Format writes it.
const Prefix = "orch: "

// Format renders err as every front end shows it (the command line, the
// REPL, the board, the MCP server): "orch: " and its message, then the
// hint of every *Error in its chain, outermost first, each on lines of its
// own. Messages are written without the prefix; Format adds it once.
func Format(err error) string {
	if err == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString(Prefix)
	b.WriteString(err.Error())
	for _, h := range Hints(err) {
		b.WriteString("\n")
		b.WriteString(h)
	}
	return b.String()
}

// Hints returns the hints of the *Error values in err's chain, outermost
// first, each once.
func Hints(err error) []string {
	var hints []string
	seen := map[string]bool{}
	var walk func(error)
	walk = func(err error) {
		if err == nil {
			return
		}
		if e, ok := err.(*Error); ok && e.Hint != "" && !seen[e.Hint] {
			seen[e.Hint] = true
			hints = append(hints, e.Hint)
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		case interface{ Unwrap() []error }:
			for _, c := range u.Unwrap() {
				walk(c)
			}
		}
	}
	walk(err)
	return hints
}
