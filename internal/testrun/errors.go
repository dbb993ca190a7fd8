package testrun

import (
	"errors"
	"fmt"
)

var (
	// ErrNoSandbox is returned when the bwrap sandbox is required but
	// cannot be used on this machine.
	ErrNoSandbox = errors.New("bwrap sandbox unavailable")
	// ErrCommandNotFound marks a suite whose program does not exist.
	ErrCommandNotFound = errors.New("command not found")
	// ErrInvalidSuite marks a suite definition that cannot be run
	// (bad name, empty command, unknown kind or format, unsafe report path).
	ErrInvalidSuite = errors.New("invalid suite")
	// ErrInvalidOptions marks unusable Options (missing directory,
	// unknown sandbox mode).
	ErrInvalidOptions = errors.New("invalid options")
	// ErrNotJUnit is returned by ParseJUnit when the input has no
	// <testsuites> or <testsuite> root element.
	ErrNotJUnit = errors.New("not a JUnit XML report")
)

// SandboxError says why the bwrap sandbox cannot be used here. It matches
// ErrNoSandbox, and its message ends with how to install bubblewrap or opt
// out.
type SandboxError struct {
	// Reason is what went wrong, without the advice.
	Reason string
}

func (e *SandboxError) Error() string {
	return fmt.Sprintf("%v: %s; %s", ErrNoSandbox, e.Reason, installHint)
}

// Is makes errors.Is(err, ErrNoSandbox) true.
func (e *SandboxError) Is(target error) bool { return target == ErrNoSandbox }
