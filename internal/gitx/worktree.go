package gitx

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
