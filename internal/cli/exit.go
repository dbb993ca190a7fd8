package cli

import (
	"errors"
	"strings"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/llm"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/task"
)

// Exit codes of every orch command (contract section 4). Only Main exits.
const (
	ExitOK       = 0 // done
	ExitInternal = 1 // unexpected internal error
	ExitUsage    = 2 // bad flag, bad id, unknown phase name, blank reason
	ExitRefused  = 3 // transition refused: condition unmet, --from mismatch, terminal state
	ExitInvalid  = 4 // invalid state or artifact
	ExitBusy     = 5 // task locked by another process beyond --wait
)

// usageError marks an error as a usage error (exit 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(msg string) error { return &usageError{msg: msg} }

// exitCode maps an error to its documented exit code.
func exitCode(err error) int {
	var ue *usageError
	var ae *artifact.Error
	var xe *exitError
	var ie *llm.InvalidResponseError
	var be *agent.BudgetError
	switch {
	case err == nil:
		return ExitOK
	case strings.HasPrefix(err.Error(), "unknown command "):
		return ExitUsage
	case errors.As(err, &xe):
		return xe.code
	case errors.As(err, &ue), errors.Is(err, orchestrator.ErrUsage), errors.Is(err, task.ErrBadID):
		return ExitUsage
	case errors.Is(err, task.ErrBusy):
		return ExitBusy
	case errors.Is(err, orchestrator.ErrRefused), errors.Is(err, task.ErrStale), errors.As(err, &be):
		return ExitRefused
	case errors.Is(err, orchestrator.ErrInvalid), errors.Is(err, task.ErrInvalidState), errors.Is(err, config.ErrInvalid), errors.As(err, &ae), errors.As(err, &ie):
		return ExitInvalid
	case errors.Is(err, task.ErrNoProject), errors.Is(err, task.ErrNoTask), errors.Is(err, task.ErrNoCurrent), errors.Is(err, task.ErrExists), errors.Is(err, errNotGitRepo):
		return ExitUsage
	}
	return ExitInternal
}
