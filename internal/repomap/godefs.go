package repomap

import (
	"go/ast"
	"go/parser"
	gotoken "go/token"
)

// goDefinitions finds the definitions of a Go file with the standard
// library's parser, the same ones the tree-sitter query for Go (lang.go)
// finds, with the same lines and signatures: functions and methods, type
// specs, top-level constants and variables, struct fields and interface
// methods, leaving out whatever sits inside a function (its body,
// parameters or receiver) or a function literal. It is about ten times
// cheaper than tree-sitter's parse and query (README, "The repository
// map"), and Go is the most common language of the repositories orch
// works on. ok is false when the file does not parse: the caller then
// uses tree-sitter, whose error recovery still finds the definitions
// around a syntax error.
//
// The definitions come in source order, as sortDefs leaves tree-sitter's:
// by line, then by the name's place on the line. A test compares both
// on real Go code (this repository's own files), and a fuzz test on
// every input both parse without an error.
func goDefinitions(src []byte) (defs []Def, ok bool) {
	fset := gotoken.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.SkipObjectResolution)
	if err != nil || f == nil {
		return nil, false
	}
	g := goDefs{src: src, file: fset.File(f.Pos())}
	if g.file == nil {
		return nil, false
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			// Nothing inside a function is kept (its parameters' struct
			// types included), as tree-sitter's local rule says.
			kind, body := KindFunc, gotoken.NoPos
			if d.Recv != nil {
				kind = KindMethod
			}
			if d.Body != nil {
				body = d.Body.Lbrace
			}
			g.add(d.Name, kind, d.Pos(), d.End(), body)
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					g.add(s.Name, KindType, s.Pos(), s.End(), gotoken.NoPos)
					g.nested(s.TypeParams)
					g.nested(s.Type)
				case *ast.ValueSpec:
					kind := KindVar
					if d.Tok == gotoken.CONST {
						kind = KindConst
					}
					for _, n := range s.Names {
						g.add(n, kind, s.Pos(), s.End(), gotoken.NoPos)
					}
					g.nested(s.Type)
					for _, v := range s.Values {
						g.nested(v)
					}
				}
			}
		}
	}
	sortDefs(g.defs)
	return g.defs, true
}

// goDefs collects one file's definitions.
type goDefs struct {
	src  []byte
	file *gotoken.File
	defs []Def
}

// nested adds the struct fields and interface methods under n, outside
// function literals.
func (g *goDefs) nested(n ast.Node) {
	if n == nil {
		return
	}
	if fl, ok := n.(*ast.FieldList); ok && fl == nil {
		return
	}
	ast.Inspect(n, func(n ast.Node) bool {
		switch t := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.StructType:
			for _, fd := range t.Fields.List {
				for _, name := range fd.Names {
					g.add(name, KindField, fd.Pos(), fd.End(), gotoken.NoPos)
				}
			}
		case *ast.InterfaceType:
			for _, m := range t.Methods.List {
				if _, isFunc := m.Type.(*ast.FuncType); isFunc {
					for _, name := range m.Names {
						g.add(name, KindMethod, m.Pos(), m.End(), gotoken.NoPos)
					}
				}
			}
		}
		return true
	})
}

// add keeps the definition of name, whose whole declaration spans
// [start, end) and whose body (if any) starts at body.
func (g *goDefs) add(name *ast.Ident, kind string, start, end, body gotoken.Pos) {
	if name == nil || !isIdent(name.Name) {
		return
	}
	off := func(p gotoken.Pos) int { return g.file.Offset(p) }
	bodyAt := -1
	if body.IsValid() {
		bodyAt = off(body)
	}
	g.defs = append(g.defs, Def{
		Name: name.Name,
		Kind: kind,
		Line: g.file.PositionFor(name.Pos(), false).Line,
		Sig:  signatureText(LangGo, kind, g.src, off(start), off(end), bodyAt),
	})
}
