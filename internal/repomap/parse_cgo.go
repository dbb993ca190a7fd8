//go:build cgo

package repomap

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/golang"
	"github.com/smacker/go-tree-sitter/java"
	"github.com/smacker/go-tree-sitter/javascript"
	"github.com/smacker/go-tree-sitter/python"
	"github.com/smacker/go-tree-sitter/rust"
	"github.com/smacker/go-tree-sitter/typescript/tsx"
	"github.com/smacker/go-tree-sitter/typescript/typescript"
)

// DefinitionsAvailable reports whether this build indexes definitions with
// tree-sitter (it needs cgo; without it the map ranks by paths, git grep
// and identifier references only).
const DefinitionsAvailable = true

// grammar is one language's parser table and compiled definition query,
// made on first use: nothing of tree-sitter runs at program start.
type grammar struct {
	once    sync.Once
	lang    *sitter.Language
	query   *sitter.Query
	kinds   []string // capture index → kind, "" for @name
	nameCap uint32
	err     error
}

var grammars [numLangs]grammar

func languageOf(l Lang) *sitter.Language {
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

func loadGrammar(l Lang) (*grammar, error) {
	if !l.parsed() {
		return nil, fmt.Errorf("repomap: %s is not parsed", l)
	}
	g := &grammars[l]
	g.once.Do(func() {
		g.lang = languageOf(l)
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

// parseTimeoutMicros bounds the parse of one file: a pathological input
// is indexed for references only.
const parseTimeoutMicros = 3_000_000

// extractor parses files of any language; one per goroutine. It keeps a
// parser per language: switching one parser's language for every file of
// a mixed repository costs more than the parse of a small file.
type extractor struct {
	parsers [numLangs]*sitter.Parser
	cursor  *sitter.QueryCursor
}

func newExtractor() *extractor {
	return &extractor{cursor: sitter.NewQueryCursor()}
}

func (e *extractor) parser(l Lang, g *grammar) *sitter.Parser {
	if e.parsers[l] == nil {
		p := sitter.NewParser()
		p.SetOperationLimit(parseTimeoutMicros)
		p.SetLanguage(g.lang)
		e.parsers[l] = p
	}
	return e.parsers[l]
}

func (e *extractor) close() {
	e.cursor.Close()
	for _, p := range e.parsers {
		if p != nil {
			p.Close()
		}
	}
}

// errParseLimit marks a file whose parse took too long.
var errParseLimit = errors.New("parse took too long")

// definitions parses src and returns its definitions in source order: a
// Go file with go/parser (goDefinitions) unless it has a syntax error,
// everything else with tree-sitter.
func (e *extractor) definitions(ctx context.Context, l Lang, src []byte) ([]Def, error) {
	if l == LangGo {
		if defs, ok := goDefinitions(src); ok {
			return defs, nil
		}
	}
	defs, _, err := e.treeDefinitions(ctx, l, src)
	return defs, err
}

// treeDefinitions finds the definitions of src with tree-sitter; clean
// reports a tree without syntax errors.
func (e *extractor) treeDefinitions(ctx context.Context, l Lang, src []byte) (defs []Def, clean bool, err error) {
	g, err := loadGrammar(l)
	if err != nil {
		return nil, false, err
	}
	parser := e.parser(l, g)
	tree, err := parser.ParseCtx(ctx, nil, src)
	if err != nil {
		parser.Reset()
		if errors.Is(err, sitter.ErrOperationLimit) {
			return nil, false, errParseLimit
		}
		return nil, false, err
	}
	defer tree.Close()
	root := tree.RootNode()
	clean = !root.HasError()
	e.cursor.Exec(g.query, root)
	seen := map[uint32]bool{} // one definition per name position
	for {
		m, ok := e.cursor.NextMatch()
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
		if local(l, kind, def) {
			continue
		}
		n := name.Content(src)
		if !isIdent(n) {
			continue
		}
		defs = append(defs, Def{
			Name: n,
			Kind: kind,
			Line: int(name.StartPoint().Row) + 1,
			Sig:  signature(l, kind, def, src),
		})
	}
	sortDefs(defs)
	return defs, clean, nil
}

// functionNodes are the node types whose bodies hold local definitions.
var functionNodes = map[string]bool{
	"function_definition": true, "function_declaration": true, "function_expression": true,
	"arrow_function": true, "method_definition": true, "generator_function_declaration": true,
	"function_item": true, "func_literal": true, "method_declaration": true,
	"constructor_declaration": true, "lambda_expression": true, "generator_function": true,
}

// local reports whether a definition sits inside a function body (a
// closure or local helper), which the map leaves out.
func local(l Lang, kind string, def *sitter.Node) bool {
	for p, depth := def.Parent(), 0; p != nil && depth < 64; p, depth = p.Parent(), depth+1 {
		if functionNodes[p.Type()] {
			return true
		}
	}
	return false
}

// signature is the definition's head on one line (signatureText).
func signature(l Lang, kind string, def *sitter.Node, src []byte) string {
	body := -1
	if b := def.ChildByFieldName("body"); b != nil {
		body = int(b.StartByte())
	}
	return signatureText(l, kind, src, int(def.StartByte()), int(def.EndByte()), body)
}
