package testrun

import (
	"errors"

	"github.com/orchdev/orch/internal/sandbox"
)

var (
	// ErrNoSandbox is returned when the bwrap sandbox is required but
	// cannot be used on this machine (sandbox.ErrNoSandbox).
	ErrNoSandbox = sandbox.ErrNoSandbox
	// ErrCommandNotFound marks a suite whose program does not exist
	// (sandbox.ErrCommandNotFound).
	ErrCommandNotFound = sandbox.ErrCommandNotFound
	// ErrInvalidSuite marks a suite definition that cannot be run
	// (bad name, empty command, unknown kind or format, unsafe report path).
	ErrInvalidSuite = errors.New("invalid suite")
	// ErrInvalidOptions marks unusable Options (missing directory,
	// unknown sandbox mode).
	ErrInvalidOptions = errors.New("invalid options")
	// ErrOffline marks a suite whose build tool stopped because something
	// it needs (a parent POM, a plugin, a dependency, the Gradle
	// distribution) is not on the machine and the sandbox has no network.
	ErrOffline = errors.New("offline in the sandbox")
)
