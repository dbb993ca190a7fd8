package gitx

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// AddWorktree checks commit out, detached, in a new linked work tree at dir
// (`git worktree add --detach`) and returns it as a Repo sharing r.Env.
func (r *Repo) AddWorktree(ctx context.Context, dir, commit string) (*Repo, error) {
	sha, err := r.ResolveCommit(ctx, commit)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("add worktree %s: %w", dir, err)
	}
	if _, err := r.run(ctx, call{sub: "worktree", args: []string{"add", "--detach", "--quiet", abs, sha}}); err != nil {
		return nil, fmt.Errorf("add worktree %s at %s: %w", dir, commit, err)
	}
	wt, err := Open(ctx, abs)
	if err != nil {
		return nil, fmt.Errorf("add worktree %s: %w", dir, err)
	}
	wt.Env = r.Env
	return wt, nil
}

// RemoveWorktree removes the linked work tree at dir (`git worktree remove
// --force`, which discards its local changes) and prunes stale work-tree
// records. A dir that no longer exists is not an error: only the prune runs.
// A dir that exists but is not a linked work tree of r is an error.
func (r *Repo) RemoveWorktree(ctx context.Context, dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("remove worktree %s: %w", dir, err)
	}
	if _, err := os.Lstat(abs); err == nil {
		if _, err := r.run(ctx, call{sub: "worktree", args: []string{"remove", "--force", abs}}); err != nil {
			return fmt.Errorf("remove worktree %s: %w", dir, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove worktree %s: %w", dir, err)
	}
	if _, err := r.run(ctx, call{sub: "worktree", args: []string{"prune"}}); err != nil {
		return fmt.Errorf("remove worktree %s: %w", dir, err)
	}
	return nil
}

// exactConfig makes git's "is this file unchanged?" check trust nothing a
// process in the work tree can fake: the change time (which no process can
// set back, unlike the modification time) and every other stat field are
// compared, and neither an fs monitor nor the untracked cache is consulted.
var exactConfig = []string{"core.trustctime=true", "core.checkStat=default", "core.ignoreStat=false", "core.untrackedCache=false", "advice.detachedHead=false"}

// ResetWorktree makes the linked work tree at dir, made earlier by
// AddWorktree of r, exactly commit again so that it can be reused: files
// that differ from commit in content (checked by git's stat data including
// the change time, and by content where those differ) are written again,
// the others keep their modification times — so build tools that judge by
// them (cargo, make) and caches keyed on the path (Go's) stay warm — and
// every untracked and ignored file is removed. It fails, changing nothing
// more, when dir is not a work tree of r, and it checks the result: `git
// status --ignored` must show nothing. The caller then makes a fresh one.
func (r *Repo) ResetWorktree(ctx context.Context, dir, commit string) (*Repo, error) {
	sha, err := r.ResolveCommit(ctx, commit)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return nil, fmt.Errorf("reset worktree %s: %w", dir, err)
	}
	wt, err := Open(ctx, abs)
	if err != nil {
		return nil, fmt.Errorf("reset worktree %s: %w", dir, err)
	}
	wt.Env = r.Env
	if wt.Dir != abs {
		return nil, fmt.Errorf("reset worktree %s: its top level is %s", dir, wt.Dir)
	}
	mine, err := r.revParsePaths(ctx, []string{"--path-format=absolute"}, []string{"--git-common-dir"})
	if err != nil {
		return nil, fmt.Errorf("reset worktree %s: %w", dir, err)
	}
	dirs, err := wt.revParsePaths(ctx, []string{"--path-format=absolute"}, []string{"--git-common-dir"}, []string{"--git-dir"})
	if err != nil {
		return nil, fmt.Errorf("reset worktree %s: %w", dir, err)
	}
	if dirs[0] != mine[0] || dirs[0] == dirs[1] {
		return nil, fmt.Errorf("reset worktree %s: not a linked work tree of %s", dir, r.Dir)
	}
	// Content equal but stat data changed (a chown, a touch): refresh the
	// index instead of writing the file again. Its exit status only says
	// that some files differ; checkout deals with those.
	_, _ = wt.run(ctx, call{sub: "update-index", args: []string{"-q", "--refresh"}, config: exactConfig})
	if _, err := wt.run(ctx, call{sub: "checkout", args: []string{"--detach", "--force", "--quiet", sha}, config: exactConfig}); err != nil {
		return nil, fmt.Errorf("reset worktree %s to %.12s: %w", dir, sha, err)
	}
	if _, err := wt.run(ctx, call{sub: "clean", args: []string{"-ffdxq"}, config: exactConfig}); err != nil {
		return nil, fmt.Errorf("reset worktree %s: %w", dir, err)
	}
	out, err := wt.run(ctx, call{sub: "status", args: []string{"--porcelain=v1", "--ignored", "--untracked-files=all", "-z"}, config: exactConfig})
	if err != nil {
		return nil, fmt.Errorf("reset worktree %s: %w", dir, err)
	}
	if len(out) > 0 {
		first, _, _ := strings.Cut(string(out), "\x00")
		return nil, fmt.Errorf("reset worktree %s: still differs from %.12s after the reset (%s)", dir, sha, first)
	}
	head, err := wt.run(ctx, call{sub: "rev-parse", args: []string{"--verify", "HEAD"}})
	if err != nil || strings.TrimSpace(string(head)) != sha {
		return nil, fmt.Errorf("reset worktree %s: HEAD is %q, not %s (%v)", dir, strings.TrimSpace(string(head)), sha, err)
	}
	return wt, nil
}
