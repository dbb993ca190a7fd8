//go:build cgo

package repomap

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/golang"
	"github.com/smacker/go-tree-sitter/java"
	"github.com/smacker/go-tree-sitter/javascript"
	"github.com/smacker/go-tree-sitter/python"
	"github.com/smacker/go-tree-sitter/rust"
	"github.com/smacker/go-tree-sitter/typescript/tsx"
	"github.com/smacker/go-tree-sitter/typescript/typescript"
)

// queryGrammar is one language's compiled definition query.
type queryGrammar struct {
	once    sync.Once
	lang    *sitter.Language
	query   *sitter.Query
	kinds   []string // capture index → kind, "" for @name
	nameCap uint32
	err     error
}

var queryGrammars [numLangs]queryGrammar

func sitterLanguage(l Lang) *sitter.Language {
	switch l {
	case LangGo:
		return golang.GetLanguage()
	case LangPython:
		return python.GetLanguage()
	case LangJavaScript:
		return javascript.GetLanguage()
	case LangTypeScript:
		return typescript.GetLanguage()
	case LangTSX:
		return tsx.GetLanguage()
	case LangRust:
		return rust.GetLanguage()
	case LangJava:
		return java.GetLanguage()
	}
	return nil
}

func loadQuery(l Lang) (*queryGrammar, error) {
	g := &queryGrammars[l]
	g.once.Do(func() {
		g.lang = sitterLanguage(l)
		q, err := sitter.NewQuery([]byte(defQueries[l]), g.lang)
		if err != nil {
			g.err = fmt.Errorf("repomap: %s definition query: %w", l, err)
			return
		}
		g.query = q
		n := q.CaptureCount()
		g.kinds = make([]string, n)
		for i := uint32(0); i < n; i++ {
			name := q.CaptureNameForId(i)
			if name == "name" {
				g.nameCap = i
				continue
			}
			g.kinds[i] = strings.TrimPrefix(name, "def.")
		}
	})
	return g, g.err
}

// queryDefinitions is how the map found definitions before the walker:
// tree-sitter's parse and a query over the whole tree, each match's
// definition dropped when a function node is among its 64 nearest
// ancestors. depth is the tree's depth (the walker leaves out everything
// below a function node at any depth).
func queryDefinitions(ctx context.Context, l Lang, src []byte) (defs []Def, clean bool, depth int, err error) {
	g, err := loadQuery(l)
	if err != nil {
		return nil, false, 0, err
	}
	parser := sitter.NewParser()
	defer parser.Close()
	parser.SetOperationLimit(parseTimeoutMicros)
	parser.SetLanguage(g.lang)
	tree, err := parser.ParseCtx(ctx, nil, src)
	if err != nil {
		if errors.Is(err, sitter.ErrOperationLimit) {
			return nil, false, 0, errParseLimit
		}
		return nil, false, 0, err
	}
	defer tree.Close()
	root := tree.RootNode()
	clean = !root.HasError()
	cursor := sitter.NewQueryCursor()
	defer cursor.Close()
	cursor.Exec(g.query, root)
	seen := map[uint32]bool{} // one definition per name position
	for {
		m, ok := cursor.NextMatch()
		if !ok {
			break
		}
		var name, def *sitter.Node
		kind := ""
		for _, c := range m.Captures {
			if c.Index == g.nameCap {
				name = c.Node
			} else {
				def, kind = c.Node, g.kinds[c.Index]
			}
		}
		if name == nil || def == nil || seen[name.StartByte()] {
			continue
		}
		seen[name.StartByte()] = true
		if queryLocal(def) {
			continue
		}
		n := name.Content(src)
		if !isIdent(n) {
			continue
		}
		body := -1
		if b := def.ChildByFieldName("body"); b != nil {
			body = int(b.StartByte())
		}
		defs = append(defs, Def{
			Name: n,
			Kind: kind,
			Line: int(name.StartPoint().Row) + 1,
			Sig:  signatureText(l, kind, src, int(def.StartByte()), int(def.EndByte()), body),
		})
	}
	sortDefs(defs)
	return defs, clean, treeDepth(root), nil
}

// queryLocal reports whether a definition sits inside a function body,
// looking at most 64 nodes up.
func queryLocal(def *sitter.Node) bool {
	for p, depth := def.Parent(), 0; p != nil && depth < 64; p, depth = p.Parent(), depth+1 {
		if containsString(functionNodes, p.Type()) {
			return true
		}
	}
	return false
}

func containsString(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// treeDepth is the number of levels of the tree under root.
func treeDepth(root *sitter.Node) int {
	c := sitter.NewTreeCursor(root)
	defer c.Close()
	depth, most := 0, 0
	for {
		most = max(most, depth)
		if c.GoToFirstChild() {
			depth++
			continue
		}
		for !c.GoToNextSibling() {
			if !c.GoToParent() {
				return most + 1
			}
			depth--
		}
	}
}

func TestQueriesCompile(t *testing.T) {
	for l := LangGo; l <= LangJava; l++ {
		if _, err := loadQuery(l); err != nil {
			t.Errorf("%s: %v", l, err)
		}
	}
}

// defQueries are the tree-sitter queries the map used to find
// definitions with (before the walker of parse_cgo.c): each pattern
// captures the whole definition as @def.KIND and its name as @name. They
// say what defPatterns say, and queryDefinitions, the extraction that
// ran them, is the reference the walker is compared with.
var defQueries = [numLangs]string{
	LangGo: `
(function_declaration name: (identifier) @name) @def.func
(method_declaration name: (field_identifier) @name) @def.method
(type_spec name: (type_identifier) @name) @def.type
(type_alias name: (type_identifier) @name) @def.type
; every name of a spec (with name: only its first would match)
(source_file (const_declaration (const_spec (identifier) @name) @def.const))
(source_file (var_declaration (var_spec name: (identifier) @name) @def.var))
(source_file (var_declaration (var_spec_list (var_spec name: (identifier) @name) @def.var)))
(field_declaration name: (field_identifier) @name) @def.field
(method_elem name: (field_identifier) @name) @def.method
`,
	LangPython: `
(function_definition name: (identifier) @name) @def.func
(class_definition name: (identifier) @name) @def.class
(module (expression_statement (assignment left: (identifier) @name) @def.var))
(class_definition body: (block (expression_statement (assignment left: (identifier) @name) @def.field)))
`,
	LangJavaScript: jsQuery + `
(class_declaration name: (identifier) @name) @def.class
`,
	LangTypeScript: jsQuery + tsQuery,
	LangTSX:        jsQuery + tsQuery,
	LangRust: `
(function_item name: (identifier) @name) @def.func
(function_signature_item name: (identifier) @name) @def.func
(struct_item name: (type_identifier) @name) @def.type
(enum_item name: (type_identifier) @name) @def.type
(union_item name: (type_identifier) @name) @def.type
(type_item name: (type_identifier) @name) @def.type
(trait_item name: (type_identifier) @name) @def.interface
(const_item name: (identifier) @name) @def.const
(static_item name: (identifier) @name) @def.var
(mod_item name: (identifier) @name) @def.module
(macro_definition name: (identifier) @name) @def.macro
(field_declaration name: (field_identifier) @name) @def.field
(enum_variant name: (identifier) @name) @def.const
`,
	LangJava: `
(class_declaration name: (identifier) @name) @def.class
(interface_declaration name: (identifier) @name) @def.interface
(enum_declaration name: (identifier) @name) @def.type
(record_declaration name: (identifier) @name) @def.class
(annotation_type_declaration name: (identifier) @name) @def.interface
(method_declaration name: (identifier) @name) @def.method
(constructor_declaration name: (identifier) @name) @def.method
(field_declaration declarator: (variable_declarator name: (identifier) @name)) @def.field
(constant_declaration declarator: (variable_declarator name: (identifier) @name)) @def.const
(enum_constant name: (identifier) @name) @def.const
`,
}

// jsQuery is shared by JavaScript and TypeScript: functions, methods and
// top-level (or exported) bindings.
const jsQuery = `
(function_declaration name: (identifier) @name) @def.func
(generator_function_declaration name: (identifier) @name) @def.func
(method_definition name: (property_identifier) @name) @def.method
(program (lexical_declaration (variable_declarator name: (identifier) @name)) @def.var)
(program (variable_declaration (variable_declarator name: (identifier) @name)) @def.var)
(export_statement (lexical_declaration (variable_declarator name: (identifier) @name)) @def.var)
(program (expression_statement (assignment_expression left: (member_expression property: (property_identifier) @name)) @def.var))
`

// tsQuery adds TypeScript's declarations.
const tsQuery = `
(class_declaration name: (type_identifier) @name) @def.class
(abstract_class_declaration name: (type_identifier) @name) @def.class
(interface_declaration name: (type_identifier) @name) @def.interface
(type_alias_declaration name: (type_identifier) @name) @def.type
(enum_declaration name: (identifier) @name) @def.type
(function_signature name: (identifier) @name) @def.func
(method_signature name: (property_identifier) @name) @def.method
(abstract_method_signature name: (property_identifier) @name) @def.method
(public_field_definition name: (property_identifier) @name) @def.field
(property_signature name: (property_identifier) @name) @def.field
(internal_module name: (identifier) @name) @def.module
`
