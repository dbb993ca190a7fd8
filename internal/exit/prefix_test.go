package exit

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// printers write straight to an output: the edges where a line that is not
// an error (a warning, a note) may carry the prefix itself.
var printers = map[string]bool{
	"fmt.Fprintf": true, "fmt.Fprintln": true, "fmt.Fprint": true,
	"fmt.Printf": true, "fmt.Println": true, "fmt.Print": true,
}

// notes are functions that render a line that is not an error (a notice
// printed beside a command's output), which carries the prefix itself.
var notes = map[string]bool{
	"Settled.String": true, // orchestrator: an interrupted git effect was settled
}

// prefixLiterals returns, for every non-test Go file under the module's
// cmd and internal folders, the positions of string literals that start
// with "orch: " outside a print call, a note or a title. Messages are written without the
// prefix; Format adds it where the error is shown (docs/workers.md,
// "Errors").
func prefixLiterals(t *testing.T, root string, dirs ...string) map[string][]string {
	t.Helper()
	found := map[string][]string{}
	fset := token.NewFileSet()
	for _, dir := range dirs {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if d.Name() == "testdata" {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			rel = filepath.ToSlash(rel)
			var stack []ast.Node
			ast.Inspect(f, func(n ast.Node) bool {
				if n == nil {
					stack = stack[:len(stack)-1]
					return true
				}
				stack = append(stack, n)
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil || !strings.HasPrefix(s, Prefix) {
					return true
				}
				if inPrint(stack) || isPrefixConst(stack) || inNote(stack) || isTitle(stack) {
					return true
				}
				found[rel] = append(found[rel], fset.Position(lit.Pos()).String())
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return found
}

// inPrint reports whether the innermost call around the literal is a
// print (fmt.Fprintf(w, "orch: warning: …")).
func inPrint(stack []ast.Node) bool {
	for i := len(stack) - 2; i >= 0; i-- {
		call, ok := stack[i].(*ast.CallExpr)
		if !ok {
			continue
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		pkg, ok := sel.X.(*ast.Ident)
		return ok && printers[pkg.Name+"."+sel.Sel.Name]
	}
	return false
}

// inNote reports whether the literal is inside one of the notes.
func inNote(stack []ast.Node) bool {
	for _, n := range stack {
		fd, ok := n.(*ast.FuncDecl)
		if !ok || fd.Recv == nil || len(fd.Recv.List) != 1 {
			continue
		}
		typ := fd.Recv.List[0].Type
		if st, ok := typ.(*ast.StarExpr); ok {
			typ = st.X
		}
		if id, ok := typ.(*ast.Ident); ok && notes[id.Name+"."+fd.Name.Name] {
			return true
		}
	}
	return false
}

// isTitle: a name shown as a title (the MCP server's), not a message.
func isTitle(stack []ast.Node) bool {
	kv, ok := stack[len(stack)-2].(*ast.KeyValueExpr)
	if !ok {
		return false
	}
	key, ok := kv.Key.(*ast.Ident)
	return ok && key.Name == "Title"
}

// isPrefixConst: the declaration of Prefix itself.
func isPrefixConst(stack []ast.Node) bool {
	for i := len(stack) - 2; i >= 0; i-- {
		if vs, ok := stack[i].(*ast.ValueSpec); ok {
			return len(vs.Names) == 1 && vs.Names[0].Name == "Prefix"
		}
	}
	return false
}

// TestNoPrefixInMessages: no message is written with the "orch: " prefix;
// Format adds it once, at the edge.
func TestNoPrefixInMessages(t *testing.T) {
	found := prefixLiterals(t, filepath.Join("..", ".."), "cmd", "internal")
	var files []string
	for f := range found {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, f := range files {
		t.Errorf("%s: %d string literals start with \"orch: \"; write the message without it (exit.Format adds it once where the error is shown):\n\t%s",
			f, len(found[f]), strings.Join(found[f], "\n\t"))
	}
}

// TestPrefixLiteralsFinds: the check finds a prefixed message in an error
// constructor, a Sprintf, a concatenation and an Error method, and lets
// through prints, notes, titles and the same text in a _test.go file
// (testdata/prefix).
func TestPrefixLiteralsFinds(t *testing.T) {
	found := prefixLiterals(t, "testdata", "prefix")
	got := found["prefix/bad.go"]
	var lines []string
	for _, p := range got {
		lines = append(lines, p[strings.LastIndex(p[:strings.LastIndex(p, ":")], ":")+1:strings.LastIndex(p, ":")])
	}
	if want := "8 9 10 11 15"; strings.Join(lines, " ") != want {
		t.Errorf("found on lines %q, want %q (all: %v)", strings.Join(lines, " "), want, found)
	}
	if len(found) != 1 {
		t.Errorf("found in %d files, want only prefix/bad.go: %v", len(found), found)
	}
}

// TestEdgeErrorsHaveKinds: in the front ends (the command line, the REPL,
// the board, the MCP server) an error is made with exit.New and its kind;
// fmt.Errorf only wraps a cause with %w (the kind comes from the cause),
// and errors.New is not used.
func TestEdgeErrorsHaveKinds(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	for _, dir := range []string{"internal/cli", "internal/repl", "internal/board", "internal/mcpserver"} {
		paths, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
		if err != nil || len(paths) == 0 {
			t.Fatalf("%s: no Go files (%v)", dir, err)
		}
		for _, path := range paths {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			// Package-level sentinels (var ErrX = errors.New(...)) are
			// matched with errors.Is; only errors made in functions count.
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
					checkEdgeBody(t, fset, fd.Body)
				}
			}
		}
	}
}

func checkEdgeBody(t *testing.T, fset *token.FileSet, body *ast.BlockStmt) {
	t.Helper()
	ast.Inspect(body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		pkg, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		switch pkg.Name + "." + sel.Sel.Name {
		case "errors.New":
			t.Errorf("%s: errors.New in a front end: make it exit.New(kind, ...)", fset.Position(call.Pos()))
		case "fmt.Errorf":
			lit, ok := call.Args[0].(*ast.BasicLit)
			if ok && !strings.Contains(lit.Value, "%w") {
				t.Errorf("%s: fmt.Errorf without a %%w cause in a front end: make it exit.New(kind, ...)", fset.Position(call.Pos()))
			}
		}
		return true
	})
}
