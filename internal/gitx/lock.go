package gitx

import (
	"fmt"
	"strings"

	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/lazyre"
)

// ErrLocked: git could not take one of the repository's lock files
// (.git/index.lock, a ref's .lock) because the file exists. Its exit code
// is 5, busy (README, "Exit codes").
var ErrLocked = exit.NewSentinel(exit.Busy, "a git lock file exists")

// LockError is a git command that failed because a lock file exists:
// another git process is running in the repository, or a git that was
// killed (out of memory, say) or crashed left the file behind. orch
// cannot tell which, so it never removes the file itself.
type LockError struct {
	Path string // the lock file, as git named it (absolute)
	Err  *Error // the failed git command
}

func (e *LockError) Error() string {
	return fmt.Sprintf("git %s could not lock the repository: %s exists", e.Err.Subcommand, e.Path)
}

func (e *LockError) Unwrap() error { return e.Err }

// lockMessage matches git's message for a lock file that exists
// (lockfile.c, in the C locale every git here runs in).
var lockMessage = lazyre.New(`Unable to create '(.+\.lock)': File exists\.`)

// lockPath returns the lock file a git's stderr says exists, or "".
func lockPath(stderr string) string {
	if !strings.Contains(stderr, "File exists") {
		return ""
	}
	if m := lockMessage.FindStringSubmatch(stderr); m != nil {
		return m[1]
	}
	return ""
}

// lockFailure turns gerr into an error of kind ErrLocked when git failed
// because a lock file exists: the message names the file and says that
// another git may be running or one that crashed left it; the hint says
// to remove it when no git runs. Any other failure is gerr itself.
func lockFailure(gerr *Error) error {
	p := lockPath(gerr.Stderr)
	if p == "" || gerr.ExitCode <= 0 {
		return gerr
	}
	le := &LockError{Path: p, Err: gerr}
	return &exit.Error{
		Kind: ErrLocked,
		Msg: le.Error() + ": another git process may be running in this repository, " +
			"or a git that was killed or crashed left the file behind",
		Hint: "If no git runs in this repository, remove the file and run the command again:\n  rm '" +
			strings.ReplaceAll(p, "'", `'\''`) + "'",
		Err: le,
	}
}
