package testphase

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gofrs/flock"

	"github.com/orchdev/orch/internal/gitx"
)

// WarmWorktree is the folder, below a repository's build cache folder,
// of the test worktree orch keeps between runs.
const WarmWorktree = "worktree"

// testWorktree returns a detached worktree of base for one test run, the
// folder it is in and the function that releases it when the run is over.
//
// With a build cache folder (cacheRoot, from [test] build_cache) and
// without keep, it is the repository's warm worktree, cacheRoot/worktree,
// kept between runs and reset to exactly base each time
// (gitx.ResetWorktree: files whose content differs are written again, the
// rest keep their modification times, every untracked and ignored file
// goes, and git status must then show nothing). A stable path and
// unchanged file times are what let cargo, Go's build cache and make skip
// what is already built, as they do in a working tree by hand. The tested
// tree is still exactly base plus the patch. One run at a time uses it
// (a lock file beside it); another run at the same time, a worktree that
// cannot be reset (a killed run left it half handed over), or keep, gets a
// fresh worktree in a temporary folder (below tempDir, else the system's),
// removed afterwards unless keep, and a note says so.
func testWorktree(ctx context.Context, repo *gitx.Repo, id, base, cacheRoot, tempDir string, keep bool) (*gitx.Repo, string, func(), []string, error) {
	var notes []string
	if cacheRoot != "" && !keep {
		wt, dir, release, note, err := warmWorktree(ctx, repo, base, cacheRoot)
		if note != "" {
			notes = append(notes, note)
		}
		if err == nil {
			return wt, dir, release, notes, nil
		}
		notes = append(notes, fmt.Sprintf("the warm test worktree could not be used (%v): a fresh worktree this time, so builds start cold", err))
	}
	if tempDir != "" {
		if err := os.MkdirAll(tempDir, 0o755); err != nil {
			return nil, "", nil, notes, fmt.Errorf("create worktree folder: %w", err)
		}
	}
	parent, err := os.MkdirTemp(tempDir, "orch-test-"+id+"-")
	if err != nil {
		return nil, "", nil, notes, fmt.Errorf("create worktree folder: %w", err)
	}
	dir := filepath.Join(parent, "worktree")
	wt, err := repo.AddWorktree(ctx, dir, base)
	if err != nil {
		_ = os.RemoveAll(parent)
		return nil, "", nil, notes, err
	}
	release := func() {
		if keep {
			return
		}
		_ = repo.RemoveWorktree(context.WithoutCancel(ctx), dir)
		_ = os.RemoveAll(parent)
	}
	return wt, dir, release, notes, nil
}

// warmWorktree locks, resets (or first creates) the warm worktree below
// cacheRoot. An error means it is not to be used this time; note says
// what happened to it.
func warmWorktree(ctx context.Context, repo *gitx.Repo, base, cacheRoot string) (wt *gitx.Repo, dir string, release func(), note string, err error) {
	if err := os.MkdirAll(cacheRoot, 0o755); err != nil {
		return nil, "", nil, "", err
	}
	lock := flock.New(filepath.Join(cacheRoot, WarmWorktree+".lock"))
	ok, err := lock.TryLock()
	if err != nil {
		return nil, "", nil, "", fmt.Errorf("lock: %w", err)
	}
	if !ok {
		return nil, "", nil, "", fmt.Errorf("another orch test of this repository is using it")
	}
	release = func() { _ = lock.Unlock() }
	dir = filepath.Join(cacheRoot, WarmWorktree)
	if _, statErr := os.Lstat(dir); statErr == nil {
		wt, err = repo.ResetWorktree(ctx, dir, base)
		if err == nil {
			return wt, dir, release, fmt.Sprintf("tests run in the warm test worktree %s, reset to exactly %.12s (untouched files keep their times, so builds stay warm)", dir, base), nil
		}
		note = fmt.Sprintf("the warm test worktree %s could not be reset (%v): made again", dir, err)
		if rmErr := repo.RemoveWorktree(context.WithoutCancel(ctx), dir); rmErr != nil {
			_ = os.RemoveAll(dir)
			_ = repo.RemoveWorktree(context.WithoutCancel(ctx), dir) // prune its record
		}
		if _, statErr := os.Lstat(dir); statErr == nil {
			if err := os.RemoveAll(dir); err != nil {
				release()
				return nil, "", nil, note, fmt.Errorf("remove %s: %w", dir, err)
			}
		}
	} else {
		// A record of a worktree whose folder is gone would make the add
		// fail: prune it.
		_ = repo.RemoveWorktree(context.WithoutCancel(ctx), dir)
		note = fmt.Sprintf("tests run in a new warm test worktree %s, kept for the next runs (builds stay warm)", dir)
		// Say whose cache this is, and remove the caches of repositories
		// that no longer exist.
		_ = os.WriteFile(filepath.Join(cacheRoot, cacheOwner), []byte(repo.Dir), 0o644)
		pruneBuildCaches(filepath.Dir(cacheRoot), cacheRoot)
	}
	wt, err = repo.AddWorktree(ctx, dir, base)
	if err != nil {
		release()
		return nil, "", nil, note, err
	}
	return wt, dir, release, note, nil
}

// cacheOwner is the file in a repository's build cache folder that names
// the repository.
const cacheOwner = "repository"

// maxCachesScanned bounds the build cache folders pruneBuildCaches reads.
const maxCachesScanned = 10000

// pruneBuildCaches removes the build cache folders in dir (but keep)
// whose repository no longer exists: their warm worktrees and build
// caches can never be used again. A folder without an owner file, whose
// owner cannot be read, or whose worktree is in use stays.
func pruneBuildCaches(dir, keep string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for i, e := range entries {
		if i >= maxCachesScanned {
			return
		}
		folder := filepath.Join(dir, e.Name())
		if !e.IsDir() || folder == keep {
			continue
		}
		owner, err := os.ReadFile(filepath.Join(folder, cacheOwner))
		if err != nil || len(owner) == 0 || !filepath.IsAbs(string(owner)) {
			continue
		}
		if _, err := os.Lstat(string(owner)); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		lock := flock.New(filepath.Join(folder, WarmWorktree+".lock"))
		if ok, err := lock.TryLock(); err != nil || !ok {
			continue
		}
		_ = os.RemoveAll(folder)
		_ = lock.Unlock()
	}
}
