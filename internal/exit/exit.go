// Package exit holds orch's exit codes (README, "Exit codes", plus `orch
// run`'s 6 and 7) and the errors that carry them. Any package's error can
// name its code by having an ExitCode method; the CLI maps an error to its
// code with one errors.As (Of), and only main exits.
package exit

import "errors"

// Code is a process exit code.
type Code int

// The exit codes of every orch command.
const (
	OK       Code = 0 // done
	Internal Code = 1 // unexpected internal error
	Usage    Code = 2 // bad flag, bad id, unknown phase name, blank reason, no project
	Refused  Code = 3 // transition refused: condition unmet, --from mismatch, terminal state, budget
	Invalid  Code = 4 // invalid state or artifact
	Busy     Code = 5 // task locked by another process beyond --wait
	Gate     Code = 6 // orch run stopped at a human gate: answer the questions or decide
	Attempts Code = 7 // orch run's codegen loop ran out of attempts
	Provider Code = 8 // the model provider failed: unreachable, an API error, no key, a command provider that failed or printed no valid answer
	Failed   Code = 9 // orch test --exit-code: the suites ran and a test failed
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

// Sentinels of the kinds of refusal, matched with errors.Is through *Error.
var (
	// ErrUsage: a request that is malformed (blank reason, unknown phase).
	// Nothing changed.
	ErrUsage = NewSentinel(Usage, "usage error")
	// ErrRefused: the transition or command was refused (condition unmet,
	// --from mismatch, terminal state). Nothing changed.
	ErrRefused = NewSentinel(Refused, "transition refused")
	// ErrInvalid: state or an artifact is invalid. Nothing changed.
	ErrInvalid = NewSentinel(Invalid, "invalid state or artifact")
	// ErrGate: orch run stopped at a human gate.
	ErrGate = NewSentinel(Gate, "stopped at a human gate")
	// ErrAttempts: orch run's codegen loop ran out of attempts.
	ErrAttempts = NewSentinel(Attempts, "out of attempts")
	// ErrFailed: orch test --exit-code ran the suites and a test failed.
	ErrFailed = NewSentinel(Failed, "tests failed")
)

// Error is a user-facing message of one kind (a sentinel above), with an
// optional cause.
type Error struct {
	Kind *Sentinel
	Msg  string
	Err  error // optional cause
}

func (e *Error) Error() string { return e.Msg }

// Is matches the sentinel kind (and, through Unwrap, the cause).
func (e *Error) Is(target error) bool { return target == error(e.Kind) }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ExitCode returns the kind's code.
func (e *Error) ExitCode() Code {
	if e.Kind == nil {
		return Internal
	}
	return e.Kind.code
}

// UsageError is a usage error (exit 2) saying msg.
func UsageError(msg string) error { return &Error{Kind: ErrUsage, Msg: msg} }

// RefusedError is a refusal (exit 3) saying msg.
func RefusedError(msg string) error { return &Error{Kind: ErrRefused, Msg: msg} }

// InvalidError is an invalid state or artifact (exit 4) saying msg, caused
// by err.
func InvalidError(msg string, err error) error { return &Error{Kind: ErrInvalid, Msg: msg, Err: err} }

// GateError is orch run stopping at a human gate (exit 6).
func GateError(msg string) error { return &Error{Kind: ErrGate, Msg: msg} }

// AttemptsError is orch run's codegen loop out of attempts (exit 7).
func AttemptsError(msg string) error { return &Error{Kind: ErrAttempts, Msg: msg} }

// FailedError is orch test --exit-code reporting failed tests (exit 9).
func FailedError(msg string) error { return &Error{Kind: ErrFailed, Msg: msg} }
