package gitx

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWorktreeAddRemove(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	r, first := seedRepo(t, map[string]string{"a.txt": "1\n", "d/b.txt": "b\n"})
	writeFile(t, r, "a.txt", "2\n")
	second := commitAll(t, r, "second")

	dir := filepath.Join(t.TempDir(), "wt one")
	wt, err := r.AddWorktree(ctx, dir, first)
	if err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(dir)
	if wt.Dir != real {
		t.Errorf("worktree Dir = %q, want %q", wt.Dir, real)
	}
	if head, err := wt.Head(ctx); err != nil || head != first {
		t.Errorf("worktree Head = %q, %v; want %q", head, err, first)
	}
	if _, detached, err := wt.Branch(ctx); err != nil || !detached {
		t.Errorf("worktree detached = %v, %v", detached, err)
	}
	if got := readFile(t, wt, "a.txt"); got != "1\n" {
		t.Errorf("worktree a.txt = %q", got)
	}
	if head, _ := r.Head(ctx); head != second {
		t.Errorf("main HEAD moved to %s", head)
	}
	if name, _, _ := r.Branch(ctx); name != "main" {
		t.Errorf("main branch = %q", name)
	}
	if !strings.Contains(runGit(t, r.Dir, "worktree", "list", "--porcelain"), "worktree "+real) {
		t.Error("worktree not listed")
	}

	writeFile(t, wt, "a.txt", "local change\n")
	writeFile(t, wt, "untracked", "u\n")
	if err := r.RemoveWorktree(ctx, dir); err != nil {
		t.Fatalf("RemoveWorktree with local changes: %v", err)
	}
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Errorf("worktree dir still there: %v", err)
	}
	if strings.Contains(runGit(t, r.Dir, "worktree", "list", "--porcelain"), real) {
		t.Error("worktree still listed")
	}
	if err := r.RemoveWorktree(ctx, dir); err != nil {
		t.Errorf("second RemoveWorktree = %v, want nil", err)
	}

	// A work tree whose folder vanished is pruned.
	dir2 := filepath.Join(t.TempDir(), "wt2")
	if _, err := r.AddWorktree(ctx, dir2, second); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir2); err != nil {
		t.Fatal(err)
	}
	if err := r.RemoveWorktree(ctx, dir2); err != nil {
		t.Fatalf("RemoveWorktree(vanished) = %v", err)
	}
	if list := runGit(t, r.Dir, "worktree", "list", "--porcelain"); strings.Contains(list, "wt2") {
		t.Errorf("vanished worktree not pruned:\n%s", list)
	}

	// A folder that is not one of r's work trees is left alone.
	plain := t.TempDir()
	writeFile(t, &Repo{Dir: plain}, "keep.txt", "k\n")
	if err := r.RemoveWorktree(ctx, plain); err == nil {
		t.Error("RemoveWorktree(plain folder) succeeded")
	}
	if _, err := os.Stat(filepath.Join(plain, "keep.txt")); err != nil {
		t.Errorf("plain folder damaged: %v", err)
	}
	if err := r.RemoveWorktree(ctx, r.Dir); err == nil {
		t.Error("RemoveWorktree(main work tree) succeeded")
	}

	if _, err := r.AddWorktree(ctx, filepath.Join(t.TempDir(), "x"), "nope"); !errors.Is(err, ErrBadRevision) {
		t.Errorf("AddWorktree(bad commit) = %v, want ErrBadRevision", err)
	}
	if _, err := r.AddWorktree(ctx, plain, first); err == nil {
		t.Error("AddWorktree into a non-empty folder succeeded")
	}
}
