package gitx

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Match them with errors.Is.
var (
	// ErrNotRepo: the directory is not inside a git work tree.
	ErrNotRepo = errors.New("not a git repository (or any parent)")
	// ErrNoCommits: HEAD is an unborn branch.
	ErrNoCommits = errors.New("repository has no commits yet")
	// ErrBadRevision: a revision does not name a commit.
	ErrBadRevision = errors.New("unknown revision or not a commit")
	// ErrBadPath: a path is not a clean repository-relative path.
	ErrBadPath = errors.New("invalid repository path")
	// ErrInvalidPatch: git cannot parse the patch at all.
	ErrInvalidPatch = errors.New("invalid patch")
	// ErrApplyConflict: the patch does not apply (cleanly) to the tree.
	ErrApplyConflict = errors.New("patch does not apply")
	// ErrNothingToCommit: the named paths have no changes to commit.
	ErrNothingToCommit = errors.New("nothing to commit")
	// ErrOperationInProgress: a merge, rebase, cherry-pick, revert, am or
	// bisect is in progress, so the operation refuses to start.
	ErrOperationInProgress = errors.New("another git operation is in progress")
	// ErrRevertConflict: reverting a commit conflicts with later changes.
	ErrRevertConflict = errors.New("revert conflicts")
	// ErrNothingToRevert: reverting the commit would change nothing.
	ErrNothingToRevert = errors.New("revert makes no changes")
)

// maxStderrInMessage caps how much of git's stderr goes into Error().
const maxStderrInMessage = 2000

// Error is a git command that failed: it exited non-zero or was stopped.
type Error struct {
	Subcommand string   // "apply", "commit", ...
	Args       []string // full argument list given to git
	ExitCode   int      // -1 when git did not exit normally (killed, not started)
	Stderr     string   // git's complete stderr
	Stdout     string   // git's complete stdout
	Err        error    // underlying cause (*exec.ExitError, context error, ...)
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("git ")
	b.WriteString(e.Subcommand)
	if e.ExitCode >= 0 {
		fmt.Fprintf(&b, ": exit %d", e.ExitCode)
	} else if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	if msg := trimStderr(e.Stderr); msg != "" {
		b.WriteString(": ")
		b.WriteString(msg)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// trimStderr drops git's "hint:" lines (advice for an interactive user that
// may not apply, e.g. after gitx aborted an operation), trims blank space and
// caps the length.
func trimStderr(s string) string {
	var kept []string
	for line := range strings.SplitSeq(s, "\n") {
		line = strings.TrimRight(line, " \t\r")
		if strings.HasPrefix(line, "hint:") || line == "" {
			continue
		}
		kept = append(kept, line)
	}
	out := strings.TrimSpace(strings.Join(kept, "\n"))
	if len(out) > maxStderrInMessage {
		out = out[:maxStderrInMessage] + "…"
	}
	return out
}

// ApplyError reports a patch that git apply refused or could only apply with
// conflicts. errors.Is(err, ErrApplyConflict) holds for it.
type ApplyError struct {
	// Files that failed: the paths git named in its errors or, for a
	// three-way apply, the paths left with conflicts before gitx cleaned up.
	Files []string
	// ThreeWay is true when a three-way merge was attempted.
	ThreeWay bool
	// Err is the failed git command.
	Err *Error
}

func (e *ApplyError) Error() string {
	files := "unknown files"
	if len(e.Files) > 0 {
		files = strings.Join(e.Files, ", ")
	}
	return fmt.Sprintf("%v (%s): %v", ErrApplyConflict, files, e.Err)
}

func (e *ApplyError) Is(target error) bool { return target == ErrApplyConflict }

func (e *ApplyError) Unwrap() error { return e.Err }

// RevertConflictError reports a revert that conflicted; gitx aborted it, so
// HEAD, the index and the work tree are as they were before.
// errors.Is(err, ErrRevertConflict) holds for it.
type RevertConflictError struct {
	Commit string   // the commit that could not be reverted
	Files  []string // paths that conflicted
}

func (e *RevertConflictError) Error() string {
	return fmt.Sprintf("%v: reverting %s conflicts in %s (revert aborted, nothing changed)",
		ErrRevertConflict, e.Commit, strings.Join(e.Files, ", "))
}

func (e *RevertConflictError) Is(target error) bool { return target == ErrRevertConflict }

func isNoCommits(err error) bool { return errors.Is(err, ErrNoCommits) }
