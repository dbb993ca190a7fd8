package llm

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

type schemaInner struct {
	Path   string `json:"path" desc:"repository-relative path"`
	Intent string `json:"intent" enum:"create,update,delete"`
}

type schemaBase struct {
	ID      string `json:"id"`
	Shadow  string `json:"shadowed"`
	private int
}

type schemaOuter struct {
	schemaBase
	Title     string            `json:"title"`
	Shadowed  int               `json:"shadowed"`
	Count     int64             `json:"count,omitempty"`
	Ratio     float64           `json:"ratio,omitzero"`
	Done      bool              `json:"done"`
	Files     []schemaInner     `json:"files"`
	Fixed     [2]uint8          `json:"fixed"`
	Blob      []byte            `json:"blob,omitempty"`
	Answer    *string           `json:"answer"`
	Level     *string           `json:"level" enum:"low,high"`
	Nested    *schemaInner      `json:"nested,omitempty"`
	Labels    map[string]string `json:"labels,omitempty"`
	Raw       json.RawMessage   `json:"raw,omitempty"`
	Any       any               `json:"any"`
	When      time.Time         `json:"when"`
	Skipped   string            `json:"-"`
	Untagged  string
	Dash      string `json:"-,"`
	unexposed string
}

func TestSchemaFor(t *testing.T) {
	got, err := SchemaFor(&schemaOuter{})
	if err != nil {
		t.Fatal(err)
	}
	inner := `{"type": "object", "additionalProperties": false, "required": ["path", "intent"], "properties": {
		"path": {"type": "string", "description": "repository-relative path"},
		"intent": {"type": "string", "enum": ["create", "update", "delete"]}}}`
	jsonEqual(t, json.RawMessage(got), `{
		"type": "object",
		"additionalProperties": false,
		"required": ["title", "shadowed", "done", "files", "fixed", "answer", "level", "any", "when", "Untagged", "-", "id"],
		"properties": {
			"id": {"type": "string"},
			"title": {"type": "string"},
			"shadowed": {"type": "integer"},
			"count": {"type": "integer"},
			"ratio": {"type": "number"},
			"done": {"type": "boolean"},
			"files": {"type": "array", "items": `+inner+`},
			"fixed": {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2},
			"blob": {"type": "string", "contentEncoding": "base64"},
			"answer": {"type": ["string", "null"]},
			"level": {"type": ["string", "null"], "enum": ["low", "high", null]},
			"nested": {"type": ["object", "null"], "additionalProperties": false, "required": ["path", "intent"], "properties": {
				"path": {"type": "string", "description": "repository-relative path"},
				"intent": {"type": "string", "enum": ["create", "update", "delete"]}}},
			"labels": {"type": "object", "additionalProperties": {"type": "string"}},
			"raw": {},
			"any": {},
			"when": {"type": "string", "format": "date-time"},
			"Untagged": {"type": "string"},
			"-": {"type": "string"}
		}
	}`)
}

func TestSchemaForValueAndPointerAgree(t *testing.T) {
	a, err := SchemaFor(schemaInner{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := SchemaFor((*schemaInner)(nil))
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Errorf("value %s, pointer %s", a, b)
	}
}

type recursive struct {
	Children []recursive `json:"children"`
}

func TestSchemaForRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    any
		want string
	}{
		{"nil", nil, "no type"},
		{"recursive", recursive{}, "recursive"},
		{"channel", struct {
			C chan int `json:"c"`
		}{}, "field C"},
		{"func", func() {}, "no JSON schema"},
		{"bool map key", map[bool]string{}, "map key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := SchemaFor(tc.v)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestStrictCompatible(t *testing.T) {
	type closed struct {
		A string   `json:"a"`
		B []string `json:"b"`
		C *struct {
			D int `json:"d"`
		} `json:"c"`
	}
	type optional struct {
		A string `json:"a,omitempty"`
	}
	type anything struct {
		A json.RawMessage `json:"a"`
	}
	type mapped struct {
		A map[string]int `json:"a"`
	}
	for _, tc := range []struct {
		name string
		v    any
		want bool
	}{
		{"closed and required", closed{}, true},
		{"plan answer", planAnswer{}, true},
		{"optional field", optional{}, false},
		{"unconstrained value", anything{}, false},
		{"map", mapped{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := SchemaFor(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			schema, err := objectSchema("test", raw)
			if err != nil {
				t.Fatal(err)
			}
			if got := strictCompatible(schema); got != tc.want {
				t.Errorf("strictCompatible(%s) = %t, want %t", raw, got, tc.want)
			}
		})
	}
}

func TestSchemaName(t *testing.T) {
	for in, want := range map[string]string{
		"plan":                   "plan",
		"":                       "answer",
		"code review!":           "code_review_",
		"plan_reviewer:risk":     "plan_reviewer_risk",
		strings.Repeat("x", 100): strings.Repeat("x", 64),
		"über":                   "_ber",
		"a-b_c":                  "a-b_c",
	} {
		if got := schemaName(in); got != want {
			t.Errorf("schemaName(%q) = %q, want %q", in, got, want)
		}
	}
}
