package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/orchdev/orch/internal/fuzztest"
	"github.com/orchdev/orch/internal/hostile"
)

// The shared hostile corpus (internal/hostile) through the command
// provider's output decoding, the script provider's file decoding and
// CompleteJSON's answer checks.

// TestHostileCommandStdout: every "command" and "any" document, printed by
// a real command, is refused as a protocol error naming the command and
// the problem; the decoder alone says the same. Nothing is written.
func TestHostileCommandStdout(t *testing.T) {
	parent := t.TempDir()
	before, err := hostile.Snapshot(parent)
	if err != nil {
		t.Fatal(err)
	}
	docs := hostile.JSONGroup("command")
	for name, data := range hostile.JSONGroup("any") {
		docs[name] = data
	}
	dir := t.TempDir()
	for _, name := range hostile.Names(docs) {
		data := docs[name]
		_, derr := decodeCommandResponse(data, CommandProtocolV1)
		if derr == nil {
			t.Errorf("%s: decodeCommandResponse accepted it", name)
			continue
		}
		if strings.HasPrefix(name, "json/command/") && !hostile.Matches(name, derr.Error()) {
			t.Errorf("%s: %q\nwant one of %q", name, derr, hostile.Expect(name))
		}
		out := filepath.Join(dir, "stdout")
		if err := os.WriteFile(out, data, 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := New(Config{Type: TypeCommand, Name: "local", Command: []string{"cat", out}}, env())
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.Complete(context.Background(), basicRequest())
		var pe *ProtocolError
		if !errors.As(err, &pe) {
			t.Errorf("%s: Complete = %v, want a *ProtocolError", name, err)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, "command cat printed no valid response") || !strings.Contains(msg, derr.Error()) {
			t.Errorf("%s: message %q does not say what is wrong", name, msg)
		}
	}
	after, err := hostile.Snapshot(parent)
	if err != nil {
		t.Fatal(err)
	}
	if ch := hostile.Changes(before, after); len(ch) > 0 {
		t.Errorf("the command provider wrote:\n%s", strings.Join(ch, "\n"))
	}
}

// TestHostileModelAnswers: the planner and codegen answers whose problem
// is in the JSON text itself (keys repeated, in any case; lone surrogate
// escapes) are refused by CompleteJSON's checks whatever the schema, with
// the JSON path; the others parse and are left to the agent's validation.
func TestHostileModelAnswers(t *testing.T) {
	docs := hostile.JSONGroup("answer-plan")
	for name, data := range hostile.JSONGroup("answer-codegen") {
		docs[name] = data
	}
	refused := 0
	for _, name := range hostile.Names(docs) {
		data := docs[name]
		_, err := checkJSON(string(data), decodeInto[any])
		textual := false
		for _, f := range hostile.Expect(name) {
			textual = textual || f == "duplicate" || f == "surrogate" || strings.HasPrefix(f, "duplicate key")
		}
		switch {
		case textual && err == nil:
			t.Errorf("%s: accepted", name)
		case textual && !hostile.Matches(name, err.Error()):
			t.Errorf("%s: %q\nwant one of %q", name, err, hostile.Expect(name))
		case textual && !strings.Contains(err.Error(), "$"):
			t.Errorf("%s: %q does not name the JSON path", name, err)
		}
		if err != nil {
			refused++
		}
	}
	if refused < 8 {
		t.Errorf("only %d answers refused by CompleteJSON's checks", refused)
	}
}

// TestHostileScriptFiles: a script file that is not UTF-8 is refused when
// the provider is built; answers it replays are left alone (a script may
// replay a hostile answer: CompleteJSON checks it), and so are "json"
// answers with repeated keys or lone surrogates, byte for byte.
func TestHostileScriptFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "script.json")
	if err := os.WriteFile(path, []byte("{\"responses\":[{\"role\":\"codegen\",\"json\":{\"path\":\"\xc0\xae\xc0\xae/x\"}}]}"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := New(Config{Type: TypeScript, Name: "s", ScriptFile: path}, env())
	var ce *ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "byte 48 (0xc0) is not valid UTF-8") {
		t.Errorf("invalid UTF-8: %v", err)
	}
	entries, err := decodeScript([]byte(`{"responses":[{"role":"codegen","json":{"path":"a.go","PATH":"../x","c":"\ud800"}}]}`))
	if err != nil || len(entries) != 1 || entries[0].Text != `{"path":"a.go","PATH":"../x","c":"\ud800"}` {
		t.Errorf("a hostile answer was not replayed as written: %+v, %v", entries, err)
	}
	for _, name := range hostile.Names(hostile.JSONGroup("any")) {
		if _, err := decodeScript(hostile.JSONDocs()[name]); err == nil {
			t.Errorf("%s: accepted as a script", name)
		}
	}
}

func TestCheckJSONText(t *testing.T) {
	cases := []struct {
		in, want string
	}{
		{`{"a":1,"b":[{"c":"\ud83d\ude00"}],"d":{"e":null}}`, ""},
		{`[1,"x",{"a":{}}]`, ""},
		{`"\\ud800"`, ""},
		{`{"a":1,"a":2}`, `$.a: duplicate key "a"`},
		{`{"files":[{"path":"a","PATH":"b"}]}`, `$.files[0].PATH: duplicate key "PATH" (same as "path" ignoring case)`},
		// encoding/json folds case as bytes.EqualFold does: the long s
		// and the Kelvin sign match "s" and "k" (found by FuzzCheckJSONText).
		{`{"deletes":[],"delete\u017f":["a.go"]}`, `$["deleteſ"]: duplicate key "deleteſ" (same as "deletes" ignoring case)`},
		{"{\"\u212aind\":1,\"kind\":2}", "$.kind: duplicate key \"kind\" (same as \"\u212aind\" ignoring case)"},
		{`{"straße":1,"STRASSE":2}`, ""}, // not equal to encoding/json: no full folding
		{`{"x":[0,{"k":"\udc00"}]}`, `$.x[1].k: the escape \udc00 is a lone UTF-16 surrogate`},
		{`{"\ud800":1}`, `$: the escape \ud800 is a lone`},
		{"{\"a\":\"\xff\"}", `byte 6 (0xff) is not valid UTF-8`},
		{`{"odd key":{"a":1,"a":1}}`, `$["odd key"].a: duplicate key "a"`},
		{`{"a":`, `$.a: unexpected end of the JSON text`},
	}
	for _, tc := range cases {
		err := checkJSONText([]byte(tc.in))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("checkJSONText(%s) = %v", tc.in, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("checkJSONText(%s) = %v, want %q", tc.in, err, tc.want)
		}
	}
}

func FuzzCheckJSONText(f *testing.F) {
	for _, s := range []string{`{"a":1,"A":2}`, `{"a":"\ud800"}`, `[{"b":[{"c":{}}]}]`, "\"\xff\"", `{"a":{"a":{"a":1}}}`, `{"s":1,"\u017f":2}`, `{"x":[{"k":1,"\u212a":2}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := checkJSONText(data)
		if err == nil && !utf8.Valid(data) {
			t.Errorf("accepted invalid UTF-8: %q", data)
		}
		if err == nil {
			if a, b, dup := equalFoldKeys(data); dup {
				t.Errorf("accepted %q: keys %q and %q of one object match the same struct field", data, a, b)
			}
		}
	})
}

// equalFoldKeys reports two keys of one object of the JSON text data that
// encoding/json would take for the same struct field (bytes.EqualFold).
func equalFoldKeys(data []byte) (a, b string, dup bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		object  bool
		wantKey bool
		keys    []string
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", "", false
		}
		if len(stack) > 0 && stack[len(stack)-1].object && stack[len(stack)-1].wantKey {
			if k, ok := tok.(string); ok {
				top := &stack[len(stack)-1]
				for _, prev := range top.keys {
					if strings.EqualFold(prev, k) {
						return prev, k, true
					}
				}
				top.keys, top.wantKey = append(top.keys, k), false
				continue
			}
		}
		if d, ok := tok.(json.Delim); ok && (d == '{' || d == '[') {
			stack = append(stack, frame{object: d == '{', wantKey: d == '{'})
			continue
		} else if ok {
			stack = stack[:len(stack)-1]
		}
		if len(stack) == 0 {
			return "", "", false
		}
		stack[len(stack)-1].wantKey = stack[len(stack)-1].object
	}
}

// FuzzScriptState feeds arbitrary script state files (.orch/cache, which
// a person may edit or a crash may tear) to the persistent script
// provider: a bad file is refused with its path, a good one gives a
// cursor-safe state, and taking an answer never panics.
func FuzzScriptState(f *testing.F) {
	for _, s := range []string{
		`{"version":1,"cursors":{"planner":1}}`,
		`{"version":1,"cursors":{"planner":-5,"codegen":99999999999}}`,
		`{"version":2}`,
		`{"version":1,"cursors":null}`,
		`{"version":1,"cursors":{"a":1.5}}`,
		`{"version":1,"cursors":{"a":1},"cursors":{"a":2}}`,
		"", "null", "\xff",
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	p := &scriptProvider{name: "s", file: "script.json", entries: []scriptEntry{{Role: "planner", Text: "a"}, {Role: "codegen", Text: "b"}}}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "state.json")
		fuzztest.Write(t, path, data) // in place: os.WriteFile's flush on close cost most of the time
		st, err := readScriptState(path)
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name the file", err)
			}
			return
		}
		if st.Version != scriptStateVersion || st.Cursors == nil {
			t.Fatalf("accepted state %+v", st)
		}
		for _, role := range []string{"planner", "codegen", "plan_reviewer:risk"} {
			_, _ = p.take(st.Cursors, role)
		}
	})
}
