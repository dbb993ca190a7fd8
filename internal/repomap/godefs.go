package repomap

import (
	"bytes"
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
//
// go/parser first reads a copy of src whose top-level function bodies
// are blanked (blankBodies): nothing inside a function is a definition,
// and their syntax trees were most of what indexing a Go file allocated.
// When that copy does not parse, the whole file is parsed. So a file
// whose only syntax errors are inside function bodies gets go/parser's
// definitions, not tree-sitter's.
func goDefinitions(src []byte) (defs []Def, ok bool) {
	if b := blankBodies(src); b != nil {
		if defs, ok := goDefinitionsOf(b, src); ok {
			return defs, true
		}
	}
	return goDefinitionsOf(src, src)
}

// goDefinitionsOf parses text, src with the same bytes at every offset
// outside function bodies, and takes the signatures from src.
func goDefinitionsOf(text, src []byte) (defs []Def, ok bool) {
	fset := gotoken.NewFileSet()
	f, err := parser.ParseFile(fset, "", text, parser.SkipObjectResolution)
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

// blankBodies returns a copy of a Go file with the inside of every
// function body whose func keyword starts a line at the top level
// replaced by spaces (line breaks kept, so every offset and line stays
// where it was), or nil when the file has none or its comments, strings
// or brackets do not close. A brace in a function's header opens a body
// unless it follows struct or interface; a header ends at a line break
// outside brackets, as Go's semicolon rule says.
func blankBodies(src []byte) []byte {
	var out []byte
	depth, paren := 0, 0
	header := false   // after a top-level func keyword, before its body
	body := -1        // the offset of the open body's brace
	typeWord := false // the last token was struct or interface
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '\n':
			if header && paren == 0 && depth == 0 {
				header = false
			}
		case c == ' ' || c == '\t' || c == '\r':
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			i-- // the line break is read next
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := bytes.Index(src[i+2:], []byte("*/"))
			if end < 0 {
				return nil
			}
			if header && paren == 0 && depth == 0 && bytes.IndexByte(src[i:i+2+end], '\n') >= 0 {
				header = false // a comment with a line break is one
			}
			i += end + 3
		case c == '"' || c == '\'':
			j := i + 1
			for ; j < len(src) && src[j] != c; j++ {
				if src[j] == '\n' {
					return nil
				}
				if src[j] == '\\' {
					j++
				}
			}
			if j >= len(src) {
				return nil
			}
			i, typeWord = j, false
		case c == '`':
			end := bytes.IndexByte(src[i+1:], '`')
			if end < 0 {
				return nil
			}
			i, typeWord = i+1+end, false
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80:
			j := i
			for j < len(src) && (src[j] == '_' || src[j] >= 'a' && src[j] <= 'z' || src[j] >= 'A' && src[j] <= 'Z' || src[j] >= '0' && src[j] <= '9' || src[j] >= 0x80) {
				j++
			}
			w := src[i:j]
			typeWord = string(w) == "struct" || string(w) == "interface"
			if string(w) == "func" && depth == 0 && paren == 0 && (i == 0 || src[i-1] == '\n') {
				header = true
			}
			i = j - 1
		case c == '(' || c == '[':
			paren++
			typeWord = false
		case c == ')' || c == ']':
			if paren--; paren < 0 {
				return nil
			}
			typeWord = false
		case c == '{':
			if header && paren == 0 && depth == 0 && !typeWord {
				header, body = false, i
			}
			depth++
			typeWord = false
		case c == '}':
			if depth--; depth < 0 {
				return nil
			}
			if depth == 0 && body >= 0 {
				if out == nil {
					out = bytes.Clone(src)
				}
				for k := body + 1; k < i; k++ {
					if out[k] != '\n' {
						out[k] = ' '
					}
				}
				body = -1
			}
			typeWord = false
		default:
			typeWord = false
		}
	}
	if depth != 0 || paren != 0 {
		return nil
	}
	return out
}
