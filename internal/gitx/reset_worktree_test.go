package gitx

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A reused test worktree is exactly the commit again: what a suite
// changed, added or left ignored is gone, including a content change whose
// modification time was set back; files nobody touched keep their
// modification time (what keeps cargo's and make's builds warm).
func TestResetWorktree(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	r, c1 := seedRepo(t, map[string]string{"a.rs": "a1\n", "b.rs": "b\n", "c.rs": "c\n", ".gitignore": "target/\n"})
	writeFile(t, r, "a.rs", "a2\n")
	c2 := commitAll(t, r, "two")
	dir := filepath.Join(t.TempDir(), "wt")
	wt, err := r.AddWorktree(ctx, dir, c1)
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	for _, f := range []string{"a.rs", "b.rs", "c.rs"} {
		if err := os.Chtimes(filepath.Join(wt.Dir, f), old, old); err != nil {
			t.Fatal(err)
		}
	}
	// What a suite (or the last patch) left behind.
	writeOS(t, filepath.Join(wt.Dir, "c.rs"), "C\n", 0o644) // same size, mtime set back
	if err := os.Chtimes(filepath.Join(wt.Dir, "c.rs"), old, old); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(wt.Dir, "target", "debug"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeOS(t, filepath.Join(wt.Dir, "target", "debug", "stale"), "x", 0o644)
	writeOS(t, filepath.Join(wt.Dir, "new.rs"), "planted\n", 0o644)
	runGit(t, wt.Dir, "add", "new.rs")

	again, err := r.ResetWorktree(ctx, dir, c2)
	if err != nil {
		t.Fatal(err)
	}
	if again.Dir != wt.Dir {
		t.Errorf("reset worktree at %s, want %s", again.Dir, wt.Dir)
	}
	for f, want := range map[string]string{"a.rs": "a2\n", "b.rs": "b\n", "c.rs": "c\n"} {
		got, err := os.ReadFile(filepath.Join(wt.Dir, f))
		if err != nil || string(got) != want {
			t.Errorf("%s = %q (%v), want %q", f, got, err, want)
		}
	}
	for _, gone := range []string{"target", "new.rs"} {
		if _, err := os.Lstat(filepath.Join(wt.Dir, gone)); err == nil {
			t.Errorf("%s survived the reset", gone)
		}
	}
	if info, err := os.Stat(filepath.Join(wt.Dir, "b.rs")); err != nil || !info.ModTime().Equal(old) {
		t.Errorf("untouched b.rs was written again (mtime %v, want %v)", info.ModTime(), old)
	}
	if head := runGit(t, wt.Dir, "rev-parse", "HEAD"); head != c2 {
		t.Errorf("HEAD %s, want %s", head, c2)
	}

	// Not a work tree of r: refused, nothing touched.
	other, _ := seedRepo(t, map[string]string{"x": "x\n"})
	if _, err := other.ResetWorktree(ctx, dir, "HEAD"); err == nil || !strings.Contains(err.Error(), "not a linked work tree") {
		t.Errorf("reset by another repository: %v", err)
	}
	if _, err := r.ResetWorktree(ctx, r.Dir, c2); err == nil {
		t.Error("reset of the main work tree: no error")
	}
}
