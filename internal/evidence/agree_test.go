package evidence

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/gitx"
)

const utilBase = "package util\n\nfunc Sub(a, b int) int {\n\treturn a - b\n}\n"

// negate is the patch: it turns a - b into a + b.
const negate = `diff --git a/util.go b/util.go
--- a/util.go
+++ b/util.go
@@ -3,3 +3,3 @@ package util
 func Sub(a, b int) int {
-	return a - b
+	return a + b
 }
`

const createNew = `diff --git a/new.go b/new.go
new file mode 100644
--- /dev/null
+++ b/new.go
@@ -0,0 +1 @@
+package util
`

const deleteGone = `diff --git a/gone.go b/gone.go
deleted file mode 100644
--- a/gone.go
+++ /dev/null
@@ -1 +0,0 @@
-package gone
`

func TestCompareFiles(t *testing.T) {
	for _, format := range []string{"sha1", "sha256"} {
		t.Run(format, func(t *testing.T) { testCompareFiles(t, format) })
	}
}

func testCompareFiles(t *testing.T, format string) {
	repo, base := seed(t, map[string]string{"util.go": utilBase, "keep.go": "package keep\n", "gone.go": "package gone\n"}, format)
	ctx := t.Context()
	// The user's own work in progress must stay as it is.
	write(t, repo.Dir, "keep.go", "package keep // edited, unstaged\n")
	write(t, repo.Dir, "staged.go", "package staged\n")
	git(t, repo.Dir, nil, "add", "staged.go")
	before := repoView(t, repo)

	negated := strings.Replace(utilBase, "a - b", "a + b", 1)
	commented := strings.Replace(utilBase, "func Sub", "// Sub subtracts.\nfunc Sub", 1)
	for _, tc := range []struct {
		name  string
		patch string
		files map[string]string
		base  string
		// wantFile is the artifact the error names; "" means they agree.
		wantFile string
		wantIn   string
	}{
		{name: "agree", patch: negate, files: map[string]string{"util.go": negated}},
		{name: "issue: files only add a comment, the patch negates", patch: negate,
			files: map[string]string{"util.go": commented}, wantFile: "code/files/util.go", wantIn: "different content"},
		{name: "untouched file equal to base agrees", patch: negate,
			files: map[string]string{"util.go": negated, "keep.go": "package keep\n"}},
		{name: "untouched file differing from base", patch: negate,
			files: map[string]string{"util.go": negated, "keep.go": "package keep2\n"}, wantFile: "code/files/keep.go", wantIn: "must equal the base"},
		{name: "file the patch changes is missing", patch: negate, files: map[string]string{},
			wantFile: "code/files/util.go", wantIn: "got no file"},
		{name: "created file missing", patch: negate + createNew, files: map[string]string{"util.go": negated},
			wantFile: "code/files/new.go", wantIn: "got no file"},
		{name: "created file present", patch: negate + createNew,
			files: map[string]string{"util.go": negated, "new.go": "package util\n"}},
		{name: "deleted file still present", patch: deleteGone, files: map[string]string{"gone.go": "package gone\n"},
			wantFile: "code/files/gone.go", wantIn: "deletes gone.go"},
		{name: "deleted file absent", patch: deleteGone, files: map[string]string{}},
		{name: "file neither in base nor patch", patch: negate,
			files: map[string]string{"util.go": negated, "extra.go": "x\n"}, wantFile: "code/files/extra.go", wantIn: "does not create it"},
		{name: "first path in byte order", patch: negate + createNew,
			files: map[string]string{"util.go": utilBase, "new.go": "package other\n"}, wantFile: "code/files/new.go"},
		{name: "patch does not apply to base", patch: strings.Replace(negate, "a - b", "a * b", 1),
			files: map[string]string{"util.go": negated}, wantFile: artifact.DiffFile, wantIn: "applies to the base"},
		{name: "base not in the repository", patch: negate, files: map[string]string{"util.go": negated},
			base: strings.Repeat("1", len(base)), wantFile: artifact.CodegenFile, wantIn: "$.base"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := CodeFiles{}
			for p, c := range tc.files {
				files[p] = []byte(c)
			}
			b := base
			if tc.base != "" {
				b = tc.base
			}
			err := CompareFiles(ctx, repo, b, []byte(tc.patch), files)
			if tc.wantFile == "" {
				if err != nil {
					t.Fatalf("got %v, want agreement", err)
				}
				return
			}
			var ae *artifact.Error
			if !errors.As(err, &ae) || ae.File != tc.wantFile || !strings.Contains(err.Error(), tc.wantIn) {
				t.Fatalf("got %v, want an *artifact.Error about %s containing %q", err, tc.wantFile, tc.wantIn)
			}
			if tc.wantFile != artifact.CodegenFile && !errors.Is(err, ErrDisagree) {
				t.Errorf("%v: not ErrDisagree", err)
			}
		})
	}
	if after := repoView(t, repo); after != before {
		t.Errorf("the repository changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// A patch orch computes from code/files (gitx.DiffFiles) always agrees.
func TestCompareFilesByConstruction(t *testing.T) {
	repo, base := seed(t, map[string]string{"util.go": utilBase, "exec.sh": "#!/bin/sh\n"}, "sha1")
	files := CodeFiles{"util.go": []byte("package util\n"), "new/deep/x.txt": []byte("no newline at end")}
	in := map[string][]byte{}
	for p, c := range files {
		in[p] = c
	}
	patch, err := repo.DiffFiles(t.Context(), base, in, []string{"exec.sh"})
	if err != nil {
		t.Fatal(err)
	}
	if err := CompareFiles(t.Context(), repo, base, patch, files); err != nil {
		t.Fatalf("a patch computed from the files disagrees with them: %v", err)
	}
}

func TestReadCodeFilesAndDigest(t *testing.T) {
	dir := t.TempDir()
	if files, present, err := ReadCodeFiles(dir); err != nil || present || len(files) != 0 {
		t.Fatalf("no code/files: got %v %v %v", files, present, err)
	}
	write(t, dir, "code/files/a.go", "A")
	write(t, dir, "code/files/sub/b.go", "B")
	files, present, err := ReadCodeFiles(dir)
	if err != nil || !present || string(files["a.go"]) != "A" || string(files["sub/b.go"]) != "B" || len(files) != 2 {
		t.Fatalf("got %v %v %v", files, present, err)
	}
	d1 := files.Digest()
	if d, err := FilesDigest(dir); err != nil || d != d1 {
		t.Fatalf("FilesDigest = %s, %v; want %s", d, err, d1)
	}
	// Every kind of change moves the digest.
	for name, change := range map[string]func(){
		"edit": func() { write(t, dir, "code/files/a.go", "A2") },
		"add":  func() { write(t, dir, "code/files/c.go", "") },
		"rename": func() {
			os.Rename(filepath.Join(dir, "code/files/sub/b.go"), filepath.Join(dir, "code/files/sub/b2.go"))
		},
	} {
		change()
		d, err := FilesDigest(dir)
		if err != nil || d == d1 {
			t.Errorf("%s: digest %s did not change (%v)", name, d, err)
		}
		d1 = d
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "code/files/link")); err != nil {
		t.Fatal(err)
	}
	if _, err := FilesDigest(dir); !errors.Is(err, artifact.ErrUnsafePath) {
		t.Errorf("a symlink under code/files: got %v, want ErrUnsafePath", err)
	}
	if SHA256Hex(nil) != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Error("SHA256Hex of nothing is wrong")
	}
}

// In a repository without commits the patch applies to the empty tree.
func TestCompareFilesNoCommitYet(t *testing.T) {
	dir := t.TempDir()
	git(t, dir, nil, "init", "-q")
	repo, err := gitx.Open(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := CompareFiles(t.Context(), repo, "", []byte(createNew), CodeFiles{"new.go": []byte("package util\n")}); err != nil {
		t.Errorf("a created file that agrees: %v", err)
	}
	err = CompareFiles(t.Context(), repo, "", []byte(createNew), CodeFiles{"new.go": []byte("package other\n")})
	if !errors.Is(err, ErrDisagree) || !strings.Contains(err.Error(), "(no commit yet)") {
		t.Errorf("a created file that disagrees: %v", err)
	}
	if err := CompareFiles(t.Context(), repo, "", []byte(negate), CodeFiles{"util.go": []byte("x")}); !errors.Is(err, ErrDisagree) {
		t.Errorf("a patch changing a file the empty tree lacks: %v", err)
	}
}

// The digest is the documented one (the transcripts hold it): the sha256
// of "PATH\x00SHA256\n" per file in byte order of the paths, here over
// enough files that it is hashed in several pieces.
func TestDigestFormat(t *testing.T) {
	files := CodeFiles{}
	for i := range 300 {
		files[fmt.Sprintf("pkg%d/file%04d.go", i%7, i)] = []byte(fmt.Sprint(i))
	}
	paths := slices.Sorted(maps.Keys(files))
	var want strings.Builder
	for _, p := range paths {
		want.WriteString(p + "\x00" + SHA256Hex(files[p]) + "\n")
	}
	if got := files.Digest(); got != SHA256Hex([]byte(want.String())) {
		t.Errorf("Digest = %s, want %s", got, SHA256Hex([]byte(want.String())))
	}
	if got := (CodeFiles{}).Digest(); got != SHA256Hex(nil) {
		t.Errorf("Digest of no files = %s, want the sha256 of no bytes", got)
	}
}
