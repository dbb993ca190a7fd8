package gitx

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Repo is a git work tree. Dir is the top level of the work tree; Env holds
// extra environment entries ("KEY=value") for every git command, applied
// after the inherited environment (so they override it) but before the
// variables gitx always sets.
//
// A Repo holds no other state, so its methods may be called from several
// goroutines; git's own index.lock makes concurrent writes to one work tree
// fail (not corrupt it), so callers should serialise those.
type Repo struct {
	Dir string
	Env []string
	// Inherit are open files every git command inherits (as descriptors
	// 3, 4, … of the child). A git effect hands its lock to its git
	// commands this way, so that a git that outlives a killed orch (git
	// runs in a process group of its own) keeps the lock until it exits
	// (docs/git-effects.md, "Recovery").
	Inherit []*os.File
	// Fault, when set (tests only), is called before every git command
	// with its subcommand and arguments; a non-nil error is returned as
	// that command's failure without running it.
	Fault func(sub string, args []string) error
}

// Open finds the work tree containing dir (`git rev-parse --show-toplevel`).
// It fails with ErrNotRepo when dir is not inside a git work tree.
func Open(ctx context.Context, dir string) (*Repo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open repository %s: %w", dir, err)
	}
	if _, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("open repository: %w", err)
	}
	probe := &Repo{Dir: abs}
	out, err := probe.run(ctx, call{sub: "rev-parse", args: []string{"--show-toplevel"}})
	if err != nil {
		var gerr *Error
		if errors.As(err, &gerr) && strings.Contains(gerr.Stderr, "not a git repository") {
			return nil, fmt.Errorf("%w: %s", ErrNotRepo, dir)
		}
		if errors.As(err, &gerr) && strings.Contains(gerr.Stderr, "must be run in a work tree") {
			return nil, fmt.Errorf("%w: %s (no work tree)", ErrNotRepo, dir)
		}
		return nil, fmt.Errorf("open repository %s: %w", dir, err)
	}
	top := strings.TrimSuffix(string(out), "\n")
	if strings.TrimSpace(top) == "" {
		// A bare repository or the inside of a .git directory has no top level.
		return nil, fmt.Errorf("%w: %s (no work tree)", ErrNotRepo, dir)
	}
	return &Repo{Dir: top}, nil
}

// Head returns the full sha of HEAD, or ErrNoCommits on an unborn branch.
func (r *Repo) Head(ctx context.Context) (string, error) {
	out, err := r.run(ctx, call{sub: "rev-parse", args: []string{"-q", "--verify", "HEAD^{commit}"}})
	if err != nil {
		if exitCode(err) == 1 {
			return "", fmt.Errorf("head of %s: %w", r.Dir, ErrNoCommits)
		}
		return "", fmt.Errorf("head of %s: %w", r.Dir, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// Branch returns the checked-out branch name ("main", not "refs/heads/main"),
// or detached true and an empty name when HEAD is detached. An unborn branch
// reports its name.
func (r *Repo) Branch(ctx context.Context) (name string, detached bool, err error) {
	out, err := r.run(ctx, call{sub: "symbolic-ref", args: []string{"-q", "HEAD"}})
	if err != nil {
		if exitCode(err) == 1 {
			return "", true, nil
		}
		return "", false, fmt.Errorf("branch of %s: %w", r.Dir, err)
	}
	ref := strings.TrimSpace(string(out))
	return strings.TrimPrefix(ref, "refs/heads/"), false, nil
}

// ResolveCommit returns the full sha of the commit rev names (rev^{commit}),
// or ErrBadRevision.
func (r *Repo) ResolveCommit(ctx context.Context, rev string) (string, error) {
	if err := checkRev(rev); err != nil {
		return "", err
	}
	out, err := r.run(ctx, call{sub: "rev-parse", args: []string{"-q", "--verify", "--end-of-options", rev + "^{commit}"}})
	if err != nil {
		if exitCode(err) == 1 {
			return "", fmt.Errorf("%w: %q", ErrBadRevision, rev)
		}
		return "", fmt.Errorf("resolve %q: %w", rev, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// inProgressMarkers maps git-dir entries to the operation they reveal, in
// the order they are checked (a conflicted rebase also has CHERRY_PICK_HEAD,
// so rebase comes first).
var inProgressMarkers = []struct{ file, op string }{
	{"rebase-merge", "rebase"},
	{"rebase-apply", "rebase"}, // "am" when rebase-apply/applying exists
	{"MERGE_HEAD", "merge"},
	{"CHERRY_PICK_HEAD", "cherry-pick"},
	{"REVERT_HEAD", "revert"},
	{"BISECT_LOG", "bisect"},
}

// InProgress reports the git operation in progress in this work tree:
// "rebase", "am", "merge", "cherry-pick", "revert", "bisect", or "" when
// none. Paths come from `git rev-parse --git-path`, so linked work trees are
// checked against their own git directory.
func (r *Repo) InProgress(ctx context.Context) (string, error) {
	queries := make([][]string, 0, len(inProgressMarkers)+1)
	for _, m := range inProgressMarkers {
		queries = append(queries, []string{"--git-path", m.file})
	}
	queries = append(queries, []string{"--git-path", "rebase-apply/applying"})
	lines, err := r.revParsePaths(ctx, nil, queries...)
	if err != nil {
		return "", fmt.Errorf("operation in progress in %s: %w", r.Dir, err)
	}
	for i, m := range inProgressMarkers {
		ok, err := r.exists(lines[i])
		if err != nil {
			return "", err
		}
		if !ok {
			continue
		}
		if m.file == "rebase-apply" {
			if am, err := r.exists(lines[len(lines)-1]); err != nil {
				return "", err
			} else if am {
				return "am", nil
			}
		}
		return m.op, nil
	}
	return "", nil
}

// exists reports whether a path printed by git (relative to Dir or absolute)
// exists.
func (r *Repo) exists(p string) (bool, error) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(r.Dir, p)
	}
	_, err := os.Lstat(p)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return false, fmt.Errorf("check %s: %w", p, err)
}

// refuseInProgress fails with ErrOperationInProgress when one is.
func (r *Repo) refuseInProgress(ctx context.Context, what string) error {
	op, err := r.InProgress(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if op != "" {
		return fmt.Errorf("%s: %w: %s", what, ErrOperationInProgress, op)
	}
	return nil
}

// IsAncestor reports whether commit a is an ancestor of (or equal to) b.
func (r *Repo) IsAncestor(ctx context.Context, a, b string) (bool, error) {
	sa, err := r.ResolveCommit(ctx, a)
	if err != nil {
		return false, err
	}
	sb, err := r.ResolveCommit(ctx, b)
	if err != nil {
		return false, err
	}
	_, err = r.run(ctx, call{sub: "merge-base", args: []string{"--is-ancestor", sa, sb}})
	if err == nil {
		return true, nil
	}
	if exitCode(err) == 1 {
		return false, nil
	}
	return false, fmt.Errorf("is %s an ancestor of %s: %w", a, b, err)
}

// ChangedFiles lists the paths whose content differs between the trees of
// commits from and to (a plain tree diff, renames reported as a deletion
// plus an addition), sorted as git sorts them.
func (r *Repo) ChangedFiles(ctx context.Context, from, to string) ([]string, error) {
	sf, err := r.ResolveCommit(ctx, from)
	if err != nil {
		return nil, err
	}
	st, err := r.ResolveCommit(ctx, to)
	if err != nil {
		return nil, err
	}
	out, err := r.run(ctx, call{sub: "diff", args: []string{
		"--name-only", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", "--no-relative", sf, st, "--",
	}})
	if err != nil {
		return nil, fmt.Errorf("files changed from %s to %s: %w", from, to, err)
	}
	return splitNUL(out), nil
}
