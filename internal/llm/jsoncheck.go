package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/orchdev/orch/internal/clip"
	"github.com/orchdev/orch/internal/strictjson"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// checkJSONText refuses JSON that encoding/json would decode, silently,
// into something else than what was written:
//
//   - bytes that are not UTF-8 (decoded as U+FFFD);
//   - an escape of a lone UTF-16 surrogate such as \ud800 (also U+FFFD);
//   - two keys of one object that are equal ignoring case: struct fields
//     match keys case-insensitively and the last one wins, so
//     {"path": "a.go", "PATH": "../x"} would be read as "../x". Case is
//     Unicode simple case folding, as encoding/json matches names
//     (bytes.EqualFold): "ſtatus" (long s) and "\u212aind" (Kelvin sign)
//     are "status" and "kind" to it.
//
// data must be one JSON value (the caller has checked its syntax); a
// syntax error found on the way is returned as well. Errors name the JSON
// path ($.files[0].path) of the problem.
func checkJSONText(data []byte) error {
	if err := checkUTF8(data); err != nil {
		return err
	}
	w := jsonWalker{dec: json.NewDecoder(bytes.NewReader(data)), data: data}
	w.dec.UseNumber()
	return w.walk()
}

// checkUTF8 refuses data that is not UTF-8, naming the first bad byte.
func checkUTF8(data []byte) error {
	if utf8.Valid(data) {
		return nil
	}
	off := 0
	for off < len(data) {
		r, size := utf8.DecodeRune(data[off:])
		if r == utf8.RuneError && size <= 1 {
			break
		}
		off += size
	}
	return fmt.Errorf("byte %d (0x%02x) is not valid UTF-8", off, data[off])
}

// jsonFrame is one open object or array.
type jsonFrame struct {
	object  bool
	keys    map[string]string // foldKey(key) → key as written
	wantKey bool
	key     string // the member being read
	index   int    // the element being read
}

type jsonWalker struct {
	dec   *json.Decoder
	data  []byte
	stack []jsonFrame
}

func (w *jsonWalker) walk() error {
	for {
		start := w.dec.InputOffset()
		tok, err := w.dec.Token()
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("%s: unexpected end of the JSON text", w.path())
		}
		if err != nil {
			return fmt.Errorf("%s: %w", w.path(), err)
		}
		if s, ok := tok.(string); ok {
			if esc, bad := strictjson.LoneSurrogate(w.data[start:w.dec.InputOffset()]); bad {
				return fmt.Errorf("%s: the escape %s is a lone UTF-16 surrogate (it would decode to U+FFFD)", w.path(), esc)
			}
			if top := w.top(); top != nil && top.object && top.wantKey {
				folded := foldKey(s)
				prev, dup := top.keys[folded]
				top.key, top.wantKey = s, false
				if dup {
					if prev == s {
						return fmt.Errorf("%s: duplicate key %s", w.path(), strconv.Quote(clip.Bytes(s, 64)))
					}
					return fmt.Errorf("%s: duplicate key %s (same as %s ignoring case)", w.path(), strconv.Quote(clip.Bytes(s, 64)), strconv.Quote(clip.Bytes(prev, 64)))
				}
				top.keys[folded] = s
				continue
			}
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{':
				w.stack = append(w.stack, jsonFrame{object: true, keys: map[string]string{}, wantKey: true})
				continue
			case '[':
				w.stack = append(w.stack, jsonFrame{})
				continue
			default: // '}' or ']': the container is a finished value
				w.stack = w.stack[:len(w.stack)-1]
			}
		}
		// A value ended.
		top := w.top()
		if top == nil {
			return nil // the top-level value
		}
		if top.object {
			top.wantKey = true
		} else {
			top.index++
		}
	}
}

// foldKey maps a key to one spelling of its case-folding class: two keys
// get the same one exactly when bytes.EqualFold, the rule encoding/json
// matches struct fields by, says they are equal. Each rune becomes the
// smallest of its unicode.SimpleFold orbit (K, k and U+212A KELVIN SIGN
// all become K).
func foldKey(s string) string {
	return strings.Map(func(r rune) rune {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		return least
	}, s)
}

func (w *jsonWalker) top() *jsonFrame {
	if len(w.stack) == 0 {
		return nil
	}
	return &w.stack[len(w.stack)-1]
}

// path renders where the walker is, as $.a[2].b.
func (w *jsonWalker) path() string {
	var b strings.Builder
	b.WriteString("$")
	for _, f := range w.stack {
		switch {
		case f.object && !f.wantKey:
			if isPlainKey(f.key) {
				b.WriteString("." + f.key)
			} else {
				b.WriteString("[" + strconv.Quote(clip.Bytes(f.key, 64)) + "]")
			}
		case !f.object:
			b.WriteString("[" + strconv.Itoa(f.index) + "]")
		}
	}
	return b.String()
}

func isPlainKey(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
