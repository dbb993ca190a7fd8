//go:build cgo

package repomap

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestGoDefinitionsMatchTreeSitter compares go/parser's definitions with
// tree-sitter's on real Go code: every Go file of this repository (and,
// with ORCH_GODEFS_GOROOT=1, of the Go distribution's src folder). Both
// must find the same names, kinds, lines and signatures in the same
// order. A file is not compared when go/parser rejects it (tree-sitter
// indexes it then) or when tree-sitter's grammar finds a syntax error in
// a file Go accepts (newer syntax than the bundled grammar knows).
func TestGoDefinitionsMatchTreeSitter(t *testing.T) {
	roots := []string{filepath.Join("..", "..")}
	if os.Getenv("ORCH_GODEFS_GOROOT") != "" {
		roots = append(roots, filepath.Join(runtime.GOROOT(), "src"))
	}
	ex := newExtractor()
	defer ex.close()
	compared, rejected, grammar, defs := 0, 0, 0, 0
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
			want, clean, err := ex.treeDefinitions(t.Context(), LangGo, src)
			if err != nil {
				t.Logf("%s: tree-sitter: %v", p, err)
				return nil
			}
			got, ok := goDefinitions(src)
			switch {
			case !ok:
				rejected++
				return nil
			case !clean:
				grammar++
				t.Logf("%s: tree-sitter's grammar finds a syntax error: not compared", p)
				return nil
			}
			compared++
			defs += len(got)
			if g, w := render(got), render(want); g != w {
				t.Errorf("%s: go/parser's definitions differ from tree-sitter's:\n%s", p, lineDiff(g, w))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d files compared (%d definitions), %d rejected by go/parser, %d with tree-sitter syntax errors", compared, defs, rejected, grammar)
	if compared < 300 || defs < 3000 {
		t.Fatalf("only %d files and %d definitions compared: the walk missed the repository", compared, defs)
	}
}

// lineDiff lists the lines only one side has ("-" tree-sitter's, "+"
// go/parser's).
func lineDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	in := func(xs []string) map[string]int {
		m := map[string]int{}
		for _, x := range xs {
			m[x]++
		}
		return m
	}
	gm, wm := in(g), in(w)
	var b strings.Builder
	for _, x := range w {
		if gm[x] == 0 {
			b.WriteString("- " + x + "\n")
		}
	}
	for _, x := range g {
		if wm[x] == 0 {
			b.WriteString("+ " + x + "\n")
		}
	}
	if b.Len() == 0 {
		b.WriteString("(the same lines in another order)\n")
	}
	return b.String()
}

// FuzzGoDefinitions compares go/parser's definitions with tree-sitter's
// on untrusted Go source: whenever both parse it without an error (and
// it nests less than 24 brackets deep: tree-sitter's rule that leaves
// out definitions inside functions looks at most 64 nodes up), they find
// the same definitions.
func FuzzGoDefinitions(f *testing.F) {
	for _, p := range []string{"retry/retry.go", "client/client.go", "main.go"} {
		f.Add(fixture[p])
	}
	f.Add("package p\n\nconst a1, a2 = 1, 2\nvar (\n\tc1, c2 int\n\td1 = 3\n)\ntype Tx[P interface{ Mx() }] struct{ f1, f2 int `json:\"f\"` }\n")
	f.Add("package p\ntype Ix interface{ Mx(a struct{ Fx int }) (r int); ~int | string }\nvar vx = func() int { type Qx struct{ zz int }; return 0 }\n")
	f.Add("package p\nfunc (r *Rx) Do(\n\ta int,\n) error\nfunc Fy[T any](x T) T { return x }\ntype Al = map[string]struct{ Kx int }\n")
	f.Add("package p\r\n//line x.go:100\r\nconst Cx = 1 // c\r\nvar Vx struct {\r\n\tAx int\r\n}\r\n")
	f.Fuzz(func(t *testing.T, src string) {
		got, ok := goDefinitions([]byte(src))
		if !ok || bracketDepth(src) >= 24 {
			return
		}
		ex := newExtractor()
		defer ex.close()
		want, clean, err := ex.treeDefinitions(t.Context(), LangGo, []byte(src))
		if err != nil || !clean {
			return
		}
		if g, w := render(got), render(want); g != w {
			t.Fatalf("go/parser's definitions differ from tree-sitter's:\n%s", lineDiff(g, w))
		}
	})
}

// bracketDepth is the deepest nesting of (, [ and { in s.
func bracketDepth(s string) int {
	d, most := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[', '{':
			d++
			most = max(most, d)
		case ')', ']', '}':
			d--
		}
	}
	return most
}
