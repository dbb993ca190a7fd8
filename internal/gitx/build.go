package gitx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrRefMoved: a compare-and-swap update of a ref failed because the ref no
// longer holds the expected old value.
var ErrRefMoved = errors.New("ref moved")

// Built is a commit made by BuildCommit or BuildRevert: its objects exist in
// the repository, but no ref, index or work-tree file has changed.
type Built struct {
	Commit string   // the new commit
	Tree   string   // its tree
	Parent string   // its only parent
	Paths  []string // paths whose content differs between Parent and Commit
}

// tempIndex runs fn with the environment of a private index file in a new
// temporary folder, removed afterwards. The user's index is never read or
// written by commands run with that environment.
func tempIndex(fn func(env []string) error) error {
	dir, err := os.MkdirTemp("", "gitx-index-")
	if err != nil {
		return fmt.Errorf("temporary index: %w", err)
	}
	defer os.RemoveAll(dir)
	return fn([]string{"GIT_INDEX_FILE=" + filepath.Join(dir, "index")})
}

// BuildCommit makes a commit whose parent is parent and whose tree is
// parent's tree with patch applied, without touching HEAD, any ref, the
// index or the work tree: the patch goes into a temporary index (`git
// read-tree`, `git apply --cached`, with threeWay `--3way`), which becomes a
// tree (`git write-tree`) and a commit (`git commit-tree`, which runs no
// hooks). msg is used as is (trailers included).
//
// A patch that does not apply, or whose three-way merge conflicts, gives an
// *ApplyError (errors.Is ErrApplyConflict) naming the files; one that
// changes nothing gives ErrNothingToCommit; one git cannot parse,
// ErrInvalidPatch.
func (r *Repo) BuildCommit(ctx context.Context, parent string, patch []byte, threeWay bool, msg string) (Built, error) {
	if strings.TrimSpace(msg) == "" {
		return Built{}, errors.New("build commit: empty commit message")
	}
	if len(bytes.TrimSpace(patch)) == 0 {
		return Built{}, fmt.Errorf("build commit: %w: empty patch", ErrNothingToCommit)
	}
	p, err := r.ResolveCommit(ctx, parent)
	if err != nil {
		return Built{}, err
	}
	touched, err := r.patchPaths(ctx, patch)
	if err != nil {
		return Built{}, err
	}
	var b Built
	err = tempIndex(func(env []string) error {
		if _, err := r.run(ctx, call{sub: "read-tree", args: []string{p}, env: env}); err != nil {
			return fmt.Errorf("build commit: %w", err)
		}
		args := []string{"--cached", "--whitespace=nowarn"}
		if threeWay {
			args = append(args, "--3way")
		}
		_, applyErr := r.run(ctx, call{sub: "apply", args: append(args, "-"), config: applyConfig, stdin: patch, env: env})
		if applyErr != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("build commit: %w", applyErr)
			}
			ui := &Repo{Dir: r.Dir, Env: append(append([]string{}, r.Env...), env...), Fault: r.Fault}
			if unmerged, err := ui.unmergedAmong(ctx, touched); err == nil && len(unmerged) > 0 {
				var gerr *Error
				errors.As(applyErr, &gerr)
				return &ApplyError{Files: unmerged, ThreeWay: threeWay, Err: gerr}
			}
			return r.applyFailure(ctx, patch, applyErr, threeWay, touched)
		}
		var err error
		b, err = r.writeAndCommit(ctx, env, p, msg)
		return err
	})
	return b, err
}

// writeAndCommit writes the temporary index as a tree and commits it on
// parent. ErrNothingToCommit when the tree is parent's.
func (r *Repo) writeAndCommit(ctx context.Context, env []string, parent, msg string) (Built, error) {
	out, err := r.run(ctx, call{sub: "write-tree", env: env})
	if err != nil {
		return Built{}, fmt.Errorf("build commit: %w", err)
	}
	tree := strings.TrimSpace(string(out))
	ptree, err := r.run(ctx, call{sub: "rev-parse", args: []string{"--verify", parent + "^{tree}"}})
	if err != nil {
		return Built{}, fmt.Errorf("build commit: %w", err)
	}
	if strings.TrimSpace(string(ptree)) == tree {
		return Built{}, fmt.Errorf("build commit on %.12s: %w", parent, ErrNothingToCommit)
	}
	out, err = r.run(ctx, call{sub: "commit-tree", args: []string{tree, "-p", parent, "-F", "-"}, stdin: []byte(msg)})
	if err != nil {
		return Built{}, fmt.Errorf("build commit: %w", err)
	}
	commit := strings.TrimSpace(string(out))
	paths, err := r.ChangedFiles(ctx, parent, commit)
	if err != nil {
		return Built{}, err
	}
	return Built{Commit: commit, Tree: tree, Parent: parent, Paths: paths}, nil
}

// BuildRevert makes a commit on parent that undoes target (a commit with
// exactly one parent), computed like `git revert` — a three-way merge of
// target's reverse diff into parent's tree — but in a temporary index, so
// HEAD, refs, the index and the work tree are not touched. A conflict gives
// a *RevertConflictError (errors.Is ErrRevertConflict) with the files; a
// revert that changes nothing (already reverted) gives ErrNothingToRevert.
func (r *Repo) BuildRevert(ctx context.Context, parent, target, msg string) (Built, error) {
	if strings.TrimSpace(msg) == "" {
		return Built{}, errors.New("build revert: empty commit message")
	}
	p, err := r.ResolveCommit(ctx, parent)
	if err != nil {
		return Built{}, err
	}
	t, err := r.ResolveCommit(ctx, target)
	if err != nil {
		return Built{}, err
	}
	out, err := r.run(ctx, call{sub: "rev-list", args: []string{"--parents", "-n", "1", t}})
	if err != nil {
		return Built{}, fmt.Errorf("build revert: %w", err)
	}
	fields := strings.Fields(string(out))
	if len(fields) != 2 {
		return Built{}, fmt.Errorf("build revert: %.12s has %d parents: only a commit with one parent can be reverted", t, len(fields)-1)
	}
	reverse, err := r.run(ctx, call{sub: "diff-tree", args: []string{
		"-p", "--binary", "--full-index", "--no-renames", "--no-ext-diff", "--no-textconv", "--no-color", t, fields[1], "--",
	}})
	if err != nil {
		return Built{}, fmt.Errorf("build revert: %w", err)
	}
	if len(bytes.TrimSpace(reverse)) == 0 {
		return Built{}, fmt.Errorf("revert %.12s: %w", t, ErrNothingToRevert)
	}
	b, err := r.BuildCommit(ctx, p, reverse, true, msg)
	var ae *ApplyError
	switch {
	case errors.As(err, &ae):
		return Built{}, &RevertConflictError{Commit: t, Files: ae.Files}
	case errors.Is(err, ErrNothingToCommit):
		return Built{}, fmt.Errorf("revert %.12s: %w", t, ErrNothingToRevert)
	}
	return b, err
}

// HeadRef returns the full name of the checked-out branch
// ("refs/heads/main"); ErrDetached when HEAD is detached.
func (r *Repo) HeadRef(ctx context.Context) (string, error) {
	name, detached, err := r.Branch(ctx)
	if err != nil {
		return "", err
	}
	if detached {
		return "", ErrDetached
	}
	return "refs/heads/" + name, nil
}

// ErrDetached: HEAD is not a branch.
var ErrDetached = errors.New("HEAD is detached")

// RefValue returns the commit a ref holds, or "" when it does not exist.
func (r *Repo) RefValue(ctx context.Context, ref string) (string, error) {
	out, err := r.run(ctx, call{sub: "rev-parse", args: []string{"-q", "--verify", "--end-of-options", ref + "^{commit}"}})
	if err != nil {
		if exitCode(err) == 1 {
			return "", nil
		}
		return "", fmt.Errorf("read %s: %w", ref, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// UpdateRef moves ref from old to new atomically (`git update-ref -m
// reason REF NEW OLD`): git takes the ref's lock and checks the old value
// under it, so a concurrent move makes this fail with ErrRefMoved and
// leaves the ref as the other writer left it.
func (r *Repo) UpdateRef(ctx context.Context, ref, newSHA, oldSHA, reason string) error {
	if !strings.HasPrefix(ref, "refs/") || strings.ContainsAny(ref, " \t\n") {
		return fmt.Errorf("update ref %q: not a full ref name", ref)
	}
	if !isHex(newSHA) || !isHex(oldSHA) {
		return fmt.Errorf("update ref %s: want full commit ids, got %q and %q", ref, newSHA, oldSHA)
	}
	_, err := r.run(ctx, call{sub: "update-ref", args: []string{"-m", reason, ref, newSHA, oldSHA}})
	if err == nil {
		return nil
	}
	var gerr *Error
	if errors.As(err, &gerr) && gerr.ExitCode > 0 && strings.Contains(gerr.Stderr, "but expected") {
		cur, _ := r.RefValue(context.WithoutCancel(ctx), ref)
		return fmt.Errorf("update %s to %.12s: %w: it holds %.12s, expected %.12s", ref, newSHA, ErrRefMoved, cur, oldSHA)
	}
	return fmt.Errorf("update %s to %.12s: %w", ref, newSHA, err)
}

// Subject returns the first line of a commit's message.
func (r *Repo) Subject(ctx context.Context, rev string) (string, error) {
	sha, err := r.ResolveCommit(ctx, rev)
	if err != nil {
		return "", err
	}
	out, err := r.run(ctx, call{sub: "log", args: []string{"-1", "--no-color", "--format=%s", sha, "--"}})
	if err != nil {
		return "", fmt.Errorf("subject of %.12s: %w", sha, err)
	}
	return strings.TrimSpace(string(out)), nil
}
