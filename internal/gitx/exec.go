package gitx

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

// call describes one git invocation.
type call struct {
	sub    string   // subcommand, also named in errors
	args   []string // arguments after the subcommand
	config []string // "key=value" passed as -c before the subcommand
	stdin  []byte   // given to git as a file complete before it starts (stdinFile)
	env    []string // extra environment, applied last
}

// strippedEnv lists inherited variables that would point git at another
// repository, index or object store, or change how pathspecs are read.
var strippedEnv = []string{
	"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
	"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE",
	"GIT_PREFIX", "GIT_LITERAL_PATHSPECS", "GIT_GLOB_PATHSPECS",
	"GIT_NOGLOB_PATHSPECS", "GIT_ICASE_PATHSPECS", "GIT_QUARANTINE_PATH",
	"GIT_EXTERNAL_DIFF", "GIT_DIFF_OPTS", "GIT_PAGER", "PAGER",
	"GIT_TERMINAL_PROMPT", "GIT_OPTIONAL_LOCKS", "GIT_EDITOR", "LC_ALL",
}

// fixedEnv is set on every command, after Repo.Env.
var fixedEnv = []string{
	"LC_ALL=C",
	"GIT_TERMINAL_PROMPT=0",
	"GIT_PAGER=cat",
	"PAGER=cat",
	"GIT_EDITOR=true", // never wait for an editor
	"GIT_LITERAL_PATHSPECS=1",
	"GIT_OPTIONAL_LOCKS=0", // read-only commands do not write the index
}

// safeConfig is passed as -c to every git command. Hooks never run for
// anything orch does in a repository (a hook is code from the repository,
// possibly planted by a test suite, running outside any sandbox), and no
// file-system monitor daemon is started.
var safeConfig = []string{"core.hooksPath=/dev/null", "core.fsmonitor=false"}

// waitDelay bounds how long a cancelled git may take to exit after the
// termination signal before it is killed.
const waitDelay = 5 * time.Second

func (r *Repo) environ(extra []string) []string {
	base := os.Environ()
	env := make([]string, 0, len(base)+len(r.Env)+len(fixedEnv)+len(extra))
	for _, kv := range base {
		key, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(strippedEnv, key) {
			env = append(env, kv)
		}
	}
	env = append(env, r.Env...)
	env = append(env, fixedEnv...)
	return append(env, extra...) // exec uses the last value of a duplicate key
}

// run executes git and returns its stdout. A non-zero exit or a failure to
// run yields *Error.
func (r *Repo) run(ctx context.Context, c call) ([]byte, error) {
	stdout, _, err := r.runFull(ctx, c)
	return stdout, err
}

// command is git with args in the repository's environment plus env, in
// a process group of its own that cancelling ctx stops as a whole (git and
// what it started), waited for at most waitDelay after that.
func (r *Repo) command(ctx context.Context, args, env []string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Env = r.environ(env)
	cmd.ExtraFiles = r.Inherit
	setProcessGroup(cmd)
	cmd.WaitDelay = waitDelay
	return cmd
}

// runFull is run that also returns stderr, for commands that report
// outcomes there even when they succeed.
func (r *Repo) runFull(ctx context.Context, c call) (stdout, stderr []byte, err error) {
	args := make([]string, 0, 4+2*(len(safeConfig)+len(c.config))+len(c.args))
	args = append(args, "--no-pager", "-C", r.Dir)
	for _, kv := range append(safeConfig[:len(safeConfig):len(safeConfig)], c.config...) {
		args = append(args, "-c", kv)
	}
	args = append(args, c.sub)
	args = append(args, c.args...)

	if r.Fault != nil {
		if err := r.Fault(c.sub, c.args); err != nil {
			return nil, nil, &Error{Subcommand: c.sub, Args: args, ExitCode: -1, Err: err}
		}
	}
	cmd := r.command(ctx, args, c.env)
	if c.stdin != nil {
		f, release, err := stdinFile(c.stdin)
		if err != nil {
			return nil, nil, &Error{Subcommand: c.sub, Args: args, ExitCode: -1, Err: err}
		}
		defer release()
		cmd.Stdin = f
	}
	var outBuf, errBuf bytes.Buffer
	cmd.Stdout = &outBuf
	cmd.Stderr = &errBuf

	err = cmd.Run()
	if err == nil {
		return outBuf.Bytes(), errBuf.Bytes(), nil
	}
	gerr := &Error{
		Subcommand: c.sub,
		Args:       args,
		ExitCode:   -1,
		Stderr:     errBuf.String(),
		Stdout:     outBuf.String(),
		Err:        err,
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		gerr.Err = ctxErr
		return outBuf.Bytes(), errBuf.Bytes(), gerr
	}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) && exitErr.Exited() {
		gerr.ExitCode = exitErr.ExitCode()
	}
	return outBuf.Bytes(), errBuf.Bytes(), lockFailure(gerr)
}

// exitCode returns the exit code of a *Error, or -1 for any other error.
func exitCode(err error) int {
	var gerr *Error
	if errors.As(err, &gerr) {
		return gerr.ExitCode
	}
	return -1
}
