package repomap

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/repomap/synthetic"
)

// TestBlankBodiesKeepsDefinitions parses every Go file of this
// repository (and, with ORCH_GODEFS_GOROOT=1, of Go's own src folder)
// whole and with its function bodies blanked: wherever the whole file
// parses, the blanked one must too, with the same definitions.
func TestBlankBodiesKeepsDefinitions(t *testing.T) {
	roots := []string{filepath.Join("..", "..")}
	if os.Getenv("ORCH_GODEFS_GOROOT") != "" {
		roots = append(roots, filepath.Join(runtime.GOROOT(), "src"))
	}
	files, blanked, defs := 0, 0, 0
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == ".git" || d.Name() == ".orch") {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(p, ".go") {
				return nil
			}
			src, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			files++
			if b := checkBlanked(t, p, src); b {
				blanked++
			}
			full, _ := goDefinitionsOf(src, src)
			defs += len(full)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d files, %d with bodies blanked, %d definitions", files, blanked, defs)
	if files < 300 || blanked < files*8/10 {
		t.Fatalf("%d of %d files blanked", blanked, files)
	}
}

// checkBlanked compares the definitions of src parsed whole and with its
// bodies blanked; it reports whether src had bodies to blank.
func checkBlanked(t *testing.T, name string, src []byte) bool {
	t.Helper()
	b := blankBodies(src)
	if b == nil {
		return false
	}
	if len(b) != len(src) {
		t.Fatalf("%s: blanked to %d bytes from %d", name, len(b), len(src))
	}
	for i := range src {
		if (src[i] == '\n') != (b[i] == '\n') || b[i] != src[i] && b[i] != ' ' {
			t.Fatalf("%s: byte %d %q blanked to %q", name, i, src[i], b[i])
		}
	}
	full, okFull := goDefinitionsOf(src, src)
	if !okFull {
		return true
	}
	got, ok := goDefinitionsOf(b, src)
	if !ok {
		t.Errorf("%s: parses whole, not with its bodies blanked", name)
		return true
	}
	if g, w := render(got), render(full); g != w {
		t.Errorf("%s: the definitions differ with the bodies blanked:\n--- blanked\n%s--- whole\n%s", name, g, w)
	}
	return true
}

// FuzzBlankBodies: on any input go/parser accepts, blanking the function
// bodies keeps every offset and line and the definitions.
func FuzzBlankBodies(f *testing.F) {
	for _, p := range []string{"retry/retry.go", "client/client.go", "main.go"} {
		f.Add(fixture[p])
	}
	f.Add("package p\nfunc f() struct{ A int } { return struct{ A int }{} }\nfunc g[T interface{ ~int }](x T) interface{ M() } {\n\tvar s = `}`\n\t_ = '}'\n\t_ = \"}\" /* } */ // }\n\treturn nil\n}\n")
	f.Add("package p\nvar x =\nfunc() int { type T struct{ F int }; return 0 }()\nfunc h()\nvar y = map[string]struct{ G int }{\"a\": {1}}\n")
	f.Add("package p\nfunc (r *R) M(\n\ta int,\n) (struct {\n\tB int\n}, error) {\n\treturn\n}\n")
	f.Fuzz(func(t *testing.T, src string) {
		checkBlanked(t, "input", []byte(src))
	})
}

// BenchmarkGoDefinitions indexes the synthetic repository's Go files
// with go/parser, whole ("whole") and with the bodies blanked first as
// goDefinitions does ("blanked").
//
//	go test -run XXX -bench GoDefinitions -benchmem ./internal/repomap
func BenchmarkGoDefinitions(b *testing.B) {
	dir := b.TempDir()
	if err := synthetic.Write(dir, 200); err != nil {
		b.Fatal(err)
	}
	var files [][]byte
	for i := 0; i < 200; i++ {
		if p := synthetic.Path(i); LangOf(p) == LangGo {
			src, err := os.ReadFile(filepath.Join(dir, p))
			if err != nil {
				b.Fatal(err)
			}
			files = append(files, src)
		}
	}
	b.Run("whole", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, ok := goDefinitionsOf(files[i%len(files)], files[i%len(files)]); !ok {
				b.Fatal("no parse")
			}
		}
	})
	b.Run("blanked", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, ok := goDefinitions(files[i%len(files)]); !ok {
				b.Fatal("no parse")
			}
		}
	})
}
