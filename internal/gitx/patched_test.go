package gitx

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestPatchedFiles(t *testing.T) {
	r, base := seedRepo(t, map[string]string{
		"keep.txt":   "keep\n",
		"edit.txt":   "a - b\n",
		"gone.txt":   "bye\n",
		"old/n.txt":  "moved\n",
		"unrelated":  "u\n",
		"staged.txt": "s\n",
	})
	ctx := testCtx(t)
	// The user's own staged and unstaged work must be left alone.
	writeFile(t, r, "staged.txt", "user staged\n")
	runGit(t, r.Dir, "add", "staged.txt")
	writeFile(t, r, "edit.txt", "user unstaged\n")
	before := stateOf(t, r)

	patch := []byte(`diff --git a/edit.txt b/edit.txt
--- a/edit.txt
+++ b/edit.txt
@@ -1 +1 @@
-a - b
+a + b
diff --git a/gone.txt b/gone.txt
deleted file mode 100644
--- a/gone.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
diff --git a/new.txt b/new.txt
new file mode 100644
--- /dev/null
+++ b/new.txt
@@ -0,0 +1 @@
+hello
diff --git a/old/n.txt b/new/n.txt
similarity index 100%
rename from old/n.txt
rename to new/n.txt
`)
	paths := []string{"edit.txt", "gone.txt", "new.txt", "old/n.txt", "new/n.txt", "keep.txt", "absent.txt"}
	objects := objectCount(t, r)
	got, err := r.PatchedFiles(ctx, base, patch, paths, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	assertSameState(t, before, stateOf(t, r))
	if n := objectCount(t, r); n != objects {
		t.Errorf("the object store changed: %s → %s", objects, n)
	}

	want := map[string]string{
		"edit.txt":  "a + b\n",
		"new.txt":   "hello\n",
		"new/n.txt": "moved\n",
		"keep.txt":  "keep\n",
	}
	var keys []string
	for p := range got {
		keys = append(keys, p)
	}
	if len(got) != len(want) {
		t.Fatalf("files %v after the patch, want exactly %v", keys, want)
	}
	for p, content := range want {
		if string(got[p]) != content {
			t.Errorf("%s after the patch: %q, want %q", p, got[p], content)
		}
	}

	// An empty patch leaves the commit's files.
	got, err = r.PatchedFiles(ctx, base, nil, []string{"edit.txt", "new.txt"}, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || string(got["edit.txt"]) != "a - b\n" {
		t.Errorf("empty patch: got %q, want edit.txt at base only", got)
	}
	// Limits hold.
	if _, err := r.PatchedFiles(ctx, base, nil, []string{"edit.txt"}, 3); err == nil {
		t.Error("a file above the limit: no error")
	}
}

// objectCount is `git count-objects -v` minus the size lines.
func objectCount(t *testing.T, r *Repo) string {
	t.Helper()
	var keep []string
	for _, l := range strings.Split(runGit(t, r.Dir, "count-objects", "-v"), "\n") {
		if strings.HasPrefix(l, "count:") || strings.HasPrefix(l, "in-pack:") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, " ")
}

func TestPatchedFilesErrors(t *testing.T) {
	r, base := seedRepo(t, map[string]string{"f.txt": "one\n"})
	ctx := testCtx(t)
	before := stateOf(t, r)
	conflict := []byte("diff --git a/f.txt b/f.txt\n--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-two\n+three\n")
	_, err := r.PatchedFiles(ctx, base, conflict, []string{"f.txt"}, 1<<20)
	var ae *ApplyError
	if !errors.Is(err, ErrApplyConflict) || !errors.As(err, &ae) || !reflect.DeepEqual(ae.Files, []string{"f.txt"}) {
		t.Errorf("conflicting patch: got %v, want an *ApplyError naming f.txt", err)
	}
	if _, err := r.PatchedFiles(ctx, base, []byte("diff --git a/f.txt b/f.txt\n@@ nonsense\n"), []string{"f.txt"}, 1<<20); err == nil {
		t.Error("garbage patch: no error")
	}
	if _, err := r.PatchedFiles(ctx, strings.Repeat("0", 40), nil, []string{"f.txt"}, 1<<20); !errors.Is(err, ErrBadRevision) {
		t.Errorf("unknown commit: got %v, want ErrBadRevision", err)
	}
	if _, err := r.PatchedFiles(ctx, base, nil, []string{"../x"}, 1<<20); !errors.Is(err, ErrBadPath) {
		t.Errorf("bad path: got %v, want ErrBadPath", err)
	}
	assertSameState(t, before, stateOf(t, r))
}

// A path that is a symbolic link in the commit is not compared as a file.
func TestPatchedFilesSymlink(t *testing.T) {
	r, _ := seedRepo(t, map[string]string{"f.txt": "one\n"})
	if err := os.Symlink("f.txt", filepath.Join(r.Dir, "link")); err != nil {
		t.Fatal(err)
	}
	base := commitAll(t, r, "link")
	_, err := r.PatchedFiles(testCtx(t), base, nil, []string{"link"}, 1<<20)
	var nr *NotRegularError
	if !errors.As(err, &nr) || nr.Path != "link" || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("got %v, want a *NotRegularError for link", err)
	}
}
