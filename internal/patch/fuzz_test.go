package patch

import (
	"bytes"
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/orchdev/orch/internal/safepath"
)

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"",
		"diff --git a/x b/x\nindex 1..2 100644\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n\\ No newline at end of file\n",
		"--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+a\n",
		"diff --git \"a/x y\" b/z\nsimilarity index 100%\nrename from \"x y\"\nrename to z\n",
		"diff --git a/l b/l\nnew file mode 120000\n",
		"diff --git a/x b/x\nold mode 100644\nnew mode 100755\n",
		"--- a/x\n+++ b/../x\n@@ -1 +1 @@\n-a\n+b\n",
		"diff --git a/.git/config b/.git/config\ndeleted file mode 100644\n",
		"diff --git a/b b/b\nGIT binary patch\n",
		"@@ -1 +1 @@\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := Parse(bytes.NewReader(data))
		if err != nil {
			var de *Error
			if !errors.As(err, &de) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v is not a *Error", err)
			}
			return
		}
		if d.Bytes != int64(len(data)) {
			t.Fatalf("Bytes = %d, want %d", d.Bytes, len(data))
		}
		seen := map[string]bool{}
		for _, e := range d.Files {
			switch e.Op {
			case OpCreate:
				if e.OldPath != "" || e.NewPath == "" {
					t.Fatalf("bad create %+v", e)
				}
			case OpDelete:
				if e.OldPath == "" || e.NewPath != "" {
					t.Fatalf("bad delete %+v", e)
				}
			case OpUpdate:
				if e.OldPath == "" || e.OldPath != e.NewPath {
					t.Fatalf("bad update %+v", e)
				}
			case OpRename:
				if e.OldPath == "" || e.NewPath == "" || e.OldPath == e.NewPath {
					t.Fatalf("bad rename %+v", e)
				}
			default:
				t.Fatalf("bad op %+v", e)
			}
			for _, p := range []string{e.OldPath, e.NewPath} {
				if p == "" {
					continue
				}
				if err := safepath.Check(p); err != nil {
					t.Fatalf("accepted an unsafe path: %v", err)
				}
				if seen[p] && !(e.Op == OpUpdate && p == e.NewPath) {
					t.Fatalf("accepted %q twice", p)
				}
				seen[p] = true
			}
		}
		if len(d.Files) == 0 && len(bytes.TrimSpace(data)) > 0 && utf8.Valid(data) && !bytes.Contains(data, []byte("\n")) {
			t.Fatalf("accepted one line of text as an empty patch: %q", data)
		}
	})
}
