package orchestrator

import "github.com/orchdev/orch/internal/exit"

// Sentinel errors, matched with errors.Is; each carries its exit code.
var (
	// ErrRefused: the transition was refused (condition unmet, --from
	// mismatch, terminal state). Nothing changed.
	ErrRefused = exit.ErrRefused
	// ErrInvalid: state or an artifact is invalid. Nothing changed.
	ErrInvalid = exit.ErrInvalid
	// ErrUsage: a request that is malformed (blank override reason,
	// unknown phase). Nothing changed.
	ErrUsage = exit.ErrUsage
)

// Error carries a user-facing message and the sentinel it belongs to.
type Error = exit.Error

func refused(msg string) error            { return exit.RefusedError(msg) }
func usage(msg string) error              { return exit.UsageError(msg) }
func invalid(msg string, err error) error { return exit.InvalidError(msg, err) }
