package gittest

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

func TestSeed(t *testing.T) {
	if home := os.Getenv("HOME"); filepath.Base(filepath.Dir(home)) == "" || os.Getenv("GIT_CONFIG_NOSYSTEM") != "1" {
		t.Fatalf("not isolated: HOME=%q", home)
	}
	dir, head := Seed(t, map[string]string{"a/b.txt": "x\n", "c": "y"}, "--object-format=sha256")
	if len(head) != 64 {
		t.Errorf("head %q is not a sha256 object name", head)
	}
	if got := Git(t, dir, "ls-files"); got != "a/b.txt\nc" {
		t.Errorf("ls-files = %q", got)
	}
	if got := Git(t, dir, "log", "-1", "--format=%an <%ae>"); got != "Orch Test <test@orch.invalid>" {
		t.Errorf("identity %q", got)
	}
	if got := GitInput(t, dir, []byte("z\n"), "hash-object", "--stdin"); len(got) != 64 {
		t.Errorf("hash-object = %q", got)
	}
}

// WriteFiles, ReadFile, AddWorktree and CopyTree: a linked worktree shows
// the commit, and a copy is a repository of its own with the same HEAD.
func TestFilesWorktreeAndCopy(t *testing.T) {
	dir, head := Seed(t, map[string]string{"a.txt": "a\n"})
	WriteFiles(t, dir, map[string]string{"d/e.txt": "e\n"})
	if got := ReadFile(t, filepath.Join(dir, "d", "e.txt")); got != "e\n" {
		t.Errorf("ReadFile = %q", got)
	}
	wt := AddWorktree(t, dir)
	if got := ReadFile(t, filepath.Join(wt, "a.txt")); got != "a\n" || Git(t, wt, "rev-parse", "HEAD") != head {
		t.Errorf("worktree: a.txt %q", got)
	}
	cp := CopyTree(t, dir)
	if Git(t, cp, "rev-parse", "HEAD") != head || Git(t, cp, "status", "--porcelain") != "?? d/" {
		t.Errorf("copy: status %q", Git(t, cp, "status", "--porcelain"))
	}
}
