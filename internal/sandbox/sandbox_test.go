package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/orchdev/orch/internal/gittest"
)

func TestParentsInTmpfs(t *testing.T) {
	tests := []struct {
		name string
		s    Sandbox
		want []string
	}{
		{"worktree under /tmp, cache and toolchain under a hidden home",
			Sandbox{dir: "/tmp/orch-test-1/worktree", goCacheDir: "/root/.cache/orch/gocache", homes: []string{"/root"}, keep: []string{"/root/go"}},
			[]string{"/tmp/orch-test-1", "/root/.cache", "/root/.cache/orch"}},
		{"binds right below a tmpfs need nothing",
			Sandbox{dir: "/tmp/wt", goCacheDir: "/root/gocache", homes: []string{"/root"}},
			nil},
		{"outside every tmpfs: the folders on the way, in the sandbox's empty root",
			Sandbox{dir: "/srv/wt", goCacheDir: "/var/cache/orch/gocache"},
			[]string{"/srv", "/var", "/var/cache", "/var/cache/orch"}},
		{"git directories and mounts count, each folder once, top down",
			Sandbox{dir: "/tmp/a/b/wt", goCacheDir: "/var/c", gitDirs: []string{"/tmp/a/b/wt/.git", "/tmp/a/repo/.git"},
				mounts: []Mount{{Source: "/home/u/p/node_modules", Target: "/tmp/a/b/wt/node_modules"}}},
			[]string{"/var", "/tmp/a", "/tmp/a/b", "/tmp/a/repo", "/tmp/a/b/wt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.s.parentsInTmpfs(); !slices.Equal(got, tt.want) {
				t.Errorf("parentsInTmpfs() = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestHandOver: the directory goes to the suite's user and back, the git
// link stays root's, and a symlink to a file outside is changed itself,
// never its target.
func TestHandOver(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("changing owners needs root")
	}
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "outside")
	gittest.WriteFiles(t, dir, map[string]string{"a.txt": "a", "sub/b.txt": "b", ".git": "gitdir: /x\n"})
	gittest.WriteFiles(t, filepath.Dir(outside), map[string]string{"outside": "o"})
	if err := os.Symlink(outside, filepath.Join(dir, "sub", "link")); err != nil {
		t.Fatal(err)
	}
	ownerOf := func(p string) [2]int {
		info, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		return owner(info)
	}
	git := filepath.Join(dir, ".git")
	if err := handOver(dir, SuiteUID, SuiteGID, []string{git}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, filepath.Join(dir, "a.txt"), filepath.Join(dir, "sub"), filepath.Join(dir, "sub", "b.txt"), filepath.Join(dir, "sub", "link")} {
		if got := ownerOf(p); got != [2]int{SuiteUID, SuiteGID} {
			t.Errorf("%s owned by %v after the hand-over", p, got)
		}
	}
	if got := ownerOf(git); got != [2]int{0, 0} {
		t.Errorf(".git owned by %v, want root's", got)
	}
	if got := ownerOf(outside); got != [2]int{0, 0} {
		t.Errorf("the symlink's target changed owner: %v", got)
	}
	if err := handOver(dir, 0, 0, []string{git}); err != nil {
		t.Fatal(err)
	}
	if got := ownerOf(filepath.Join(dir, "sub", "b.txt")); got != [2]int{0, 0} {
		t.Errorf("b.txt owned by %v after the give-back", got)
	}
}

// TestClosedAncestors: as root, a directory below a folder others may not
// pass (a 0700 temporary folder outside /tmp, another user's home) is
// still reachable and writable by the suite, and the rest of that folder
// is hidden.

// TestRemoveStaleRunFolders: the run folders of a process that is gone
// go; those of a live one, and other folders, stay.
func TestRemoveStaleRunFolders(t *testing.T) {
	dir := t.TempDir()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	deadPID := strconv.Itoa(gone.Process.Pid)
	live := strconv.Itoa(os.Getpid())
	names := map[string]bool{ // name: removed
		"orch-run-writes-" + deadPID + "-123": true,
		"orch-gitconfig-" + deadPID + "-456":  true,
		"orch-run-writes-" + live + "-789":    false,
		"orch-run-writes-x-1":                 false,
		"orch-test-" + deadPID + "-1":         false,
	}
	for n := range names {
		if err := os.Mkdir(filepath.Join(dir, n), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	removeStaleRunFolders(dir)
	for n, removed := range names {
		_, err := os.Stat(filepath.Join(dir, n))
		if gotRemoved := err != nil; gotRemoved != removed {
			t.Errorf("%s removed = %v, want %v", n, gotRemoved, removed)
		}
	}
}
