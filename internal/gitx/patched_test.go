package gitx

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestPatchedBlobs(t *testing.T) {
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
	got, err := r.PatchedBlobs(ctx, base, patch, paths)
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
		e, ok := got[p]
		if !ok {
			t.Errorf("%s: no entry after the patch", p)
			continue
		}
		id, err := BlobID([]byte(content), len(e.SHA))
		if err != nil {
			t.Fatal(err)
		}
		if e.SHA != id || e.Mode != "100644" {
			t.Errorf("%s: entry %s %s, want 100644 %s (blob of %q)", p, e.Mode, e.SHA, id, content)
		}
	}

	// An empty patch leaves the commit's entries.
	got, err = r.PatchedBlobs(ctx, base, nil, []string{"edit.txt", "new.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := BlobID([]byte("a - b\n"), 40); len(got) != 1 || got["edit.txt"].SHA != id {
		t.Errorf("empty patch: got %v, want edit.txt at base only", got)
	}
	// The empty tree: only what the patch creates.
	got, err = r.PatchedBlobs(ctx, "", patch[strings.Index(string(patch), "diff --git a/new.txt"):strings.Index(string(patch), "diff --git a/old/n.txt")], []string{"new.txt", "edit.txt"})
	if id, _ := BlobID([]byte("hello\n"), 40); err != nil || len(got) != 1 || got["new.txt"].SHA != id {
		t.Errorf("on the empty tree: got %v, %v", got, err)
	}
	if n, err := r.ObjectIDLen(ctx); err != nil || n != 40 {
		t.Errorf("ObjectIDLen = %d, %v", n, err)
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

func TestPatchedBlobsErrors(t *testing.T) {
	r, base := seedRepo(t, map[string]string{"f.txt": "one\n"})
	ctx := testCtx(t)
	before := stateOf(t, r)
	conflict := []byte("diff --git a/f.txt b/f.txt\n--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-two\n+three\n")
	_, err := r.PatchedBlobs(ctx, base, conflict, []string{"f.txt"})
	var ae *ApplyError
	if !errors.Is(err, ErrApplyConflict) || !errors.As(err, &ae) || !reflect.DeepEqual(ae.Files, []string{"f.txt"}) {
		t.Errorf("conflicting patch: got %v, want an *ApplyError naming f.txt", err)
	}
	if _, err := r.PatchedBlobs(ctx, base, []byte("diff --git a/f.txt b/f.txt\n@@ nonsense\n"), []string{"f.txt"}); err == nil {
		t.Error("garbage patch: no error")
	}
	if _, err := r.PatchedBlobs(ctx, strings.Repeat("0", 40), nil, []string{"f.txt"}); !errors.Is(err, ErrBadRevision) {
		t.Errorf("unknown commit: got %v, want ErrBadRevision", err)
	}
	if _, err := r.PatchedBlobs(ctx, base, nil, []string{"../x"}); !errors.Is(err, ErrBadPath) {
		t.Errorf("bad path: got %v, want ErrBadPath", err)
	}
	assertSameState(t, before, stateOf(t, r))
}

// A path that is a symbolic link in the commit is not compared as a file.
func TestPatchedBlobsSymlink(t *testing.T) {
	r, _ := seedRepo(t, map[string]string{"f.txt": "one\n"})
	if err := os.Symlink("f.txt", filepath.Join(r.Dir, "link")); err != nil {
		t.Fatal(err)
	}
	base := commitAll(t, r, "link")
	_, err := r.PatchedBlobs(testCtx(t), base, nil, []string{"link"})
	var nr *NotRegularError
	if !errors.As(err, &nr) || nr.Path != "link" || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("got %v, want a *NotRegularError for link", err)
	}
}

// BlobID must agree with git itself, for sha1 and sha256 repositories.
func TestBlobID(t *testing.T) {
	for _, format := range []string{"sha1", "sha256"} {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			runGit(t, dir, "init", "-q", "--object-format="+format)
			for _, content := range []string{"", "x", "a + b\n", "\x00binary\xff\n", strings.Repeat("line\n", 10000)} {
				want, err := gitOut(dir, []byte(content), "hash-object", "--no-filters", "--stdin")
				if err != nil {
					t.Fatal(err)
				}
				want = strings.TrimSpace(want)
				got, err := BlobID([]byte(content), len(want))
				if err != nil || got != want {
					t.Errorf("BlobID(%.20q) = %s, %v; git says %s", content, got, err, want)
				}
			}
			r := &Repo{Dir: dir}
			if n, err := r.ObjectIDLen(testCtx(t)); err != nil || n != map[string]int{"sha1": 40, "sha256": 64}[format] {
				t.Errorf("ObjectIDLen = %d, %v", n, err)
			}
		})
	}
	if _, err := BlobID(nil, 32); err == nil {
		t.Error("BlobID with 32 hex digits: no error")
	}
}

// TestPatchedBlobsOddPath: a repository whose path holds bytes that
// separate or quote alternates (colon, line break, double quote, backslash,
// tab, another control byte) patches as any other: its object store is
// named as one quoted alternate.
func TestPatchedBlobsOddPath(t *testing.T) {
	for _, name := range []string{"a:b", "a\nb", "\"quoted\"", "back\\slash", "tab\there", "bell\x07", "all:\n\"\\\t\x01x", "ends in a line break\n", "ends in a space "} {
		t.Run(strings.ReplaceAll(name, "\n", `\n`), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), name)
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			runGit(t, dir, "init", "-q", "-b", "main")
			r := &Repo{Dir: dir, Env: testIdentity}
			writeFile(t, r, "f.txt", "one\n")
			base := commitAll(t, r, "seed")
			patch := []byte("diff --git a/f.txt b/f.txt\n--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-one\n+two\n")
			got, err := r.PatchedBlobs(testCtx(t), base, patch, []string{"f.txt"})
			if err != nil {
				t.Fatal(err)
			}
			want, err := BlobID([]byte("two\n"), 40)
			if err != nil {
				t.Fatal(err)
			}
			if got["f.txt"].SHA != want {
				t.Fatalf("f.txt after the patch: %+v, want blob %s", got["f.txt"], want)
			}
			// The other readers of paths git prints.
			opened, err := Open(testCtx(t), dir)
			if err != nil || opened.Dir != dir {
				t.Fatalf("Open: %+v, %v", opened, err)
			}
			fp, err := r.Fingerprint(testCtx(t))
			if err != nil || fp.CommonDir() != filepath.Join(dir, ".git") {
				t.Fatalf("Fingerprint: common dir %q, %v", fp.CommonDir(), err)
			}
			if op, err := r.InProgress(testCtx(t)); err != nil || op != "" {
				t.Fatalf("InProgress: %q, %v", op, err)
			}
		})
	}
}

func TestAlternateEntry(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"/plain/objects", "/plain/objects"},
		{"/a:b/objects", `"/a:b/objects"`},
		{"/a\nb", `"/a\nb"`},
		{`/q"\`, `"/q\"\\"`},
		{"/t\tx\x01\x7f", `"/t\tx\001\177"`},
		{"/é", "/é"},
	} {
		if got := alternateEntry(c.in); got != c.want {
			t.Errorf("alternateEntry(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}
