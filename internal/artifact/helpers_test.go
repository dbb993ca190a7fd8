package artifact

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// deleteField marks a field to remove in a mutation.
type deleteField struct{}

// mutation changes a generic JSON document.
type mutation func(t *testing.T, doc map[string]any)

// set returns a mutation that sets (or, with deleteField{}, removes) the
// value at a dotted path such as "questions.2.blocking".
func set(path string, v any) mutation {
	return func(t *testing.T, doc map[string]any) {
		t.Helper()
		parts := strings.Split(path, ".")
		var cur any = doc
		for i, part := range parts {
			last := i == len(parts)-1
			switch c := cur.(type) {
			case map[string]any:
				if last {
					if _, del := v.(deleteField); del {
						delete(c, part)
					} else {
						c[part] = v
					}
					return
				}
				cur = c[part]
			case []any:
				idx, err := strconv.Atoi(part)
				if err != nil || idx >= len(c) {
					t.Fatalf("bad mutation path %q", path)
				}
				if last {
					c[idx] = v
					return
				}
				cur = c[idx]
			default:
				t.Fatalf("bad mutation path %q at %q", path, part)
			}
		}
	}
}

// del removes the field at path.
func del(path string) mutation { return set(path, deleteField{}) }

// mutate applies mutations to a copy of base and returns the JSON.
func mutate(t *testing.T, base string, muts ...mutation) []byte {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(base), &doc); err != nil {
		t.Fatalf("base document: %v", err)
	}
	for _, m := range muts {
		m(t, doc)
	}
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// decodeCase is one row of a decoder table: either a mutation of the
// decoder's valid base document or raw bytes.
type decodeCase struct {
	name   string
	muts   []mutation
	raw    string // used instead of muts when set
	want   string // substring of the error; "" means valid
	wantIs error  // sentinel the error must match (default ErrSchema)
}

// runDecodeTable runs cases against one decoder.
func runDecodeTable[T any](t *testing.T, file, base string, decode func(string, []byte) (T, error), cases []decodeCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte(tc.raw)
			if tc.raw == "" {
				data = mutate(t, base, tc.muts...)
			}
			_, err := decode(file, data)
			checkDecodeErr(t, file, err, tc.want, tc.wantIs)
		})
	}
}

func checkDecodeErr(t *testing.T, file string, err error, want string, wantIs error) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("no error, want %q", want)
	}
	var ae *Error
	if !errors.As(err, &ae) {
		t.Fatalf("error %T is not an *Error: %v", err, err)
	}
	if ae.File != file {
		t.Errorf("File = %q, want %q", ae.File, file)
	}
	if !strings.HasPrefix(err.Error(), file+": ") {
		t.Errorf("message %q does not start with the file name", err.Error())
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("message\n  %s\nwant it to contain\n  %s", err.Error(), want)
	}
	if wantIs == nil {
		wantIs = ErrSchema
	}
	if !errors.Is(err, wantIs) {
		t.Errorf("errors.Is(%v, %v) = false", err, wantIs)
	}
}

// genericCases are the document-level rules every decoder shares. base
// must be a valid document of that decoder.
func genericCases(base string) []decodeCase {
	body := strings.TrimSpace(base)
	inner := strings.TrimPrefix(body, "{") // `"a": ..., ...}`
	withField := func(field string) string { return "{" + field + "," + inner }
	nested := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	return []decodeCase{
		{name: "unknown extra fields accepted", raw: withField(`"zz_extra": {"deep": [1, 2.5, null, "x", {"k": true}]}, "ZZ": 1`)},
		{name: "leading and trailing white space accepted", raw: " \n\t" + body + "\r\n\n"},
		{name: "array at top", raw: "[" + body + "]", want: "$: expected a JSON object, got an array", wantIs: ErrInvalidJSON},
		{name: "string at top", raw: `"x"`, want: "$: expected a JSON object, got a string", wantIs: ErrInvalidJSON},
		{name: "null at top", raw: `null`, want: "$: expected a JSON object, got null", wantIs: ErrInvalidJSON},
		{name: "empty file", raw: " \n", want: "$: expected a JSON object, got an empty file", wantIs: ErrInvalidJSON},
		{name: "duplicate top-level key", raw: withField(`"dup": 1, "dup": 2`), want: `$: expected unique object keys, got "dup" twice`, wantIs: ErrInvalidJSON},
		{name: "duplicate key through escapes", raw: withField(`"dup": 1, "d\u0075p": 2`), want: `"dup" twice`, wantIs: ErrInvalidJSON},
		{name: "duplicate nested key", raw: withField(`"x": [{"a": 1}, {"b": {"c": 1, "c": 2}}]`), want: `$.x[1].b: expected unique object keys, got "c" twice`, wantIs: ErrInvalidJSON},
		{name: "depth 64 accepted", raw: withField(`"deep": ` + nested(MaxDepth-1))},
		{name: "depth 65 refused", raw: withField(`"deep": ` + nested(MaxDepth)), want: "expected at most 64 levels of nested objects and arrays, got deeper nesting", wantIs: ErrInvalidJSON},
		{name: "trailing object", raw: body + " {}", want: "$: expected a single JSON value, got trailing data at line", wantIs: ErrInvalidJSON},
		{name: "trailing garbage", raw: body + "\nx", want: fmt.Sprintf("got trailing data at line %d, column 1", strings.Count(body, "\n")+2), wantIs: ErrInvalidJSON},
		{name: "invalid UTF-8", raw: withField("\"bad\": \"\xff\""), want: "$: expected valid UTF-8, got the invalid byte 0xff at line 1, column 10", wantIs: ErrInvalidJSON},
		{name: "syntax error", raw: "{\n\"a\": 1\n\"b\": 2}", want: "expected valid JSON, got invalid character '\"' after object key:value pair at line 3, column 1", wantIs: ErrInvalidJSON},
		{name: "truncated", raw: body[:len(body)-1], want: "expected valid JSON", wantIs: ErrInvalidJSON},
		{name: "byte order mark", raw: "\ufeff" + body, want: "expected valid JSON", wantIs: ErrInvalidJSON},
	}
}
