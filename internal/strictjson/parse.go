// Package strictjson parses untrusted JSON documents into a tree and
// refuses what lenient decoders let through: a top level that is not an
// object, duplicate keys at any level, nesting beyond a bound, invalid
// UTF-8, escapes of lone UTF-16 surrogates (decoders silently turn them
// into U+FFFD) and trailing data. Every refusal names the JSON path
// ($.questions[2].id) and what was expected.
package strictjson

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

// ErrInvalid: the bytes are not one well-formed JSON object (syntax,
// invalid UTF-8, duplicate keys, nesting, trailing data).
var ErrInvalid = errors.New("invalid JSON")

// Error says why a document was refused: where (a JSON path), what was
// expected and what was found. Err is ErrInvalid, possibly wrapping the
// decoder's error.
type Error struct {
	JSONPath string
	Expected string
	Got      string
	Err      error
}

func (e *Error) Error() string {
	return e.JSONPath + ": expected " + e.Expected + ", got " + e.Got
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// Kind is the JSON type of a node.
type Kind uint8

// The JSON types.
const (
	Null Kind = iota
	Bool
	Number
	String
	Object
	Array
)

// Node is one JSON value of a parsed document. Strings hold their decoded
// text, numbers their literal. Raw is the value's exact bytes in the input.
type Node struct {
	Kind    Kind
	Boolean bool
	Text    string
	Fields  map[string]*Node
	Elems   []*Node
	Raw     []byte
}

// Describe says what a node is, for the "got ..." half of a message.
func (n *Node) Describe() string {
	if n == nil {
		return "nothing (the field is missing)"
	}
	switch n.Kind {
	case Null:
		return "null"
	case Bool:
		return "a boolean"
	case Number:
		return "a number"
	case String:
		return "a string"
	case Object:
		return "an object"
	default:
		return "an array"
	}
}

// Segment is one step of a JSON path: an object key or an array index.
type Segment struct {
	Key   string
	Index int
	IsKey bool
}

// FormatPath renders segments as $.a.b[3]["odd key"].
func FormatPath(segs []Segment) string {
	b := []byte{'$'}
	for _, s := range segs {
		b = appendSegment(b, s)
	}
	return string(b)
}

func appendSegment(b []byte, s Segment) []byte {
	if !s.IsKey {
		b = append(b, '[')
		b = strconv.AppendInt(b, int64(s.Index), 10)
		return append(b, ']')
	}
	if isIdentifier(s.Key) {
		b = append(b, '.')
		return append(b, s.Key...)
	}
	b = append(b, '[')
	b = strconv.AppendQuote(b, clip.Bytes(s.Key, 64))
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
// nesting deeper than maxDepth and escapes of lone UTF-16 surrogates.
type treeParser struct {
	data     []byte
	dec      *json.Decoder
	path     []Segment
	maxDepth int
}

// Parse parses data as exactly one JSON object nested at most maxDepth
// levels deep. The returned error is an *Error wrapping ErrInvalid.
func Parse(data []byte, maxDepth int) (*Node, error) {
	if !utf8.Valid(data) {
		off := invalidUTF8Offset(data)
		line, col := lineCol(data, off)
		return nil, &Error{JSONPath: "$", Expected: "valid UTF-8",
			Got: fmt.Sprintf("the invalid byte 0x%02x at line %d, column %d", data[off], line, col),
			Err: ErrInvalid}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &Error{JSONPath: "$", Expected: "a JSON object", Got: "an empty file", Err: ErrInvalid}
	}
	p := &treeParser{data: data, dec: json.NewDecoder(bytes.NewReader(data)), maxDepth: maxDepth}
	p.dec.UseNumber()
	root, err := p.value(0)
	if err != nil {
		return nil, err
	}
	if root.Kind != Object {
		return nil, &Error{JSONPath: "$", Expected: "a JSON object", Got: root.Describe(), Err: ErrInvalid}
	}
	off := p.dec.InputOffset()
	if _, err := p.dec.Token(); err != io.EOF {
		// Skip the whitespace the decoder has not consumed yet so the
		// position points at the trailing data itself.
		for off < int64(len(data)) && isJSONSpace(data[off]) {
			off++
		}
		line, col := lineCol(data, int(off))
		return nil, &Error{JSONPath: "$", Expected: "a single JSON value",
			Got: fmt.Sprintf("trailing data at line %d, column %d", line, col), Err: ErrInvalid}
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
	return &Error{JSONPath: FormatPath(p.path), Expected: expected, Got: got, Err: ErrInvalid}
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
		return &Error{JSONPath: FormatPath(p.path), Expected: "valid JSON",
			Got: fmt.Sprintf("%s at line %d, column %d", se.Error(), line, col),
			Err: fmt.Errorf("%w: %w", ErrInvalid, err)}
	}
	return &Error{JSONPath: FormatPath(p.path), Expected: "valid JSON", Got: err.Error(),
		Err: fmt.Errorf("%w: %w", ErrInvalid, err)}
}

// value parses the next value; depth is the nesting of its parent.
func (p *treeParser) value(depth int) (*Node, error) {
	start := p.dec.InputOffset()
	tok, err := p.dec.Token()
	if err != nil {
		return nil, p.syntaxError(err)
	}
	var n *Node
	switch t := tok.(type) {
	case json.Delim:
		if depth+1 > p.maxDepth {
			return nil, p.fail(fmt.Sprintf("at most %d levels of nested objects and arrays", p.maxDepth), "deeper nesting")
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
		if esc, bad := LoneSurrogate(p.data[start:p.dec.InputOffset()]); bad {
			return nil, p.loneSurrogateError(esc, "")
		}
		n = &Node{Kind: String, Text: t}
	case json.Number:
		n = &Node{Kind: Number, Text: string(t)}
	case bool:
		n = &Node{Kind: Bool, Boolean: t}
	case nil:
		n = &Node{Kind: Null}
	default:
		return nil, p.fail("valid JSON", fmt.Sprintf("an unexpected token %v", tok))
	}
	n.Raw = bytes.TrimLeft(p.data[start:p.dec.InputOffset()], " \t\r\n,:")
	return n, nil
}

func (p *treeParser) object(depth int) (*Node, error) {
	n := &Node{Kind: Object, Fields: map[string]*Node{}}
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
		if esc, bad := LoneSurrogate(p.data[start:p.dec.InputOffset()]); bad {
			return nil, p.loneSurrogateError(esc, " in an object key")
		}
		if _, dup := n.Fields[key]; dup {
			return nil, p.fail("unique object keys", strconv.Quote(clip.Bytes(key, 64))+" twice")
		}
		p.path = append(p.path, Segment{Key: key, IsKey: true})
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		p.path = p.path[:len(p.path)-1]
		n.Fields[key] = v
	}
	if _, err := p.dec.Token(); err != nil { // the closing '}'
		return nil, p.syntaxError(err)
	}
	return n, nil
}

func (p *treeParser) array(depth int) (*Node, error) {
	n := &Node{Kind: Array}
	for i := 0; p.dec.More(); i++ {
		p.path = append(p.path, Segment{Index: i})
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		p.path = p.path[:len(p.path)-1]
		n.Elems = append(n.Elems, v)
	}
	if _, err := p.dec.Token(); err != nil { // the closing ']'
		return nil, p.syntaxError(err)
	}
	return n, nil
}
