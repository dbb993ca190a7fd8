// Package gitx is a small wrapper around the real git binary, used by orch's
// codegen, test, accept and revert phases.
//
// Every operation executes git (it never re-implements it) with a context,
// "-C <dir>", LC_ALL=C, GIT_TERMINAL_PROMPT=0, no pager, literal pathspecs
// no optional locks, hooks disabled (core.hooksPath=/dev/null) and no
// fs monitor. Variables that would redirect git to another
// repository or index (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE, ...) are
// removed from the inherited environment; Repo.Env is appended after it.
//
// A failed git command is reported as an *Error whose message names the
// subcommand, the exit code and git's trimmed stderr, for example
//
//	git apply: exit 1: error: patch failed: x.go:3
//
// Conditions callers act on have sentinel errors (ErrNotRepo, ErrNoCommits,
// ErrApplyConflict, ErrRevertConflict, ...) matched with errors.Is, and typed
// errors (*ApplyError, *RevertConflictError) that carry the files involved.
//
// The package never force-pushes, never runs reset --hard, clean, stash or a
// checkout of files an operation does not need, and never invents a commit
// identity: a missing user.name/user.email surfaces as git's own error.
package gitx
