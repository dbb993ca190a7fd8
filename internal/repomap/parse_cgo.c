//go:build cgo

// The definition walker: one parse and one walk of the syntax tree per
// file, in C, so a file costs a single cgo call and no Go allocation per
// node (README, "The repository map"). What it finds is what the
// definition patterns of lang.go say, the way a tree-sitter query with
// those patterns would find them, except that nothing below the children
// of a function node is visited: everything there is local.

#include <stdlib.h>
#include "parse_cgo.h"

TSParser *orch_parser_new(orch_walker *w, const TSLanguage *lang, uint64_t timeout_micros) {
  TSParser *p = ts_parser_new();
  ts_parser_set_language(p, lang);
  ts_parser_set_timeout_micros(p, timeout_micros);
  ts_parser_set_cancellation_flag(p, &w->cancel);
  return p;
}

// The path to the current node is kept in w->path: each level's symbol,
// field and node.
struct orch_level {
  TSSymbol sym;
  TSFieldId field;
  TSNode node;
};

static int orch_emit(orch_walker *w, size_t n, uint32_t pat, TSNode name, TSNode def, TSFieldId body) {
  if (n >= w->cap) {
    size_t cap = w->cap ? 2 * w->cap : 256;
    uint32_t *out = realloc(w->out, cap * ORCH_REC * sizeof(uint32_t));
    if (!out) return 0;
    w->out = out;
    w->cap = cap;
  }
  uint32_t *r = w->out + n * ORCH_REC;
  r[0] = pat;
  r[1] = ts_node_start_byte(name);
  r[2] = ts_node_end_byte(name);
  r[3] = ts_node_start_point(name).row;
  r[4] = ts_node_start_byte(def);
  r[5] = ts_node_end_byte(def);
  r[6] = UINT32_MAX;
  if (body) {
    TSNode b = ts_node_child_by_field_id(def, body);
    if (!ts_node_is_null(b)) r[6] = ts_node_start_byte(b);
  }
  return 1;
}

// orch_defs parses src and writes its definitions to w->out in the order
// of their names in the tree; it returns how many, -1 when the parse was
// stopped (timeout or cancellation), -2 when memory ran out.
int64_t orch_defs(orch_walker *w, const orch_lang *L, TSParser *p, const char *src, uint32_t len, int *has_error) {
  TSTree *tree = ts_parser_parse_string(p, NULL, src, len);
  if (!tree) {
    ts_parser_reset(p);
    return -1;
  }
  TSNode root = ts_tree_root_node(tree);
  *has_error = ts_node_has_error(root);
  TSTreeCursor c = ts_tree_cursor_new(root);
  uint32_t depth = 0;
  uint32_t fdepth = UINT32_MAX; // the shallowest function node on the path
  size_t n = 0;
  int64_t ret = 0;
  for (;;) {
    TSNode node = ts_tree_cursor_current_node(&c);
    TSSymbol sym = ts_node_symbol(node);
    uint8_t fl = sym < L->nsym ? L->flags[sym] : 0;
    if (depth >= w->levels) {
      size_t levels = w->levels ? 2 * w->levels : 64;
      orch_level *path = realloc(w->path, levels * sizeof(orch_level));
      if (!path) {
        ret = -2;
        goto done;
      }
      w->path = path;
      w->levels = levels;
    }
    orch_level *lv = &w->path[depth];
    lv->sym = sym;
    lv->field = (fl & ORCH_FIELD) ? ts_tree_cursor_current_field_id(&c) : 0;
    lv->node = node;
    if (fl & ORCH_NAME) {
      for (uint32_t i = 0; i < L->npats;) {
        const uint16_t *pt = L->pats + i;
        uint32_t nsteps = pt[1], up = pt[2];
        i += 3 + 2 * nsteps;
        if (pt[3] != sym || nsteps - 1 > depth) continue;
        int ok = 1;
        for (uint32_t k = 0; k < nsteps && ok; k++) {
          const orch_level *a = &w->path[depth - k];
          ok = a->sym == pt[3 + 2 * k] && (!pt[4 + 2 * k] || a->field == pt[4 + 2 * k]);
        }
        if (!ok) continue;
        if (!orch_emit(w, n, pt[0], node, w->path[depth - up].node, L->body)) {
          ret = -2;
          goto done;
        }
        n++;
      }
    }
    if ((fl & ORCH_FUNC) && fdepth == UINT32_MAX) fdepth = depth;
    // Below a function node only its children are visited (its name).
    if (fdepth >= depth && ts_tree_cursor_goto_first_child(&c)) {
      depth++;
      continue;
    }
    for (;;) {
      if (fdepth == depth) fdepth = UINT32_MAX;
      if (ts_tree_cursor_goto_next_sibling(&c)) break;
      if (!ts_tree_cursor_goto_parent(&c)) goto done;
      depth--;
    }
  }
done:
  ts_tree_cursor_delete(&c);
  ts_tree_delete(tree);
  return ret < 0 ? ret : (int64_t)n;
}
