package tools

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/llm"
)

// modelFacing is what the models read of each tool's parameters, as it
// was written by hand before the schemas were derived from the parameter
// types: the derivation must keep every name, type, requirement and
// description, and must not make the definitions longer (they are sent
// with every turn of a tool loop).
var modelFacing = map[string]string{
	ListFiles:  `{"type":"object","properties":{"path":{"type":"string","description":"a folder to list, relative to the repository root; empty for all"},"pattern":{"type":"string","description":"a glob matched against the path, or the file name when it has no '/', e.g. *.go"}},"additionalProperties":false}`,
	ReadFile:   `{"type":"object","properties":{"path":{"type":"string"},"offset":{"type":"integer","description":"first line, 1-based"},"limit":{"type":"integer","description":"number of lines (default 2000)"}},"required":["path"],"additionalProperties":false}`,
	Search:     `{"type":"object","properties":{"pattern":{"type":"string","description":"a regular expression"},"path":{"type":"string","description":"a folder or file to search in"},"glob":{"type":"string","description":"only files whose path or name matches this glob"}},"required":["pattern"],"additionalProperties":false}`,
	EditFile:   `{"type":"object","properties":{"path":{"type":"string"},"old_string":{"type":"string"},"new_string":{"type":"string"},"replace_all":{"type":"boolean"}},"required":["path","old_string","new_string"],"additionalProperties":false}`,
	WriteFile:  `{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"],"additionalProperties":false}`,
	DeleteFile: `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`,
	RunTests:   `{"type":"object","properties":{},"additionalProperties":false}`,
}

// TestSchemasDerivedFromTypes: every tool's schema is the one derived from
// its parameter type, and it says to the model what the hand-written
// schema said, in no more bytes.
func TestSchemasDerivedFromTypes(t *testing.T) {
	if len(specs) != len(modelFacing) {
		t.Fatalf("%d tools, %d model-facing schemas", len(specs), len(modelFacing))
	}
	for name, s := range specs {
		derived, err := llm.SchemaFor(s.params)
		if err != nil {
			t.Fatal(err)
		}
		def := definitions()[name]
		if string(def.Parameters) != string(derived) || def.Name != name || def.Description != s.description {
			t.Errorf("%s: the definition %+v is not the one derived from %T (%s)", name, def, s.params, derived)
		}
		var got, want any
		if err := json.Unmarshal(derived, &got); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(modelFacing[name]), &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the derived schema\n%s\nsays something else than\n%s", name, derived, modelFacing[name])
		}
		if len(derived) > len(modelFacing[name]) {
			t.Errorf("%s: the derived schema is %d bytes, the hand-written one %d", name, len(derived), len(modelFacing[name]))
		}
	}
}

// Each tool's arguments decode into its own type, strictly: another
// tool's parameter is unknown, a wrong type is named, a required
// parameter is asked for.
func TestArgumentsDecodeStrictly(t *testing.T) {
	for _, tc := range []struct {
		tool, args, want string
	}{
		{ReadFile, `{"path":"a.go","content":"x"}`, `unknown parameter "content"`},
		{ListFiles, `{"path":"a","glob":"*.go"}`, `unknown parameter "glob"`},
		{RunTests, `{"suite":"unit"}`, `unknown parameter "suite"`},
		{ReadFile, `{"path":"a.go","offset":"3"}`, `parameter "offset" must be a JSON int, got a string`},
		{EditFile, `{"path":"a.go","old_string":"x","new_string":"y","replace_all":"yes"}`, `parameter "replace_all" must be a JSON bool, got a string`},
		{ReadFile, `{}`, "path is required"},
		{EditFile, `{"path":"a.go"}`, "old_string and new_string are required"},
		{EditFile, `{"new_string":""}`, "path and old_string are required"},
		{WriteFile, `{"path":"a.go"}`, "content is required"},
		{DeleteFile, `null`, "path is required"},
	} {
		var dst any
		switch tc.tool {
		case ReadFile:
			dst = &ReadFileArgs{}
		case ListFiles:
			dst = &ListFilesArgs{}
		case RunTests:
			dst = &RunTestsArgs{}
		case EditFile:
			dst = &EditFileArgs{}
		case WriteFile:
			dst = &WriteFileArgs{}
		case DeleteFile:
			dst = &DeleteFileArgs{}
		}
		got := decodeArgs(tc.tool, json.RawMessage(tc.args), dst)
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s %s: %q, want %q", tc.tool, tc.args, got, tc.want)
		}
	}
	var a EditFileArgs
	if p := decodeArgs(EditFile, json.RawMessage(`{"path":"a.go","old_string":"","new_string":"x","replace_all":true}`), &a); p != "" || a != (EditFileArgs{Path: "a.go", NewString: "x", ReplaceAll: true}) {
		t.Errorf("a valid edit: %q, %+v", p, a)
	}
}
