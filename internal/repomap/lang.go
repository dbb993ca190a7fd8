package repomap

import (
	"fmt"
	"path"
	"strings"
)

// Lang identifies how a file is indexed.
type Lang uint8

// The languages whose definitions are indexed with tree-sitter, and the
// others whose identifiers are only scanned as references.
const (
	LangNone Lang = iota // not source code: path and git grep only
	LangGo
	LangPython
	LangJavaScript
	LangTypeScript
	LangTSX
	LangRust
	LangJava
	LangOther // other source code: references only
	// LangText is documentation and data (Markdown, JSON, YAML, ...):
	// its identifiers are indexed so the search for the task's
	// identifiers finds it, but it points at no definition in the
	// ranking and is no source file in the counts.
	LangText
	numLangs
)

var langNames = [numLangs]string{"", "Go", "Python", "JavaScript", "TypeScript", "TSX", "Rust", "Java", "code", "text"}

func (l Lang) String() string {
	if l < numLangs {
		return langNames[l]
	}
	return "?"
}

// langByExt maps lower-case extensions to languages.
var langByExt = map[string]Lang{
	".go":   LangGo,
	".py":   LangPython,
	".pyi":  LangPython,
	".js":   LangJavaScript,
	".mjs":  LangJavaScript,
	".cjs":  LangJavaScript,
	".jsx":  LangJavaScript,
	".ts":   LangTypeScript,
	".mts":  LangTypeScript,
	".cts":  LangTypeScript,
	".tsx":  LangTSX,
	".rs":   LangRust,
	".java": LangJava,
	// References only.
	".c": LangOther, ".h": LangOther, ".cc": LangOther, ".cpp": LangOther, ".cxx": LangOther,
	".hpp": LangOther, ".hh": LangOther, ".cs": LangOther, ".rb": LangOther, ".php": LangOther,
	".kt": LangOther, ".kts": LangOther, ".swift": LangOther, ".scala": LangOther, ".m": LangOther,
	".mm": LangOther, ".lua": LangOther, ".ex": LangOther, ".exs": LangOther, ".sh": LangOther,
	".bash": LangOther, ".zig": LangOther, ".dart": LangOther, ".groovy": LangOther, ".vue": LangOther,
	".svelte": LangOther, ".proto": LangOther, ".sql": LangOther,
	// Text.
	".md": LangText, ".markdown": LangText, ".txt": LangText, ".rst": LangText, ".adoc": LangText,
	".json": LangText, ".yaml": LangText, ".yml": LangText, ".toml": LangText, ".ini": LangText,
	".cfg": LangText, ".conf": LangText, ".xml": LangText, ".html": LangText, ".htm": LangText,
	".css": LangText, ".scss": LangText, ".properties": LangText, ".gradle": LangText, ".tf": LangText,
}

// LangOf returns the language of a repository path by its extension.
func LangOf(p string) Lang {
	ext := strings.ToLower(path.Ext(p))
	if l, ok := langByExt[ext]; ok {
		if strings.HasSuffix(strings.ToLower(p), ".d.ts") {
			return LangTypeScript
		}
		return l
	}
	return LangNone
}

// parsed reports whether tree-sitter indexes the language's definitions.
func (l Lang) parsed() bool { return l >= LangGo && l <= LangJava }

// source reports source code (the files the stats count as indexed).
func (l Lang) source() bool { return l >= LangGo && l <= LangOther }

// Definition kinds, as written in the map.
const (
	KindFunc      = "func"
	KindMethod    = "method"
	KindType      = "type"
	KindClass     = "class"
	KindInterface = "interface"
	KindField     = "field"
	KindConst     = "const"
	KindVar       = "var"
	KindModule    = "module"
	KindMacro     = "macro"
)

// defPatterns say where the definitions are, per language: each pattern
// is a path of syntax tree nodes, "KIND: type > field:type > ...", from
// its outermost node down to the name, a child of the one before (through
// the named field, when one is given); the node marked * is the whole
// definition, whose head is the signature. The walker (parse_cgo.c)
// visits every node outside function bodies (functionNodes) once and
// keeps the names that end a pattern. The node types are those of the
// grammars bundled with github.com/smacker/go-tree-sitter; a test checks
// every one exists, and others that the walker finds what tree-sitter
// queries of the same patterns find.
var defPatterns = [numLangs][]string{
	LangGo: {
		"func: function_declaration* > name:identifier",
		"method: method_declaration* > name:field_identifier",
		"type: type_spec* > name:type_identifier",
		"type: type_alias* > name:type_identifier",
		// Every name of a spec (with name: only its first would match).
		"const: source_file > const_declaration > const_spec* > identifier",
		"var: source_file > var_declaration > var_spec* > name:identifier",
		"var: source_file > var_declaration > var_spec_list > var_spec* > name:identifier",
		"field: field_declaration* > name:field_identifier",
		"method: method_elem* > name:field_identifier",
	},
	LangPython: {
		"func: function_definition* > name:identifier",
		"class: class_definition* > name:identifier",
		"var: module > expression_statement > assignment* > left:identifier",
		"field: class_definition > body:block > expression_statement > assignment* > left:identifier",
	},
	LangJavaScript: append(jsPatterns[:len(jsPatterns):len(jsPatterns)],
		"class: class_declaration* > name:identifier",
	),
	LangTypeScript: append(jsPatterns[:len(jsPatterns):len(jsPatterns)], tsPatterns...),
	LangTSX:        append(jsPatterns[:len(jsPatterns):len(jsPatterns)], tsPatterns...),
	LangRust: {
		"func: function_item* > name:identifier",
		"func: function_signature_item* > name:identifier",
		"type: struct_item* > name:type_identifier",
		"type: enum_item* > name:type_identifier",
		"type: union_item* > name:type_identifier",
		"type: type_item* > name:type_identifier",
		"interface: trait_item* > name:type_identifier",
		"const: const_item* > name:identifier",
		"var: static_item* > name:identifier",
		"module: mod_item* > name:identifier",
		"macro: macro_definition* > name:identifier",
		"field: field_declaration* > name:field_identifier",
		"const: enum_variant* > name:identifier",
	},
	LangJava: {
		"class: class_declaration* > name:identifier",
		"interface: interface_declaration* > name:identifier",
		"type: enum_declaration* > name:identifier",
		"class: record_declaration* > name:identifier",
		"interface: annotation_type_declaration* > name:identifier",
		"method: method_declaration* > name:identifier",
		"method: constructor_declaration* > name:identifier",
		"field: field_declaration* > declarator:variable_declarator > name:identifier",
		"const: constant_declaration* > declarator:variable_declarator > name:identifier",
		"const: enum_constant* > name:identifier",
	},
}

// jsPatterns are shared by JavaScript and TypeScript: functions, methods
// and top-level (or exported) bindings.
var jsPatterns = []string{
	"func: function_declaration* > name:identifier",
	"func: generator_function_declaration* > name:identifier",
	"method: method_definition* > name:property_identifier",
	"var: program > lexical_declaration* > variable_declarator > name:identifier",
	"var: program > variable_declaration* > variable_declarator > name:identifier",
	"var: export_statement > lexical_declaration* > variable_declarator > name:identifier",
	"var: program > expression_statement > assignment_expression* > left:member_expression > property:property_identifier",
}

// tsPatterns add TypeScript's declarations.
var tsPatterns = []string{
	"class: class_declaration* > name:type_identifier",
	"class: abstract_class_declaration* > name:type_identifier",
	"interface: interface_declaration* > name:type_identifier",
	"type: type_alias_declaration* > name:type_identifier",
	"type: enum_declaration* > name:identifier",
	"func: function_signature* > name:identifier",
	"method: method_signature* > name:property_identifier",
	"method: abstract_method_signature* > name:property_identifier",
	"field: public_field_definition* > name:property_identifier",
	"field: property_signature* > name:property_identifier",
	"module: internal_module* > name:identifier",
}

// functionNodes are the node types whose bodies hold local definitions:
// a definition below one (a closure, a local helper or class) is left
// out of the map.
var functionNodes = []string{
	"function_definition", "function_declaration", "function_expression",
	"arrow_function", "method_definition", "generator_function_declaration",
	"function_item", "func_literal", "method_declaration",
	"constructor_declaration", "lambda_expression", "generator_function",
}

// patStep is one node of a definition pattern.
type patStep struct {
	field, typ string // field "" = any
}

// defPattern is a parsed definition pattern.
type defPattern struct {
	kind  string
	steps []patStep // outermost first; the last is the name
	def   int       // index of the definition's node in steps
}

// parsePattern reads "KIND: type > field:type* > ...".
func parsePattern(s string) (defPattern, error) {
	kind, path, ok := strings.Cut(s, ": ")
	if !ok {
		return defPattern{}, fmt.Errorf("pattern %q: want \"KIND: path\"", s)
	}
	if _, ok := kindIndex(kind); !ok {
		return defPattern{}, fmt.Errorf("pattern %q: unknown kind %q", s, kind)
	}
	p := defPattern{kind: kind, def: -1}
	for i, st := range strings.Split(path, " > ") {
		if t, ok := strings.CutSuffix(st, "*"); ok {
			if p.def >= 0 {
				return defPattern{}, fmt.Errorf("pattern %q: two definition nodes", s)
			}
			p.def, st = i, t
		}
		field, typ, ok := strings.Cut(st, ":")
		if !ok {
			field, typ = "", st
		}
		if typ == "" || strings.ContainsAny(typ, " :*>") {
			return defPattern{}, fmt.Errorf("pattern %q: step %q is no node type", s, st)
		}
		p.steps = append(p.steps, patStep{field: field, typ: typ})
	}
	switch {
	case p.def < 0:
		return defPattern{}, fmt.Errorf("pattern %q: no definition node (*)", s)
	case p.def == len(p.steps)-1:
		return defPattern{}, fmt.Errorf("pattern %q: the name is the definition", s)
	}
	return p, nil
}
