package docblock

import (
	"fmt"
	"go/ast"
	godoc "go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// TestDocCommentsNameTheirIdentifier: the doc comment of every exported
// function, method and type of the module starts with its own name, never
// with another identifier of its package or a part of its own name (a
// comment left behind when code moved or was renamed).
func TestDocCommentsNameTheirIdentifier(t *testing.T) {
	problems, err := driftedComments(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestDriftedCommentsFound: the check finds each kind of drift in a
// made-up package, and nothing in comments that are right.
func TestDriftedCommentsFound(t *testing.T) {
	dir := t.TempDir()
	src := `package p

// helper does the work.
func helper() {}

// helper is what Run used to be called.
func Run() {}

// Totals sums a diffstat.
func DiffTotals() {}

// Grow grows it.
type Grow struct{}

// Shrink shrinks it (a method documented under another method's name).
func (Grow) Grow2() {}

// Shrink shrinks.
func (Grow) Shrink() {}

// A comment that starts with an article is not a name.
func Other() {}
`
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := driftedComments(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"DiffTotals", "Grow.Grow2", "Run"}
	if len(got) != len(want) {
		t.Fatalf("found %q, want problems with %v", got, want)
	}
	for i, w := range want {
		if !strings.Contains(got[i], " "+w+"'s doc comment starts with ") {
			t.Errorf("problem %d: %q, want one about %s", i, got[i], w)
		}
	}
}

// driftedComments lists, sorted, the exported identifiers below root
// (test files, testdata and hidden folders left out) whose doc comment
// starts with another identifier of their package, or with a part of
// their own name.
func driftedComments(root string) ([]string, error) {
	var problems []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if path != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_")) {
			return filepath.SkipDir
		}
		fset := token.NewFileSet()
		pkgs, err := parser.ParseDir(fset, path, func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments)
		if err != nil {
			return err
		}
		for _, pkg := range pkgs {
			problems = append(problems, driftedIn(fset, pkg, path)...)
		}
		return nil
	})
	slices.Sort(problems)
	return problems, err
}

func driftedIn(fset *token.FileSet, pkg *ast.Package, path string) []string {
	names := map[string]bool{}
	for _, f := range pkg.Files {
		for _, decl := range f.Decls {
			switch x := decl.(type) {
			case *ast.FuncDecl:
				names[x.Name.Name] = true
			case *ast.GenDecl:
				for _, spec := range x.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						names[s.Name.Name] = true
					case *ast.ValueSpec:
						for _, id := range s.Names {
							names[id.Name] = true
						}
					}
				}
			}
		}
	}
	var problems []string
	check := func(name, shown, text string, pos token.Pos) {
		words := strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' })
		if len(words) == 0 || words[0] == name {
			return
		}
		w := words[0]
		if names[w] || (len(w) > 2 && unicode.IsUpper([]rune(w)[0]) && (strings.HasSuffix(name, w) || strings.HasPrefix(name, w))) {
			problems = append(problems, fmt.Sprintf("%s: %s's doc comment starts with %q: say what %s is, starting with its name", fset.Position(pos), shown, w, name))
		}
	}
	dp := godoc.New(pkg, path, 0)
	for _, f := range dp.Funcs {
		check(f.Name, f.Name, f.Doc, f.Decl.Pos())
	}
	for _, ty := range dp.Types {
		check(ty.Name, ty.Name, ty.Doc, ty.Decl.Pos())
		for _, f := range ty.Funcs {
			check(f.Name, f.Name, f.Doc, f.Decl.Pos())
		}
		for _, f := range ty.Methods {
			check(f.Name, ty.Name+"."+f.Name, f.Doc, f.Decl.Pos())
		}
	}
	return problems
}

// TestNoForeignCitations: code, templates, scripts and docs cite the
// project's own docs (README.md, docs/), never the sections of a contract
// that is not in the repository.
func TestNoForeignCitations(t *testing.T) {
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".md", ".tmpl", ".txtar":
		default:
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, "contract "+"section") {
				t.Errorf("%s:%d cites a section of an outside contract: cite README.md or docs/ instead", path, i+1)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCitedDocsExist: every docs/NAME.md a comment of the module's code
// cites is a page of the project's docs/ (a citation left pointing at a
// page that was never written, or was renamed, fails here). Test files are
// left out: their strings name made-up repositories' files.
func TestCitedDocsExist(t *testing.T) {
	root := filepath.Join("..", "..")
	cited := regexp.MustCompile(`docs/[A-Za-z0-9_.-]+\.md`)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if filepath.Ext(path) != ".go" || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			_, comment, ok := strings.Cut(line, "//")
			if !ok {
				continue
			}
			for _, doc := range cited.FindAllString(comment, -1) {
				if _, err := os.Stat(filepath.Join(root, doc)); err != nil {
					t.Errorf("%s:%d cites %s, which is not a page of docs/", path, i+1, doc)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
