//go:build cgo

package repomap

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/repomap/synthetic"
	sitter "github.com/smacker/go-tree-sitter"
)

// walkCompare counts what a comparison of the walker with the queries
// covered.
type walkCompare struct {
	files, defs, deep, deepDiffer, broken map[Lang]int
}

func newWalkCompare() *walkCompare {
	return &walkCompare{files: map[Lang]int{}, defs: map[Lang]int{}, deep: map[Lang]int{}, deepDiffer: map[Lang]int{}, broken: map[Lang]int{}}
}

// compare checks that the walker (treeDefinitions) finds in src what the
// queries find (queryDefinitions): the same names, kinds, lines and
// signatures in the same order, and the same verdict on syntax errors.
// A tree 64 levels deep or more is not compared: the queries' rule kept a
// definition below a function node more than 64 levels up, the walker
// leaves out everything below a function node.
func (wc *walkCompare) compare(t *testing.T, ex *extractor, name string, l Lang, src []byte) {
	t.Helper()
	if !l.parsed() {
		return
	}
	want, wantClean, depth, err := queryDefinitions(t.Context(), l, src)
	if err != nil {
		t.Logf("%s: query: %v", name, err)
		return
	}
	got, gotClean, err := ex.treeDefinitions(t.Context(), l, src)
	if err != nil {
		t.Errorf("%s: walker: %v", name, err)
		return
	}
	if depth >= 64 {
		wc.deep[l]++
		if g, w := render(got), render(want); g != w {
			wc.deepDiffer[l]++
			t.Logf("%s (%s), %d levels deep: the walker's definitions differ from the queries' (not an error):\n%s", name, l, depth, lineDiff(g, w))
		}
		return
	}
	wc.files[l]++
	wc.defs[l] += len(want)
	if !wantClean {
		wc.broken[l]++
	}
	if gotClean != wantClean {
		t.Errorf("%s: walker says clean=%v, the query's parse %v", name, gotClean, wantClean)
	}
	if g, w := render(got), render(want); g != w {
		t.Errorf("%s (%s): the walker's definitions differ from the queries':\n%s", name, l, lineDiff(g, w))
	}
}

func (wc *walkCompare) report(t *testing.T) {
	var langs []Lang
	for l := range wc.files {
		langs = append(langs, l)
	}
	sort.Slice(langs, func(i, j int) bool { return langs[i] < langs[j] })
	for _, l := range langs {
		t.Logf("%-10s %6d files (%d with syntax errors), %7d definitions; %d too deep to compare (%d of them differ)", l, wc.files[l], wc.broken[l], wc.defs[l], wc.deep[l], wc.deepDiffer[l])
	}
}

// compareTree compares every file of a parsed language under root.
func (wc *walkCompare) compareTree(t *testing.T, ex *extractor, root string) {
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == ".orch" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		l := LangOf(p)
		if !d.Type().IsRegular() || !l.parsed() {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if len(src) > defaultMaxFileBytes || looksBinary(src) || looksMinified(src) {
			return nil // not parsed by the index either
		}
		wc.compare(t, ex, p, l, src)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestWalkerMatchesQueries compares the walker with the queries it
// replaced on the fixtures, the fuzz seeds, a synthetic repository of
// 2,000 files (all five languages) and, with ORCH_DEFS_REAL naming
// folders (separated by ':'), on real code:
//
//	ORCH_DEFS_REAL=/usr/lib/python3.11:/src/zod go test -run WalkerMatchesQueries -v ./internal/repomap
func TestWalkerMatchesQueries(t *testing.T) {
	ex := newExtractor()
	defer ex.close()
	wc := newWalkCompare()
	for p, src := range fixture {
		wc.compare(t, ex, p, LangOf(p), []byte(src))
	}
	for _, s := range walkSeeds {
		for l := LangGo; l <= LangJava; l++ {
			wc.compare(t, ex, fmt.Sprintf("seed %q", s), l, []byte(s))
		}
	}
	dir := t.TempDir()
	if err := synthetic.Write(dir, 2000); err != nil {
		t.Fatal(err)
	}
	wc.compareTree(t, ex, dir)
	if wc.files[LangPython] < 300 || wc.files[LangTypeScript] < 300 || wc.files[LangJava] < 200 || wc.files[LangRust] < 100 {
		t.Fatalf("the synthetic repository was not compared: %v", wc.files)
	}
	for _, root := range filepath.SplitList(os.Getenv("ORCH_DEFS_REAL")) {
		wc.compareTree(t, ex, root)
	}
	wc.report(t)
}

// walkSeeds are sources every language's walker is run on: definitions
// in the places the patterns name, inside functions (left out), nested
// classes, several names per declaration, syntax errors.
var walkSeeds = []string{
	"class A:\n    x = 1\n    y: int = 2\n    def f(self):\n        class B:\n            z = 3\n        return B\n\nX = 1\nY, Z = 2, 3\ndef g(): pass\n@dec\nclass C(A): pass\n",
	"export const a = 1, b = () => { function inner() {} };\nlet c;\nvar d = 1, e;\nmodule.exports.f = function () {};\nexports.g = 1;\nclass K { m() { class L {} } static n = 1; #p() {} }\nfunction* gen() {}\n",
	"export interface I { a: number; m(): void }\ntype T = string;\nenum E { A, B }\nabstract class AC { abstract am(): void; f = 1 }\ndeclare function df(x: number): void;\nnamespace N { export const q = 1 }\nconst Comp = () => <div>{x}</div>;\n",
	"pub struct S { pub a: u8, b: u16 }\nenum En { A, B(u8) }\nunion U { x: u32 }\ntype Ty = u8;\ntrait Tr { fn tm(&self); }\nconst C: u8 = 1;\nstatic ST: u8 = 2;\nmod m { fn inner() { struct Local; } }\nmacro_rules! mac { () => {} }\nimpl S { fn method(&self) {} }\n",
	"package p;\npublic class A { int a, b = 2; static final int C = 1; A() {} void m() { class Local { int z; } Runnable r = () -> { }; }\n interface I { int K = 1; void im(); }\n enum E { X, Y; void em() {} }\n record R(int q) {}\n @interface Ann { int v(); } }\n",
	"package p\nconst a, b = 1, 2\nvar (\n\tc, d int\n\te = 3\n)\ntype T struct{ F, G int }\ntype I interface{ M() }\ntype Al = int\nfunc (t T) M() { type local struct{ x int } }\nfunc F() {}\n",
	"def broken(:\n  pass\nclass Ok:\n  pass\n",
	"function ( { class X {}\nconst y = 1\n",
	"fn f( { struct A; }\nstruct B;\n",
	"class { void m( { } } class Ok {}\n",
	"",
	"\x00\xff\xfe",
}

// FuzzWalkerMatchesQueries compares the walker with the queries it
// replaced on untrusted source of every language (the same definitions
// and syntax error verdict, on trees less than 64 levels deep).
func FuzzWalkerMatchesQueries(f *testing.F) {
	for _, s := range walkSeeds {
		for l := LangGo; l <= LangJava; l++ {
			f.Add(uint8(l-LangGo), s)
		}
	}
	for p, src := range fixture {
		f.Add(uint8(LangOf(p)-LangGo), src)
	}
	f.Fuzz(func(t *testing.T, lang uint8, src string) {
		l := LangGo + Lang(lang)%(LangJava-LangGo+1)
		ex := newExtractor()
		defer ex.close()
		wc := newWalkCompare()
		wc.compare(t, ex, "input", l, []byte(src))
	})
}

// TestPatternsCompile checks every definition pattern against its
// grammar.
func TestPatternsCompile(t *testing.T) {
	for l := LangGo; l <= LangJava; l++ {
		if _, err := loadGrammar(l); err != nil {
			t.Errorf("%s: %v", l, err)
		}
	}
}

// TestTreeSitterDeclarations checks that parse_cgo.h declares tree-sitter's
// types and functions as the module's api.h does (the walker calls the
// runtime compiled into github.com/smacker/go-tree-sitter).
func TestTreeSitterDeclarations(t *testing.T) {
	// The module's folder, from where its code was compiled.
	file, _ := runtime.FuncForPC(reflect.ValueOf(sitter.NewParser).Pointer()).FileLine(reflect.ValueOf(sitter.NewParser).Pointer())
	api, err := os.ReadFile(filepath.Join(filepath.Dir(file), "api.h"))
	if err != nil {
		t.Fatalf("tree-sitter's api.h beside %s: %v", file, err)
	}
	ours, err := os.ReadFile("parse_cgo.h")
	if err != nil {
		t.Fatal(err)
	}
	norm := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	apiText := norm(string(api))
	checked := 0
	for _, decl := range cStatements(string(ours)) {
		if strings.Contains(decl, "orch") || strings.Contains(decl, "tree_sitter_") || strings.HasPrefix(decl, "enum") {
			continue // the walker's own, and the grammars' (in their packages)
		}
		checked++
		if !strings.Contains(apiText, norm(decl)+";") {
			t.Errorf("parse_cgo.h declares what api.h does not:\n%s", decl)
		}
	}
	if checked < 30 {
		t.Fatalf("only %d declarations checked", checked)
	}
}

// cStatements splits C declarations at the semicolons outside braces,
// leaving out comments and preprocessor lines.
func cStatements(src string) []string {
	var b strings.Builder
	for _, line := range strings.Split(src, "\n") {
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "//") || strings.HasPrefix(t, "#") {
			continue
		}
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		b.WriteString(line + "\n")
	}
	var out []string
	depth, start := 0, 0
	text := b.String()
	for i, c := range text {
		switch c {
		case '{':
			depth++
		case '}':
			depth--
		case ';':
			if depth == 0 {
				out = append(out, strings.TrimSpace(text[start:i]))
				start = i + 1
			}
		}
	}
	return out
}

// BenchmarkDefinitions finds the definitions of the synthetic
// repository's files of each parsed language, with the walker ("walk")
// and with the queries it replaced ("query"):
//
//	go test -run XXX -bench Definitions ./internal/repomap
func BenchmarkDefinitions(b *testing.B) {
	dir := b.TempDir()
	if err := synthetic.Write(dir, 400); err != nil {
		b.Fatal(err)
	}
	byLang := map[Lang][][]byte{}
	for i := 0; i < 400; i++ {
		p := synthetic.Path(i)
		if l := LangOf(p); l.parsed() {
			src, err := os.ReadFile(filepath.Join(dir, p))
			if err != nil {
				b.Fatal(err)
			}
			byLang[l] = append(byLang[l], src)
		}
	}
	for _, l := range []Lang{LangPython, LangTypeScript, LangJava, LangRust, LangGo} {
		files := byLang[l]
		b.Run(l.String()+"/walk", func(b *testing.B) {
			ex := newExtractor()
			defer ex.close()
			for i := 0; b.Loop(); i++ {
				if _, _, err := ex.treeDefinitions(b.Context(), l, files[i%len(files)]); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(l.String()+"/query", func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				if _, _, _, err := queryDefinitions(b.Context(), l, files[i%len(files)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
