package task

import (
	"fmt"
	"strings"

	"github.com/orchdev/orch/internal/exit"
)

// Sentinel errors, matched with errors.Is; each carries its exit code
// (README, "Exit codes").
var (
	// ErrNoProject: no .orch directory in the start folder or any parent.
	ErrNoProject = exit.NewSentinel(exit.Usage, "no orch project")
	// ErrNoTask: the task folder does not exist.
	ErrNoTask = exit.NewSentinel(exit.Usage, "no such task")
	// ErrExists: a task with that id already exists.
	ErrExists = exit.NewSentinel(exit.Usage, "task already exists")
	// ErrBadID: the id does not match the task id rule.
	ErrBadID = exit.NewSentinel(exit.Usage, "invalid task id")
	// ErrNoCurrent: .orch/current is absent or empty.
	ErrNoCurrent = exit.NewSentinel(exit.Usage, "no current task")
	// ErrBusy: another process holds the task's lock.
	ErrBusy = exit.NewSentinel(exit.Busy, "task is busy")
	// ErrStale: the state moved since the caller read it.
	ErrStale = exit.NewSentinel(exit.Refused, "stale revision")
	// ErrLinkedOrch: .orch, or a folder or file orch keeps in it, is a
	// symbolic link (or .orch is not a folder): orch writes its state only
	// inside the repository.
	ErrLinkedOrch = exit.NewSentinel(exit.Invalid, "unsafe .orch layout")
	// ErrInvalidState: state.json or transcript.jsonl is invalid or the two
	// disagree. Always wrapped by a *StateError.
	ErrInvalidState = exit.NewSentinel(exit.Invalid, "invalid task state")
)

// StateError describes an invalid or inconsistent file of a task. It wraps
// ErrInvalidState and, when set, Err (for example fs.ErrNotExist).
type StateError struct {
	Task     string // task id; empty when unknown
	File     string // path relative to the task folder, e.g. "state.json"
	Field    string // JSON path ("$.phase", "$" for the whole file) or a location ("line 7")
	Expected string // what was expected
	Got      string // what was found
	Hint     string // what to do about it
	Err      error  // underlying cause; may be nil
}

func (e *StateError) Error() string {
	var b strings.Builder
	if e.Task != "" {
		fmt.Fprintf(&b, "task %s: ", e.Task)
	}
	b.WriteString(e.File)
	if e.Field != "" {
		b.WriteString(": ")
		b.WriteString(e.Field)
	}
	b.WriteString(": ")
	if e.Expected != "" {
		b.WriteString("expected ")
		b.WriteString(e.Expected)
		if e.Got != "" {
			b.WriteString(", got ")
			b.WriteString(e.Got)
		}
	} else {
		b.WriteString(e.Got)
	}
	if e.Hint != "" {
		b.WriteString("; ")
		b.WriteString(e.Hint)
	}
	return b.String()
}

// Unwrap returns ErrInvalidState and the underlying cause, if any.
func (e *StateError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrInvalidState, e.Err}
	}
	return []error{ErrInvalidState}
}

// BusyError reports that another process holds a task's lock.
type BusyError struct {
	Task string
	PID  int // pid written into the lock file by the holder; 0 if unknown
}

func (e *BusyError) Error() string {
	holder := "another process"
	if e.PID > 0 {
		holder = fmt.Sprintf("pid %d", e.PID)
	}
	return fmt.Sprintf("task %s is busy: locked by %s; retry or pass --wait", e.Task, holder)
}

// Unwrap returns ErrBusy.
func (e *BusyError) Unwrap() error { return ErrBusy }

// verifyHint is the advice attached to state problems.
func verifyHint(id string) string {
	if id == "" {
		return "run `orch verify` to check it against the transcript"
	}
	return fmt.Sprintf("run `orch verify --task %s` to check it against the transcript", id)
}
