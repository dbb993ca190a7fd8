// Package phases holds the work of the phases that touch the user's
// repository through git: test (isolated worktree, sandboxed suites),
// accept (apply and commit) and revert. Each runs through the
// orchestrator's RunPhase protocol: the phase is marked running under the
// task's lock, the work happens without the lock into a staging folder, and
// the artifacts are committed under the lock after a revision check.
package phases
