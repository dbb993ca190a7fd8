//go:build cgo

package repomap

// #include <stdlib.h>
// #include "parse_cgo.h"
import "C"

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	// The tree-sitter runtime and grammars the walker (parse_cgo.c) calls
	// are compiled into these packages.
	_ "github.com/smacker/go-tree-sitter"
	_ "github.com/smacker/go-tree-sitter/golang"
	_ "github.com/smacker/go-tree-sitter/java"
	_ "github.com/smacker/go-tree-sitter/javascript"
	_ "github.com/smacker/go-tree-sitter/python"
	_ "github.com/smacker/go-tree-sitter/rust"
	_ "github.com/smacker/go-tree-sitter/typescript/tsx"
	_ "github.com/smacker/go-tree-sitter/typescript/typescript"
)

// DefinitionsAvailable reports whether this build indexes definitions with
// tree-sitter (it needs cgo; without it the map ranks by paths, git grep
// and identifier references only).
const DefinitionsAvailable = true

// grammar is one language's parser table and compiled definition
// patterns, made on first use: nothing of tree-sitter runs at program
// start.
type grammar struct {
	once  sync.Once
	lang  *C.TSLanguage
	table *C.orch_lang // in C memory, never freed
	kinds []string     // pattern index → kind
	err   error
}

var grammars [numLangs]grammar

func languageOf(l Lang) *C.TSLanguage {
	switch l {
	case LangGo:
		return C.tree_sitter_go()
	case LangPython:
		return C.tree_sitter_python()
	case LangJavaScript:
		return C.tree_sitter_javascript()
	case LangTypeScript:
		return C.tree_sitter_typescript()
	case LangTSX:
		return C.tree_sitter_tsx()
	case LangRust:
		return C.tree_sitter_rust()
	case LangJava:
		return C.tree_sitter_java()
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
		g.table, g.kinds, g.err = compilePatterns(g.lang, defPatterns[l])
		if g.err != nil {
			g.err = fmt.Errorf("repomap: %s definition patterns: %w", l, g.err)
		}
	})
	return g, g.err
}

// compilePatterns resolves the patterns' node types and fields in the
// grammar and lays them out for the walker: per pattern its index, its
// number of steps, how many levels above the name the definition is, and
// each step's symbol and field (0: any) from the name upward.
func compilePatterns(lang *C.TSLanguage, patterns []string) (*C.orch_lang, []string, error) {
	nsym := int(C.ts_language_symbol_count(lang))
	flags := make([]byte, nsym)
	for s := 0; s < nsym; s++ {
		if slices.Contains(functionNodes, C.GoString(C.ts_language_symbol_name(lang, C.TSSymbol(s)))) {
			flags[s] |= C.ORCH_FUNC
		}
	}
	cstr := func(s string) (*C.char, C.uint32_t) {
		return (*C.char)(unsafe.Pointer(unsafe.StringData(s))), C.uint32_t(len(s))
	}
	var pats []uint16
	var kinds []string
	for i, s := range patterns {
		p, err := parsePattern(s)
		if err != nil {
			return nil, nil, err
		}
		n := len(p.steps)
		pats = append(pats, uint16(i), uint16(n), uint16(n-1-p.def))
		for k := n - 1; k >= 0; k-- {
			st := p.steps[k]
			ptr, ln := cstr(st.typ)
			sym := C.ts_language_symbol_for_name(lang, ptr, ln, true)
			if sym == 0 {
				return nil, nil, fmt.Errorf("pattern %q: no node type %q", s, st.typ)
			}
			var field C.TSFieldId
			if st.field != "" {
				ptr, ln := cstr(st.field)
				if field = C.ts_language_field_id_for_name(lang, ptr, ln); field == 0 {
					return nil, nil, fmt.Errorf("pattern %q: no field %q", s, st.field)
				}
				flags[sym] |= C.ORCH_FIELD
			}
			if k == n-1 {
				flags[sym] |= C.ORCH_NAME
			}
			pats = append(pats, uint16(sym), uint16(field))
		}
		kinds = append(kinds, p.kind)
	}
	t := (*C.orch_lang)(C.calloc(1, C.size_t(unsafe.Sizeof(C.orch_lang{}))))
	t.lang = lang
	t.nsym = C.uint32_t(nsym)
	t.flags = (*C.uint8_t)(C.CBytes(flags))
	t.pats = (*C.uint16_t)(C.CBytes(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(pats))), 2*len(pats))))
	t.npats = C.uint32_t(len(pats))
	body := "body"
	ptr, ln := cstr(body)
	t.body = C.ts_language_field_id_for_name(lang, ptr, ln)
	return t, kinds, nil
}

// parseTimeoutMicros bounds the parse of one file: a pathological input
// is indexed for references only.
const parseTimeoutMicros = 3_000_000

// extractor parses files of any language; one per goroutine. It keeps a
// parser per language: switching one parser's language for every file of
// a mixed repository costs more than the parse of a small file.
type extractor struct {
	w       *C.orch_walker // in C memory: the parsers hold its cancel flag
	parsers [numLangs]*C.TSParser

	// A parse is stopped by its context's cancellation through w.cancel;
	// gen tells a late cancellation of an earlier parse's context from
	// the current parse's.
	mu  sync.Mutex
	gen uint64
}

func newExtractor() *extractor {
	return &extractor{w: (*C.orch_walker)(C.calloc(1, C.size_t(unsafe.Sizeof(C.orch_walker{}))))}
}

func (e *extractor) close() {
	for i, p := range e.parsers {
		if p != nil {
			C.ts_parser_delete(p)
			e.parsers[i] = nil
		}
	}
	C.free(unsafe.Pointer(e.w.out))
	C.free(unsafe.Pointer(e.w.path))
	C.free(unsafe.Pointer(e.w))
	e.w = nil
}

// watch makes ctx's cancellation stop the parse that follows, until the
// returned function is called.
func (e *extractor) watch(ctx context.Context) (stop func() bool) {
	flag := (*uintptr)(unsafe.Pointer(&e.w.cancel))
	e.mu.Lock()
	e.gen++
	gen := e.gen
	atomic.StoreUintptr(flag, 0)
	e.mu.Unlock()
	return context.AfterFunc(ctx, func() {
		e.mu.Lock()
		if e.gen == gen {
			atomic.StoreUintptr(flag, 1)
		}
		e.mu.Unlock()
	})
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

// treeDefinitions finds the definitions of src with tree-sitter, in one
// parse and one walk of the tree outside function bodies (parse_cgo.c);
// clean reports a tree without syntax errors.
func (e *extractor) treeDefinitions(ctx context.Context, l Lang, src []byte) (defs []Def, clean bool, err error) {
	g, err := loadGrammar(l)
	if err != nil {
		return nil, false, err
	}
	if e.parsers[l] == nil {
		e.parsers[l] = C.orch_parser_new(e.w, g.lang, parseTimeoutMicros)
	}
	stop := e.watch(ctx)
	var empty [1]byte
	ptr := &empty[0]
	if len(src) > 0 {
		ptr = &src[0]
	}
	var hasError C.int
	n := int64(C.orch_defs(e.w, g.table, e.parsers[l], (*C.char)(unsafe.Pointer(ptr)), C.uint32_t(len(src)), &hasError))
	stop()
	switch {
	case n == -1 && ctx.Err() != nil:
		return nil, false, ctx.Err()
	case n == -1:
		return nil, false, errParseLimit
	case n < 0:
		return nil, false, errors.New("repomap: out of memory walking the syntax tree")
	}
	recs := unsafe.Slice((*uint32)(unsafe.Pointer(e.w.out)), n*C.ORCH_REC)
	last := -1 // one definition per name position
	for i := int64(0); i < n; i++ {
		r := recs[i*C.ORCH_REC : (i+1)*C.ORCH_REC]
		start, end := int(r[1]), int(r[2])
		if start == last || end > len(src) || start > end {
			continue
		}
		last = start
		name := string(src[start:end])
		if !isIdent(name) {
			continue
		}
		kind := g.kinds[r[0]]
		body := -1
		if r[6] != ^uint32(0) {
			body = int(r[6])
		}
		defs = append(defs, Def{
			Name: name,
			Kind: kind,
			Line: int(r[3]) + 1,
			Sig:  signatureText(l, kind, src, int(r[4]), int(r[5]), body),
		})
	}
	sortDefs(defs)
	return defs, hasError == 0, nil
}
