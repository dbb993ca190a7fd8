package gitx

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// diffBase is the committed tree DiffFiles tests start from.
var diffBase = map[string]string{
	"update.go":                   lines(12),
	"delete.go":                   "bye\n",
	"noeol.txt":                   "no newline",
	"gain-eol.txt":                "x",
	"dir with space/ünï cödé.txt": "old\n",
	"deldir/only.txt":             "only\n",
	"binary.bin":                  "\x00\x01\x02old\x00",
	"untouched.txt":               "same\n",
}

func diffRepo(t *testing.T) (*Repo, string) {
	t.Helper()
	r := newRepo(t)
	for p, c := range diffBase {
		writeFile(t, r, p, c)
	}
	writeFileMode(t, r, "run.sh", "#!/bin/sh\necho hi\n", 0o755)
	return r, commitAll(t, r, "base")
}

func TestDiffFilesAppliesAndReproduces(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	r, base := diffRepo(t)
	// Work-tree and index changes of the user must not leak into the diff.
	writeFile(t, r, "update.go", "user's unstaged edit\n")
	writeFile(t, r, "untouched.txt", "user's staged edit\n")
	runGit(t, r.Dir, "add", "untouched.txt")
	before := stateOf(t, r)

	files := map[string][]byte{
		"update.go":                   []byte(strings.Replace(lines(12), "6\n", "six\n", 1)),
		"noeol.txt":                   []byte("still no newline"),
		"gain-eol.txt":                []byte("x\n"),
		"run.sh":                      []byte("#!/bin/sh\necho bye\n"),
		"dir with space/ünï cödé.txt": []byte("new\n"),
		"binary.bin":                  []byte("\x00\x01\x02new\x00\xff"),
		"new/deep/file.go":            []byte("package deep\n"),
		"spaced name ✓.md":            []byte("# title\n"),
		"new-noeol":                   []byte("tail"),
		"empty.txt":                   {},
		"quote\"and\\back.txt":        []byte("odd name\n"),
	}
	deletes := []string{"delete.go", "deldir/only.txt", "never-existed.txt"}

	patch, err := r.DiffFiles(ctx, base, files, deletes)
	if err != nil {
		t.Fatal(err)
	}
	again, err := r.DiffFiles(ctx, base, files, deletes)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(patch, again) {
		t.Error("DiffFiles is not deterministic")
	}
	assertSameState(t, before, stateOf(t, r))

	text := string(patch)
	for _, want := range []string{
		"diff --git a/update.go b/update.go\n",
		"-6\n+six\n",
		"\\ No newline at end of file\n",
		"deleted file mode 100644",
		"new file mode 100644",
		"GIT binary patch",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("patch lacks %q", want)
		}
	}
	if strings.Contains(text, "old mode") || strings.Contains(text, "new mode") {
		t.Errorf("patch changes a mode:\n%s", text)
	}

	// The patch applies to a checkout of base and reproduces every file.
	wt, err := r.AddWorktree(ctx, filepath.Join(t.TempDir(), "wt"), base)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gitOut(wt.Dir, patch, "apply", "--check", "-"); err != nil {
		t.Fatalf("git apply --check: %v\n%s", err, patch)
	}
	if _, err := gitOut(wt.Dir, patch, "apply", "-"); err != nil {
		t.Fatalf("git apply: %v", err)
	}
	for p, want := range files {
		if got := readFile(t, wt, p); got != string(want) {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
		info, err := os.Stat(filepath.Join(wt.Dir, p))
		if err != nil {
			t.Fatal(err)
		}
		wantPerm := os.FileMode(0o644)
		if p == "run.sh" {
			wantPerm = 0o755
		}
		if info.Mode().Perm()&0o111 != wantPerm&0o111 {
			t.Errorf("%s mode = %v, want executable bits of %v", p, info.Mode(), wantPerm)
		}
	}
	for _, p := range []string{"delete.go", "deldir/only.txt", "deldir"} {
		if _, err := os.Lstat(filepath.Join(wt.Dir, p)); !os.IsNotExist(err) {
			t.Errorf("%s still exists after the patch (err %v)", p, err)
		}
	}
	if got := readFile(t, wt, "untouched.txt"); got != "same\n" {
		t.Errorf("untouched.txt = %q", got)
	}
	// The index mode of run.sh is kept too.
	runGit(t, wt.Dir, "add", "-A")
	if ls := runGit(t, wt.Dir, "ls-files", "-s", "run.sh"); !strings.HasPrefix(ls, "100755 ") {
		t.Errorf("run.sh index entry = %q, want mode 100755", ls)
	}
}

func TestDiffFilesTextOnlyIsPlain(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	r, base := diffRepo(t)
	patch, err := r.DiffFiles(ctx, base, map[string][]byte{"update.go": []byte("short\n")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	newBlob, err := gitOut(r.Dir, []byte("short\n"), "hash-object", "--stdin")
	if err != nil {
		t.Fatal(err)
	}
	wantHeader := "diff --git a/update.go b/update.go\n" +
		"index " + runGit(t, r.Dir, "rev-parse", base+":update.go") + ".." + strings.TrimSpace(newBlob) + " 100644\n" +
		"--- a/update.go\n+++ b/update.go\n@@ -1,12 +1 @@\n"
	if !strings.HasPrefix(string(patch), wantHeader) {
		t.Errorf("patch header:\n%s\nwant prefix:\n%s", patch, wantHeader)
	}
	if strings.Contains(string(patch), "Binary") || strings.Contains(string(patch), "\x00") {
		t.Errorf("text diff is not plain text:\n%s", patch)
	}
}

func TestDiffFilesNoChange(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	r, base := diffRepo(t)
	patch, err := r.DiffFiles(ctx, base, map[string][]byte{"update.go": []byte(lines(12))}, []string{"not-there"})
	if err != nil || len(patch) != 0 {
		t.Errorf("DiffFiles(same content) = %q, %v; want empty", patch, err)
	}
}

func TestDiffFilesReplaceFileWithDirectory(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	r, base := diffRepo(t)
	patch, err := r.DiffFiles(ctx, base, map[string][]byte{"delete.go/inner.go": []byte("x\n")}, []string{"delete.go"})
	if err != nil {
		t.Fatal(err)
	}
	wt, err := r.AddWorktree(ctx, filepath.Join(t.TempDir(), "wt"), base)
	if err != nil {
		t.Fatal(err)
	}
	if err := wt.Apply(ctx, patch, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, wt, "delete.go/inner.go"); got != "x\n" {
		t.Errorf("delete.go/inner.go = %q", got)
	}
}

func TestDiffFilesRefuses(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	r, _ := diffRepo(t)
	if err := os.Symlink("update.go", filepath.Join(r.Dir, "link")); err != nil {
		t.Fatal(err)
	}
	base := commitAll(t, r, "add link")
	x := []byte("x\n")
	tests := []struct {
		name    string
		files   map[string][]byte
		deletes []string
		badPath bool
	}{
		{"written and deleted", map[string][]byte{"a": x}, []string{"a"}, true},
		{"absolute", map[string][]byte{"/etc/passwd": x}, nil, true},
		{"dot dot", map[string][]byte{"a/../../x": x}, nil, true},
		{"inside .git", map[string][]byte{".git/hooks/pre-commit": x}, nil, true},
		{"bad delete path", nil, []string{"../x"}, true},
		{"file under a file", map[string][]byte{"update.go/x": x}, nil, false},
		{"file over a directory", map[string][]byte{"deldir": x}, nil, false},
		{"file and directory at once", map[string][]byte{"n": x, "n/m": x}, nil, false},
		{"replace a symlink", map[string][]byte{"link": x}, nil, false},
		{"delete a directory", nil, []string{"deldir"}, false},
	}
	for _, tt := range tests {
		_, err := r.DiffFiles(ctx, base, tt.files, tt.deletes)
		if err == nil {
			t.Errorf("%s: DiffFiles succeeded, want an error", tt.name)
			continue
		}
		if errors.Is(err, ErrBadPath) != tt.badPath {
			t.Errorf("%s: err = %v; ErrBadPath expected %v", tt.name, err, tt.badPath)
		}
	}
	if _, err := r.DiffFiles(ctx, "no-such-rev", nil, nil); !errors.Is(err, ErrBadRevision) {
		t.Errorf("DiffFiles(bad base) = %v, want ErrBadRevision", err)
	}
}
