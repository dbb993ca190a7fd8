package testrun

import (
	"fmt"
	"strings"

	"github.com/orchdev/orch/internal/sandbox"
)

// caseWriteLimit is the case of a suite that ran out of the run's write
// bound.
const caseWriteLimit = "[write limit]"

// writeLimitMargin: a run whose writes are this close to the bound has
// reached it (a write that did not fit failed).
const writeLimitMargin = 1 << 20

// writeLimitProblem says, for a suite that just ended in the sandbox,
// whether it ran out of the run's write bound ([test] max_write): what
// the run wrote is at the bound, or its output ends with "no space left
// on device" (a write that did not fit is undone, as fallocate's) — in
// the sandbox every writable place lies in the run's bounded layers, so
// that is the bound. Empty when not. The report then says so (status
// error) rather than counting the tests that broke for it.
func (r *runner) writeLimitProblem(tail string) string {
	if r.sandbox == nil || r.sandbox.MaxWrite() <= 0 {
		return ""
	}
	limit, written := r.sandbox.MaxWrite(), r.sandbox.Written()
	lower := strings.ToLower(tail)
	if written < limit-writeLimitMargin && !strings.Contains(lower, "no space left on device") && !strings.Contains(tail, "ENOSPC") {
		return ""
	}
	return fmt.Sprintf("the suite ran out of space: what the suites of a run write (worktree, caches, /tmp, home) is bounded by [test] max_write = %s in .orch/config.toml (%s in use when it ended); raise max_write or make the suite write less",
		sandbox.FormatBytes(limit), sandbox.FormatBytes(max(written, 0)))
}

// viewOf is where orch reads path (in the directory) as the suites left
// it: through the sandbox's layers, or path itself.
func (r *runner) viewOf(path string) string {
	if r.sandbox == nil {
		return path
	}
	return r.sandbox.View(path)
}
