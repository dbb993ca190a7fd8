package gitx

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCommitOnlyNamedPaths(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	r, base := seedRepo(t, map[string]string{
		"m.go": "m\n", "d.go": "d\n", "d2.go": "d2\n", "u1.txt": "u1\n", "u2.txt": "u2\n",
	})
	// The user's own work, which must survive untouched.
	writeFile(t, r, "u1.txt", "u1 staged\n")
	runGit(t, r.Dir, "add", "u1.txt")
	writeFile(t, r, "u1.txt", "u1 staged, then edited again\n")
	writeFile(t, r, "u2.txt", "u2 unstaged\n")
	writeFile(t, r, "u3.txt", "untracked\n")
	userIndex := runGit(t, r.Dir, "ls-files", "-s", "u1.txt", "u2.txt")

	// orch's change: modify, create in new dirs, delete, and a `git rm`.
	writeFile(t, r, "m.go", "m changed\n")
	writeFile(t, r, "new dir/ü/n.go", "new\n")
	if err := os.Remove(filepath.Join(r.Dir, "d.go")); err != nil {
		t.Fatal(err)
	}
	runGit(t, r.Dir, "rm", "-q", "d2.go")

	paths := []string{"m.go", "new dir/ü/n.go", "d.go", "d2.go"}
	sha, err := r.Commit(ctx, "orch: apply change\n\nOrch-Task: 0007-x\n", paths)
	if err != nil {
		t.Fatal(err)
	}
	if head := runGit(t, r.Dir, "rev-parse", "HEAD"); sha != head {
		t.Errorf("Commit returned %s, HEAD is %s", sha, head)
	}
	if parent := runGit(t, r.Dir, "rev-parse", "HEAD~1"); parent != base {
		t.Errorf("parent = %s, want %s", parent, base)
	}
	got := runGit(t, r.Dir, "-c", "core.quotePath=false", "show", "--name-status", "--format=", "HEAD")
	want := "D\td.go\nD\td2.go\nM\tm.go\nA\tnew dir/ü/n.go"
	if got != want {
		t.Errorf("committed:\n%s\nwant:\n%s", got, want)
	}
	if msg := runGit(t, r.Dir, "log", "-1", "--format=%B"); msg != "orch: apply change\n\nOrch-Task: 0007-x" {
		t.Errorf("message = %q", msg)
	}

	status := runGit(t, r.Dir, "status", "--porcelain", "--untracked-files=all")
	if want := "MM u1.txt\n M u2.txt\n?? u3.txt"; status != want {
		t.Errorf("status after commit:\n%s\nwant:\n%s", status, want)
	}
	if got := runGit(t, r.Dir, "ls-files", "-s", "u1.txt", "u2.txt"); got != userIndex {
		t.Errorf("user's index entries changed:\n%s\nwant:\n%s", got, userIndex)
	}
	if got := readFile(t, r, "u1.txt"); got != "u1 staged, then edited again\n" {
		t.Errorf("u1.txt = %q", got)
	}

	if _, err := r.Commit(ctx, "again", paths[:1]); !errors.Is(err, ErrNothingToCommit) {
		t.Errorf("second Commit = %v, want ErrNothingToCommit", err)
	}
}

func TestCommitInitial(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	r := newRepo(t)
	writeFile(t, r, "first.txt", "1\n")
	writeFile(t, r, "later.txt", "not yet\n")
	sha, err := r.Commit(ctx, "initial", []string{"first.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if got := runGit(t, r.Dir, "ls-tree", "--name-only", sha); got != "first.txt" {
		t.Errorf("tree = %q", got)
	}
	if st := runGit(t, r.Dir, "status", "--porcelain"); st != "?? later.txt" {
		t.Errorf("status = %q", st)
	}
}

func TestCommitRefusals(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	r, _ := seedRepo(t, map[string]string{"a": "a\n"})
	writeFile(t, r, "a", "changed\n")
	if _, err := r.Commit(ctx, "m", nil); !errors.Is(err, ErrBadPath) {
		t.Errorf("Commit(no paths) = %v, want ErrBadPath", err)
	}
	if _, err := r.Commit(ctx, "m", []string{"../a"}); !errors.Is(err, ErrBadPath) {
		t.Errorf("Commit(../a) = %v, want ErrBadPath", err)
	}
	if _, err := r.Commit(ctx, " \n", []string{"a"}); err == nil {
		t.Error("Commit(blank message) succeeded")
	}
	if _, err := r.Commit(ctx, "m", []string{"never-existed"}); err == nil || errors.Is(err, ErrNothingToCommit) {
		t.Errorf("Commit(unknown path) = %v, want git's pathspec error", err)
	}

	m, _, _ := divergedRepo(t)
	if _, err := gitOut(m.Dir, nil, "merge", "--no-edit", "side"); err == nil {
		t.Fatal("merge unexpectedly succeeded")
	}
	if _, err := m.Commit(ctx, "m", []string{"other.txt"}); !errors.Is(err, ErrOperationInProgress) {
		t.Errorf("Commit during merge = %v, want ErrOperationInProgress", err)
	}
}

// TestCommitRunsNoHook: a repository's hooks (here a failing pre-commit
// that leaves a mark) never run for gitx's commits.
func TestCommitRunsNoHook(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	r, _ := seedRepo(t, map[string]string{"a": "a\n"})
	mark := filepath.Join(r.Dir, ".git", "hook-ran")
	hook := filepath.Join(r.Dir, ".git", "hooks", "pre-commit")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\ntouch '"+mark+"'\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, r, "a", "changed\n")
	writeFile(t, r, "new.txt", "new\n")
	if _, err := r.Commit(ctx, "m", []string{"a", "new.txt"}); err != nil {
		t.Fatalf("Commit = %v", err)
	}
	if _, err := os.Stat(mark); !os.IsNotExist(err) {
		t.Errorf("the pre-commit hook ran (%v)", err)
	}
}

func TestCommitWithoutIdentitySurfacesGitError(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	r, _ := seedRepo(t, map[string]string{"a": "a\n"})
	writeFile(t, r, "a", "changed\n")
	before := stateOf(t, r)
	bare := &Repo{Dir: r.Dir, Env: []string{
		// No GIT_AUTHOR_*/GIT_COMMITTER_*; forbid git's guess from the host name.
		// (TestMain points HOME and the global config at an empty place.)
		"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=user.useConfigOnly", "GIT_CONFIG_VALUE_0=true",
	}}
	if os.Getenv("EMAIL") != "" || os.Getenv("GIT_AUTHOR_EMAIL") != "" || os.Getenv("GIT_COMMITTER_EMAIL") != "" {
		t.Skip("the environment provides an identity")
	}
	_, err := bare.Commit(ctx, "m", []string{"a"})
	var gerr *Error
	if !errors.As(err, &gerr) || !strings.Contains(err.Error(), "git commit: exit 128") ||
		!strings.Contains(err.Error(), "Please tell me who you are") {
		t.Fatalf("Commit without identity = %v, want git's identity error", err)
	}
	assertSameState(t, before, stateOf(t, r))
}
