package gitx

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/exit"
)

// TestStaleLockFile: a git that was killed (out of memory, say) leaves
// .git/index.lock behind, and every git that writes the index then
// fails. orch cannot know whether another git holds the lock or none
// does; its error names the file, says both, tells what to do, and has
// exit code 5 (busy). Removing the file lets the same call succeed.
func TestStaleLockFile(t *testing.T) {
	ctx := testCtx(t)
	r, base := buildRepo(t)
	b, err := r.BuildCommit(ctx, "HEAD", buildPatch(t, r), false, buildMsg)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.UpdateRef(ctx, "refs/heads/main", b.Commit, base, "orch accept t1"); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(r.Dir, ".git", "index.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = r.SyncPaths(ctx, base, b.Commit, b.Paths)
	var le *LockError
	if !errors.As(err, &le) || le.Path != lock || !errors.Is(err, ErrLocked) {
		t.Fatalf("SyncPaths with %s present: %v, want a LockError naming it", lock, err)
	}
	var gerr *Error
	if !errors.As(err, &gerr) || gerr.Subcommand != "update-index" {
		t.Errorf("the git command is not in the chain: %v", err)
	}
	if code := exit.Of(err); code != exit.Busy {
		t.Errorf("exit code %d, want %d (busy)", code, exit.Busy)
	}
	msg := exit.Format(err)
	for _, want := range []string{
		lock + " exists",
		"another git process may be running in this repository",
		"a git that was killed or crashed left the file behind",
		"If no git runs in this repository, remove the file and run the command again:\n  rm '" + lock + "'",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "Another git process seems") {
		t.Errorf("git's own advice is repeated:\n%s", msg)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Errorf("the lock file was touched: %v", err)
	}

	// A ref's lock is named the same way.
	refLock := filepath.Join(r.Dir, ".git", "refs", "heads", "main.lock")
	if err := os.WriteFile(refLock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err = r.UpdateRef(ctx, "refs/heads/main", base, b.Commit, "x")
	if !errors.As(err, &le) || le.Path != refLock || errors.Is(err, ErrRefMoved) {
		t.Errorf("UpdateRef with %s present: %v, want a LockError naming it", refLock, err)
	}
	os.Remove(refLock)

	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	if res, err := r.SyncPaths(ctx, base, b.Commit, b.Paths); err != nil || len(res.Updated) != 4 {
		t.Errorf("SyncPaths after the lock was removed: %+v, %v", res, err)
	}
}

// TestLockPath: the lock file is taken from git's message (LC_ALL=C),
// whichever command and lock it names; other failures are not locks.
func TestLockPath(t *testing.T) {
	tests := []struct{ stderr, want string }{
		{"fatal: Unable to create '/r/.git/index.lock': File exists.\n\nAnother git process seems to be running in this repository, e.g.\n", "/r/.git/index.lock"},
		{"error: cannot lock ref 'refs/heads/main': Unable to create '/r/.git/refs/heads/main.lock': File exists.\n", "/r/.git/refs/heads/main.lock"},
		{"fatal: Unable to create '/a dir/it's/.git/HEAD.lock': File exists.\n", "/a dir/it's/.git/HEAD.lock"},
		{"fatal: Unable to create '/r/.git/index.lock': Permission denied\n", ""},
		{"error: cannot lock ref 'refs/heads/main': is at 1 but expected 2\n", ""},
		{"fatal: not a git repository\n", ""},
	}
	for _, tt := range tests {
		if got := lockPath(tt.stderr); got != tt.want {
			t.Errorf("lockPath(%q) = %q, want %q", tt.stderr, got, tt.want)
		}
	}
}
