package sandbox

import (
	"errors"
	"fmt"
)

// Sandbox modes. The sandbox fails closed: Auto (the default) and Bwrap
// both mean bwrap, and a caller refuses with ErrNoSandbox when bwrap does
// not work here; only an explicit None runs suites without it.
const (
	Auto  = "auto"  // bwrap, or refuse
	Bwrap = "bwrap" // the same, named explicitly
	None  = "none"  // no sandbox: the opt-out, to be recorded
)

var (
	// ErrNoSandbox is returned when the bwrap sandbox is required but
	// cannot be used on this machine.
	ErrNoSandbox = errors.New("bwrap sandbox unavailable")
	// ErrInvalidMode marks a sandbox mode other than auto, bwrap or none.
	ErrInvalidMode = errors.New("invalid sandbox mode")
	// ErrCommandNotFound marks a program that does not exist.
	ErrCommandNotFound = errors.New("command not found")
)

// Error says why the bwrap sandbox cannot be used here. It matches
// ErrNoSandbox, and its message ends with how to install bubblewrap or opt
// out.
type Error struct {
	// Reason is what went wrong, without the advice.
	Reason string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%v: %s; %s", ErrNoSandbox, e.Reason, installHint)
}

// Is makes errors.Is(err, ErrNoSandbox) true.
func (e *Error) Is(target error) bool { return target == ErrNoSandbox }
