package artifact

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/orchdev/orch/internal/patch"
)

func TestLoadDiff(t *testing.T) {
	t.Run("missing", func(t *testing.T) {
		if l := LoadDiff(t.TempDir()); l.Present || l.Err != nil {
			t.Errorf("got %+v", l)
		}
	})
	t.Run("empty", func(t *testing.T) {
		for _, content := range []string{"", " \n\n"} {
			dir := t.TempDir()
			writeFile(t, dir, DiffFile, content)
			l := LoadDiff(dir)
			if !l.OK() || len(l.Value.Files) != 0 || l.Value.Bytes != int64(len(content)) || l.SHA256 != sha(content) {
				t.Errorf("LoadDiff(%q) = %+v", content, l)
			}
		}
	})
	t.Run("valid", func(t *testing.T) {
		dir := t.TempDir()
		text := "diff --git a/x b/x\nindex 1..2 100644\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"
		writeFile(t, dir, DiffFile, text)
		l := LoadDiff(dir)
		want := []patch.Entry{{OldPath: "x", NewPath: "x", Op: patch.OpUpdate}}
		if !l.OK() || !reflect.DeepEqual(l.Value.Files, want) || l.Value.Bytes != int64(len(text)) || l.SHA256 != sha(text) {
			t.Errorf("got %+v", l)
		}
	})
	t.Run("invalid", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, dir, DiffFile, "--- a/x\n+++ b/../x\n@@ -1 +1 @@\n-a\n+b\n")
		l := LoadDiff(dir)
		var ae *Error
		if !l.Present || !errors.As(l.Err, &ae) || ae.File != DiffFile || !errors.Is(l.Err, ErrUnsafePath) || !errors.Is(l.Err, ErrInvalidDiff) {
			t.Fatalf("got %+v", l)
		}
		if want := `code/diff.patch: line 1: in the +++ name: unsafe path "../x": ".." element`; l.Err.Error() != want {
			t.Errorf("message %q, want %q", l.Err, want)
		}
	})
	t.Run("directory", func(t *testing.T) {
		dir := t.TempDir()
		mkdirAll(t, filepath.Join(dir, "code", "diff.patch"))
		if l := LoadDiff(dir); !l.Present || !errors.Is(l.Err, ErrNotRegular) {
			t.Errorf("got %+v", l)
		}
	})
	t.Run("named pipe", func(t *testing.T) {
		dir := t.TempDir()
		mkdirAll(t, filepath.Join(dir, "code"))
		mkfifo(t, filepath.Join(dir, "code", "diff.patch"))
		if l := LoadDiff(dir); !l.Present || !errors.Is(l.Err, ErrNotRegular) {
			t.Errorf("got %+v", l)
		}
	})
	t.Run("too large", func(t *testing.T) {
		dir := t.TempDir()
		p := writeFile(t, dir, DiffFile, "")
		if err := os.Truncate(p, MaxDiffBytes+1); err != nil {
			t.Fatal(err)
		}
		if l := LoadDiff(dir); !l.Present || !errors.Is(l.Err, ErrTooLarge) {
			t.Errorf("got %+v", l)
		}
	})
}
