package artifact

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/orchdev/orch/internal/clip"
	"github.com/orchdev/orch/internal/safepath"
	"github.com/orchdev/orch/internal/strictjson"
)

// val is a node together with its JSON path. n is nil when the value is
// missing.
type val struct {
	n    *strictjson.Node
	path []strictjson.Segment
}

// field returns the member key of v (missing if v is not an object).
func (v val) field(key string) val {
	p := make([]strictjson.Segment, len(v.path), len(v.path)+1)
	copy(p, v.path)
	p = append(p, strictjson.Segment{Key: key, IsKey: true})
	var n *strictjson.Node
	if v.n != nil && v.n.Kind == strictjson.Object {
		n = v.n.Fields[key]
	}
	return val{n: n, path: p}
}

func (v val) index(i int) val {
	p := make([]strictjson.Segment, len(v.path), len(v.path)+1)
	copy(p, v.path)
	p = append(p, strictjson.Segment{Index: i})
	return val{n: v.n.Elems[i], path: p}
}

// absent reports whether an optional value was left out (missing or null).
func (v val) absent() bool { return v.n == nil || v.n.Kind == strictjson.Null }

// checker walks a parsed document, remembering the first problem found.
// Every method is a no-op once an error is recorded, so decoders read as
// straight-line field lists and check c.err once at the end.
type checker struct {
	file string
	err  error
}

func (c *checker) fail(v val, expected, got string) {
	c.failErr(v, expected, got, ErrSchema)
}

func (c *checker) failErr(v val, expected, got string, err error) {
	if c.err == nil {
		c.err = &Error{File: c.file, JSONPath: strictjson.FormatPath(v.path), Expected: expected, Got: got, Err: err}
	}
}

// want reports whether v should be examined: it is false after an error and
// for an absent optional value, and records an error for an absent required
// one.
func (c *checker) want(v val, required bool, expected string) bool {
	if c.err != nil {
		return false
	}
	if v.n == nil || (v.n.Kind == strictjson.Null && !required) {
		if required {
			c.fail(v, expected, v.n.Describe())
		}
		return false
	}
	return true
}

// object checks that v is an object.
func (c *checker) object(v val, required bool) bool {
	const expected = "an object"
	if !c.want(v, required, expected) {
		return false
	}
	if v.n.Kind != strictjson.Object {
		c.fail(v, expected, v.n.Describe())
		return false
	}
	return true
}

// array checks that v is an array and returns its elements.
func (c *checker) array(v val, required bool) []val {
	const expected = "an array"
	if !c.want(v, required, expected) {
		return nil
	}
	if v.n.Kind != strictjson.Array {
		c.fail(v, expected, v.n.Describe())
		return nil
	}
	out := make([]val, len(v.n.Elems))
	for i := range v.n.Elems {
		out[i] = v.index(i)
	}
	return out
}

// str returns a string. A required string must not be blank; an optional
// one may be empty.
func (c *checker) str(v val, required bool) string {
	expected := "a string"
	if required {
		expected = "a non-empty string"
	}
	if !c.want(v, required, expected) {
		return ""
	}
	if v.n.Kind != strictjson.String {
		c.fail(v, expected, v.n.Describe())
		return ""
	}
	if required && isBlank(v.n.Text) {
		got := "an empty string"
		if v.n.Text != "" {
			got = "a blank string"
		}
		c.fail(v, expected, got)
		return ""
	}
	return v.n.Text
}

// nullableStr returns a string or nil for null or a missing value.
func (c *checker) nullableStr(v val) *string {
	if !c.want(v, false, "a string or null") {
		return nil
	}
	if v.n.Kind != strictjson.String {
		c.fail(v, "a string or null", v.n.Describe())
		return nil
	}
	s := v.n.Text
	return &s
}

func (c *checker) boolean(v val, required bool) bool {
	if !c.want(v, required, "a boolean") {
		return false
	}
	if v.n.Kind != strictjson.Bool {
		c.fail(v, "a boolean", v.n.Describe())
		return false
	}
	return v.n.Boolean
}

// enum returns a string that must be one of allowed.
func (c *checker) enum(v val, required bool, allowed ...string) string {
	quoted := make([]string, len(allowed))
	for i, a := range allowed {
		quoted[i] = strconv.Quote(a)
	}
	expected := "one of " + strings.Join(quoted, ", ")
	if !c.want(v, required, expected) {
		return ""
	}
	if v.n.Kind != strictjson.String {
		c.fail(v, expected, v.n.Describe())
		return ""
	}
	for _, a := range allowed {
		if v.n.Text == a {
			return a
		}
	}
	c.fail(v, expected, strconv.Quote(clip.Bytes(v.n.Text, 64)))
	return ""
}

// integer returns an integer literal (no fraction, no exponent) >= min.
func (c *checker) integer(v val, required bool, min int64) int {
	expected := "an integer"
	if min == 0 {
		expected = "a non-negative integer"
	}
	if !c.want(v, required, expected) {
		return 0
	}
	if v.n.Kind != strictjson.Number {
		c.fail(v, expected, v.n.Describe())
		return 0
	}
	i, err := strconv.ParseInt(v.n.Text, 10, 64)
	if err != nil || int64(int(i)) != i {
		c.fail(v, expected, clip.Bytes(v.n.Text, 64))
		return 0
	}
	if i < min {
		c.fail(v, expected, v.n.Text)
		return 0
	}
	return int(i)
}

func (c *checker) number(v val, required bool) float64 {
	if !c.want(v, required, "a number") {
		return 0
	}
	if v.n.Kind != strictjson.Number {
		c.fail(v, "a number", v.n.Describe())
		return 0
	}
	f, err := strconv.ParseFloat(v.n.Text, 64)
	if err != nil {
		c.fail(v, "a finite number", clip.Bytes(v.n.Text, 64))
		return 0
	}
	return f
}

// hexString returns a lower-cased hex string of one of the given lengths.
func (c *checker) hexString(v val, required bool, what string, lengths ...int) string {
	var ls []string
	for _, l := range lengths {
		ls = append(ls, strconv.Itoa(l))
	}
	expected := what + " (" + strings.Join(ls, " or ") + " hex digits)"
	if !c.want(v, required, expected) {
		return ""
	}
	if v.n.Kind != strictjson.String {
		c.fail(v, expected, v.n.Describe())
		return ""
	}
	s := v.n.Text
	okLen := false
	for _, l := range lengths {
		okLen = okLen || len(s) == l
	}
	if !okLen || !isHex(s) {
		c.fail(v, expected, strconv.Quote(clip.Bytes(s, 80)))
		return ""
	}
	return strings.ToLower(s)
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f', c >= 'A' && c <= 'F':
		default:
			return false
		}
	}
	return true
}

// stringArray returns an array whose elements are all strings (blank
// allowed).
func (c *checker) stringArray(v val, required bool) []string {
	elems := c.array(v, required)
	if elems == nil {
		return nil
	}
	out := make([]string, 0, len(elems))
	for _, e := range elems {
		if !c.want(e, true, "a string") {
			return nil
		}
		if e.n.Kind != strictjson.String {
			c.fail(e, "a string", e.n.Describe())
			return nil
		}
		out = append(out, e.n.Text)
	}
	return out
}

// rawArray returns the raw bytes of each element of an array.
func (c *checker) rawArray(v val, required bool) []json.RawMessage {
	elems := c.array(v, required)
	if elems == nil {
		return nil
	}
	out := make([]json.RawMessage, len(elems))
	for i, e := range elems {
		out[i] = rawCopy(e.n)
	}
	return out
}

// raw returns the raw bytes of any value (nil when absent).
func (c *checker) raw(v val) json.RawMessage {
	if c.err != nil || v.absent() {
		return nil
	}
	return rawCopy(v.n)
}

// rawObject returns the raw bytes of an optional object.
func (c *checker) rawObject(v val) json.RawMessage {
	if !c.object(v, false) {
		return nil
	}
	return rawCopy(v.n)
}

func rawCopy(n *strictjson.Node) json.RawMessage {
	return append(json.RawMessage(nil), n.Raw...)
}

// safePath returns a string that must pass CheckPath.
func (c *checker) safePath(v val) string {
	s := c.str(v, true)
	if c.err != nil {
		return ""
	}
	if err := CheckPath(s); err != nil {
		c.failErr(v, "a safe repository-relative path", safepath.Reason(err), err)
		return ""
	}
	return s
}

// isBlank reports whether s is empty or only white space.
func isBlank(s string) bool { return strings.TrimSpace(s) == "" }
