package orchestrator

import "errors"

// Sentinel errors; the CLI maps them to exit codes.
var (
	// ErrRefused: the transition was refused (condition unmet, --from
	// mismatch, terminal state). Nothing changed.
	ErrRefused = errors.New("transition refused")
	// ErrInvalid: state or an artifact is invalid. Nothing changed.
	ErrInvalid = errors.New("invalid state or artifact")
	// ErrUsage: a request that is malformed (blank override reason,
	// unknown phase). Nothing changed.
	ErrUsage = errors.New("usage error")
)

// Error carries a user-facing message and the sentinel it belongs to.
type Error struct {
	Kind error
	Msg  string
	Err  error // optional cause
}

func (e *Error) Error() string { return e.Msg }

// Is matches the sentinel kind and the wrapped cause.
func (e *Error) Is(target error) bool { return target == e.Kind }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

func refused(msg string) error            { return &Error{Kind: ErrRefused, Msg: msg} }
func usage(msg string) error              { return &Error{Kind: ErrUsage, Msg: msg} }
func invalid(msg string, err error) error { return &Error{Kind: ErrInvalid, Msg: msg, Err: err} }
