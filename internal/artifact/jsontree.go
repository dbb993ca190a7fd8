package artifact

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/orchdev/orch/internal/clip"
)

// kind is the JSON type of a node.
type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindObject
	kindArray
)

// node is one JSON value of a parsed document. Strings hold their decoded
// text, numbers their literal. raw is the value's exact bytes in the input.
type node struct {
	kind    kind
	boolean bool
	text    string
	fields  map[string]*node
	elems   []*node
	raw     []byte
}

// describe says what a node is, for the "got ..." half of a message.
func (n *node) describe() string {
	if n == nil {
		return "nothing (the field is missing)"
	}
	switch n.kind {
	case kindNull:
		return "null"
	case kindBool:
		return "a boolean"
	case kindNumber:
		return "a number"
	case kindString:
		return "a string"
	case kindObject:
		return "an object"
	default:
		return "an array"
	}
}

// segment is one step of a JSON path: an object key or an array index.
type segment struct {
	key   string
	index int
	isKey bool
}

// formatPath renders segments as $.a.b[3]["odd key"].
func formatPath(segs []segment) string {
	b := []byte{'$'}
	for _, s := range segs {
		b = appendSegment(b, s)
	}
	return string(b)
}

func appendSegment(b []byte, s segment) []byte {
	if !s.isKey {
		b = append(b, '[')
		b = strconv.AppendInt(b, int64(s.index), 10)
		return append(b, ']')
	}
	if isIdentifier(s.key) {
		b = append(b, '.')
		return append(b, s.key...)
	}
	b = append(b, '[')
	b = strconv.AppendQuote(b, clip.Bytes(s.key, 64))
	return append(b, ']')
}

func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// treeParser builds a node tree from JSON tokens, refusing duplicate keys,
// nesting deeper than MaxDepth and escapes of lone UTF-16 surrogates.
type treeParser struct {
	file string
	data []byte
	dec  *json.Decoder
	path []segment
}

// parseDocument parses data as exactly one JSON object. The returned error
// is an *Error wrapping ErrInvalidJSON.
func parseDocument(file string, data []byte) (*node, error) {
	if !utf8.Valid(data) {
		off := invalidUTF8Offset(data)
		line, col := lineCol(data, off)
		return nil, &Error{File: file, JSONPath: "$", Expected: "valid UTF-8",
			Got: fmt.Sprintf("the invalid byte 0x%02x at line %d, column %d", data[off], line, col),
			Err: ErrInvalidJSON}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &Error{File: file, JSONPath: "$", Expected: "a JSON object", Got: "an empty file", Err: ErrInvalidJSON}
	}
	p := &treeParser{file: file, data: data, dec: json.NewDecoder(bytes.NewReader(data))}
	p.dec.UseNumber()
	root, err := p.value(0)
	if err != nil {
		return nil, err
	}
	if root.kind != kindObject {
		return nil, &Error{File: file, JSONPath: "$", Expected: "a JSON object", Got: root.describe(), Err: ErrInvalidJSON}
	}
	off := p.dec.InputOffset()
	if _, err := p.dec.Token(); err != io.EOF {
		// Skip the whitespace the decoder has not consumed yet so the
		// position points at the trailing data itself.
		for off < int64(len(data)) && isJSONSpace(data[off]) {
			off++
		}
		line, col := lineCol(data, int(off))
		return nil, &Error{File: file, JSONPath: "$", Expected: "a single JSON value",
			Got: fmt.Sprintf("trailing data at line %d, column %d", line, col), Err: ErrInvalidJSON}
	}
	return root, nil
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func invalidUTF8Offset(data []byte) int {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return 0
}

// lineCol converts a byte offset into a 1-based line and column (in bytes).
func lineCol(data []byte, off int) (int, int) {
	if off > len(data) {
		off = len(data)
	}
	line := 1 + bytes.Count(data[:off], []byte{'\n'})
	col := off + 1
	if i := bytes.LastIndexByte(data[:off], '\n'); i >= 0 {
		col = off - i
	}
	return line, col
}

func (p *treeParser) fail(expected, got string) error {
	return &Error{File: p.file, JSONPath: formatPath(p.path), Expected: expected, Got: got, Err: ErrInvalidJSON}
}

func (p *treeParser) loneSurrogateError(esc, where string) error {
	return p.fail("valid Unicode text", "the lone UTF-16 surrogate escape "+esc+where+" (it would decode to U+FFFD)")
}

func (p *treeParser) syntaxError(err error) error {
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return p.fail("valid JSON", "the end of the file in the middle of a value")
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line, col := lineCol(p.data, int(se.Offset))
		return &Error{File: p.file, JSONPath: formatPath(p.path), Expected: "valid JSON",
			Got: fmt.Sprintf("%s at line %d, column %d", se.Error(), line, col),
			Err: fmt.Errorf("%w: %w", ErrInvalidJSON, err)}
	}
	return &Error{File: p.file, JSONPath: formatPath(p.path), Expected: "valid JSON", Got: err.Error(),
		Err: fmt.Errorf("%w: %w", ErrInvalidJSON, err)}
}

// value parses the next value; depth is the nesting of its parent.
func (p *treeParser) value(depth int) (*node, error) {
	start := p.dec.InputOffset()
	tok, err := p.dec.Token()
	if err != nil {
		return nil, p.syntaxError(err)
	}
	var n *node
	switch t := tok.(type) {
	case json.Delim:
		if depth+1 > MaxDepth {
			return nil, p.fail(fmt.Sprintf("at most %d levels of nested objects and arrays", MaxDepth), "deeper nesting")
		}
		if t == '{' {
			n, err = p.object(depth + 1)
		} else {
			n, err = p.array(depth + 1)
		}
		if err != nil {
			return nil, err
		}
	case string:
		if esc, bad := loneSurrogate(p.data[start:p.dec.InputOffset()]); bad {
			return nil, p.loneSurrogateError(esc, "")
		}
		n = &node{kind: kindString, text: t}
	case json.Number:
		n = &node{kind: kindNumber, text: string(t)}
	case bool:
		n = &node{kind: kindBool, boolean: t}
	case nil:
		n = &node{kind: kindNull}
	default:
		return nil, p.fail("valid JSON", fmt.Sprintf("an unexpected token %v", tok))
	}
	n.raw = bytes.TrimLeft(p.data[start:p.dec.InputOffset()], " \t\r\n,:")
	return n, nil
}

func (p *treeParser) object(depth int) (*node, error) {
	n := &node{kind: kindObject, fields: map[string]*node{}}
	for p.dec.More() {
		start := p.dec.InputOffset()
		tok, err := p.dec.Token()
		if err != nil {
			return nil, p.syntaxError(err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, p.fail("an object key", fmt.Sprintf("%v", tok))
		}
		if esc, bad := loneSurrogate(p.data[start:p.dec.InputOffset()]); bad {
			return nil, p.loneSurrogateError(esc, " in an object key")
		}
		if _, dup := n.fields[key]; dup {
			return nil, p.fail("unique object keys", strconv.Quote(clip.Bytes(key, 64))+" twice")
		}
		p.path = append(p.path, segment{key: key, isKey: true})
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		p.path = p.path[:len(p.path)-1]
		n.fields[key] = v
	}
	if _, err := p.dec.Token(); err != nil { // the closing '}'
		return nil, p.syntaxError(err)
	}
	return n, nil
}

func (p *treeParser) array(depth int) (*node, error) {
	n := &node{kind: kindArray}
	for i := 0; p.dec.More(); i++ {
		p.path = append(p.path, segment{index: i})
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		p.path = p.path[:len(p.path)-1]
		n.elems = append(n.elems, v)
	}
	if _, err := p.dec.Token(); err != nil { // the closing ']'
		return nil, p.syntaxError(err)
	}
	return n, nil
}
