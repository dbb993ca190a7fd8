package gitx

import (
	"context"
	"errors"
	"fmt"
)

// Revert creates a commit that undoes sha (`git revert --no-edit`) and
// returns the new commit's sha.
//
// When the revert conflicts, Revert lists the conflicting paths (`git diff
// --name-only --diff-filter=U`), runs `git revert --abort` (which puts HEAD,
// the index and the touched files back as they were; unrelated unstaged
// changes are kept) and returns those paths with a *RevertConflictError
// (errors.Is ErrRevertConflict). A revert that would change nothing gives
// ErrNothingToRevert. Git refuses to start when the index has staged changes
// or a touched file has unstaged ones; that error is returned as is, with
// nothing changed. ErrOperationInProgress when a merge, rebase, etc. is
// already in progress.
func (r *Repo) Revert(ctx context.Context, sha string) (newSHA string, conflicts []string, err error) {
	full, err := r.ResolveCommit(ctx, sha)
	if err != nil {
		return "", nil, err
	}
	if err := r.refuseInProgress(ctx, "revert"); err != nil {
		return "", nil, err
	}
	_, revErr := r.run(ctx, call{sub: "revert", args: []string{"--no-edit", full}})
	if revErr == nil {
		head, err := r.Head(ctx)
		if err != nil {
			return "", nil, fmt.Errorf("revert %s: %w", sha, err)
		}
		return head, nil, nil
	}

	// Clean up even when the context is what stopped git.
	cctx := context.WithoutCancel(ctx)
	op, err := r.InProgress(cctx)
	if err != nil {
		return "", nil, errors.Join(fmt.Errorf("revert %s: %w", sha, revErr), err)
	}
	var gerr *Error
	empty := errors.As(revErr, &gerr) && gerr.ExitCode == 1 && nothingToCommit(gerr.Stdout+gerr.Stderr)
	if op != "revert" {
		if empty {
			return "", nil, fmt.Errorf("revert %s: %w", sha, ErrNothingToRevert)
		}
		return "", nil, fmt.Errorf("revert %s: %w", sha, revErr)
	}
	out, listErr := r.run(cctx, call{sub: "diff", args: []string{"--name-only", "-z", "--diff-filter=U", "--no-relative"}})
	files := splitNUL(out)
	if _, err := r.run(cctx, call{sub: "revert", args: []string{"--abort"}}); err != nil {
		return "", files, errors.Join(fmt.Errorf("revert %s: %w", sha, revErr),
			fmt.Errorf("revert --abort failed; the revert is still in progress: %w", err))
	}
	if listErr != nil {
		return "", nil, errors.Join(fmt.Errorf("revert %s: %w (aborted)", sha, revErr), listErr)
	}
	if len(files) == 0 {
		if empty {
			return "", nil, fmt.Errorf("revert %s: %w", sha, ErrNothingToRevert)
		}
		return "", nil, fmt.Errorf("revert %s (aborted): %w", sha, revErr)
	}
	return "", files, &RevertConflictError{Commit: full, Files: files}
}
