package repomap

import (
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

// defQueries are the tree-sitter queries that find definitions: each
// pattern captures the whole definition as @def.KIND and its name as
// @name. Written for the grammars bundled with
// github.com/smacker/go-tree-sitter; a test compiles every one.
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
