// The part of tree-sitter's C API (api.h of the github.com/smacker/go-tree-sitter
// version in go.mod) the definition walker calls, and the walker itself
// (parse_cgo.c). The runtime and the grammars are compiled into the Go
// packages of that module, which parse_cgo.go imports; these declarations
// must stay equal to its api.h (TestTreeSitterDeclarations compares them).

#ifndef ORCH_REPOMAP_PARSE_H
#define ORCH_REPOMAP_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint16_t TSSymbol;
typedef uint16_t TSFieldId;
typedef struct TSLanguage TSLanguage;
typedef struct TSParser TSParser;
typedef struct TSTree TSTree;

typedef struct TSPoint {
  uint32_t row;
  uint32_t column;
} TSPoint;

typedef struct TSNode {
  uint32_t context[4];
  const void *id;
  const TSTree *tree;
} TSNode;

typedef struct TSTreeCursor {
  const void *tree;
  const void *id;
  uint32_t context[3];
} TSTreeCursor;

TSParser *ts_parser_new(void);
void ts_parser_delete(TSParser *self);
bool ts_parser_set_language(TSParser *self, const TSLanguage *language);
void ts_parser_set_timeout_micros(TSParser *self, uint64_t timeout_micros);
void ts_parser_set_cancellation_flag(TSParser *self, const size_t *flag);
void ts_parser_reset(TSParser *self);
TSNode ts_tree_root_node(const TSTree *self);
void ts_tree_delete(TSTree *self);
bool ts_node_has_error(TSNode self);
TSSymbol ts_node_symbol(TSNode self);
uint32_t ts_node_start_byte(TSNode self);
uint32_t ts_node_end_byte(TSNode self);
TSPoint ts_node_start_point(TSNode self);
TSNode ts_node_child_by_field_id(TSNode self, TSFieldId field_id);
bool ts_node_is_null(TSNode self);
TSTreeCursor ts_tree_cursor_new(TSNode node);
void ts_tree_cursor_delete(TSTreeCursor *self);
TSNode ts_tree_cursor_current_node(const TSTreeCursor *self);
TSFieldId ts_tree_cursor_current_field_id(const TSTreeCursor *self);
bool ts_tree_cursor_goto_parent(TSTreeCursor *self);
bool ts_tree_cursor_goto_next_sibling(TSTreeCursor *self);
bool ts_tree_cursor_goto_first_child(TSTreeCursor *self);
uint32_t ts_language_symbol_count(const TSLanguage *self);
const char *ts_language_symbol_name(const TSLanguage *self, TSSymbol symbol);
TSFieldId ts_language_field_id_for_name(const TSLanguage *self, const char *name, uint32_t name_length);
TSTree *ts_parser_parse_string(
  TSParser *self,
  const TSTree *old_tree,
  const char *string,
  uint32_t length
);
TSSymbol ts_language_symbol_for_name(
  const TSLanguage *self,
  const char *string,
  uint32_t length,
  bool is_named
);

// The grammars (one C function each in the grammar packages).
const TSLanguage *tree_sitter_go(void);
const TSLanguage *tree_sitter_python(void);
const TSLanguage *tree_sitter_javascript(void);
const TSLanguage *tree_sitter_typescript(void);
const TSLanguage *tree_sitter_tsx(void);
const TSLanguage *tree_sitter_rust(void);
const TSLanguage *tree_sitter_java(void);

// Symbol flags of a language table.
enum {
  ORCH_FUNC = 1,  // a function node: what is below its children is local
  ORCH_NAME = 2,  // the last step (the name) of some pattern
  ORCH_FIELD = 4, // some pattern constrains the field this node is in
};

// orch_lang is one language's compiled definition patterns (defPatterns
// in lang.go), read-only once made.
typedef struct orch_lang {
  const TSLanguage *lang;
  uint32_t nsym;
  uint8_t *flags;     // by symbol: ORCH_*
  uint16_t *pats;     // the patterns, one after another (parse_cgo.c)
  uint32_t npats;     // how many uint16 pats holds
  TSFieldId body;     // the "body" field, 0 when the grammar has none
} orch_lang;

// One definition found: the pattern's index, the name's bytes and row,
// the definition's bytes and the start of its body (UINT32_MAX: none).
enum { ORCH_REC = 7 };

typedef struct orch_level orch_level;

// orch_walker is one goroutine's parse state.
typedef struct orch_walker {
  size_t cancel;     // set to 1 to stop a parse (the parsers' cancellation flag)
  uint32_t *out;     // ORCH_REC words a definition
  size_t cap;        // definitions out holds
  orch_level *path;  // the path from the root to the current node
  size_t levels;     // levels path holds
} orch_walker;

TSParser *orch_parser_new(orch_walker *w, const TSLanguage *lang, uint64_t timeout_micros);
int64_t orch_defs(orch_walker *w, const orch_lang *L, TSParser *p, const char *src, uint32_t len, int *has_error);

#endif
