package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/gitx"
	"github.com/orchdev/orch/internal/visibility"
)

func testRepo(t *testing.T, files map[string]string) (*gitx.Repo, string) {
	t.Helper()
	dir, head := gittest.Seed(t, files)
	repo, err := gitx.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return repo, head
}

// TestWriteDecisions: each write tool call against a file plan, and
// whether it is refused (as a tool error) with the reason.
func TestWriteDecisions(t *testing.T) {
	repo, head := testRepo(t, map[string]string{"a.go": "x := 1\nx := 1\n", "old.go": "old\n", "keep.go": "k\n"})
	plan := artifact.FilePlan{Files: []artifact.FileEntry{{Path: "a.go", Intent: "update"}, {Path: "new.go", Intent: "create"}, {Path: "old.go", Intent: "delete"}}}
	ctx := context.Background()
	for _, tc := range []struct {
		name, tool, args, want string
		isErr                  bool
	}{
		{"edit once", EditFile, `{"path":"./a.go","old_string":"x := 1\nx","new_string":"y := 1\nx"}`, "1 replacement", false},
		{"edit ambiguous", EditFile, `{"path":"a.go","old_string":"x := 1","new_string":"z"}`, "occurs 2 times", true},
		{"edit all", EditFile, `{"path":"a.go","old_string":"x := 1","new_string":"z","replace_all":true}`, "2 replacements", false},
		{"edit missing", EditFile, `{"path":"a.go","old_string":"nope","new_string":"z"}`, "was not found", true},
		{"edit empty old", EditFile, `{"path":"a.go","old_string":"","new_string":"z"}`, "use write_file", true},
		{"edit a file to create", EditFile, `{"path":"new.go","old_string":"a","new_string":"b"}`, "does not exist (yet)", true},
		{"write outside plan", WriteFile, `{"path":"keep.go","content":"k2\n"}`, "outside the reviewed file plan; you may change only: a.go (update), new.go (create), old.go (delete)", true},
		{"write unsafe", WriteFile, `{"path":"../x","content":""}`, "unsafe path", true},
		{"write git", WriteFile, `{"path":".git/config","content":""}`, "unsafe path", true},
		{"write binary", WriteFile, `{"path":"new.go","content":"a\u0000b"}`, "NUL byte", true},
		{"write planned", WriteFile, `{"path":"new.go","content":"package n\n"}`, "ok: new.go written", false},
		{"delete not planned for it", DeleteFile, `{"path":"a.go"}`, "not delete", true},
		{"write a deletion", WriteFile, `{"path":"old.go","content":"x"}`, "use delete_file", true},
		{"delete planned", DeleteFile, `{"path":"old.go"}`, "ok: old.go deleted", false},
		{"delete twice", DeleteFile, `{"path":"old.go"}`, "already deleted", true},
		{"unknown argument", WriteFile, `{"path":"new.go","content":"x","mode":"755"}`, "not valid", true},
		{"run_tests without runner", RunTests, `{}`, "unknown tool", true},
	} {
		ws, err := NewWritable(repo, head, visibility.Policy{}, Options{Plan: plan})
		if err != nil {
			t.Fatal(err)
		}
		if tc.name == "delete twice" {
			ws.Call(ctx, DeleteFile, []byte(`{"path":"old.go"}`))
		}
		out, isErr, err := ws.Call(ctx, tc.tool, []byte(tc.args))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if isErr != tc.isErr || !strings.Contains(out, tc.want) {
			t.Errorf("%s: %q (error %v), want %q (error %v)", tc.name, out, isErr, tc.want, tc.isErr)
		}
	}
}

// TestReadOnlyWorkspace: no write tools, secret-looking and untracked
// files hidden, reads numbered and paged.
func TestReadOnlyWorkspace(t *testing.T) {
	repo, head := testRepo(t, map[string]string{"a.go": "1\n2\n3\n", ".env": "KEY=v\n"})
	ws := New(repo, head, visibility.Policy{})
	ctx := context.Background()
	for _, def := range ws.Definitions() {
		if def.Name != ListFiles && def.Name != ReadFile && def.Name != Search {
			t.Errorf("a read-only workspace offers %s", def.Name)
		}
	}
	out, isErr, _ := ws.Call(ctx, ReadFile, []byte(`{"path":"a.go","offset":2,"limit":1}`))
	if isErr || out != "     2\t2\n(lines 2-2 of 3; read on with offset=3)\n" {
		t.Errorf("read: %q", out)
	}
	if out, isErr, _ := ws.Call(ctx, ReadFile, []byte(`{"path":".env"}`)); !isErr || !strings.Contains(out, "looks like a secret") {
		t.Errorf(".env: %q", out)
	}
	if out, _, _ := ws.Call(ctx, ListFiles, nil); out != "a.go\n" {
		t.Errorf("list: %q", out)
	}
	if out, _, _ := ws.Call(ctx, Search, []byte(`{"pattern":"KEY|2"}`)); out != "a.go:2:2\n" {
		t.Errorf("search: %q", out)
	}
	if out, isErr, _ := ws.Call(ctx, WriteFile, []byte(`{"path":"a.go","content":""}`)); !isErr || !strings.Contains(out, "unknown tool") {
		t.Errorf("write in a read-only workspace: %q", out)
	}
}

// A large file read without a range answers its outline and a window,
// saying how to ask for more; with a range, the lines asked for.
func TestReadLargeFileOutline(t *testing.T) {
	var src strings.Builder
	src.WriteString("package big\n")
	for i := 2; i <= 1000; i++ {
		if i%100 == 0 {
			fmt.Fprintf(&src, "func F%d() {}\n", i)
		} else {
			fmt.Fprintf(&src, "// line %d\n", i)
		}
	}
	repo, head := testRepo(t, map[string]string{"big.go": src.String()})
	ws := New(repo, head, visibility.Policy{})
	ws.SetOutline(func(p string) []OutlineLine {
		if p != "big.go" {
			return nil
		}
		var out []OutlineLine
		for i := 100; i <= 1000; i += 100 {
			out = append(out, OutlineLine{Line: i, Sig: fmt.Sprintf("func F%d()", i)})
		}
		return out
	})
	out, isErr, _ := ws.Call(context.Background(), ReadFile, []byte(`{"path":"big.go"}`))
	if isErr || !strings.Contains(out, "big.go has 1000 lines") || !strings.Contains(out, "   500: func F500()") ||
		!strings.Contains(out, "    60\t// line 60\n") || strings.Contains(out, "\t// line 61\n") || !strings.Contains(out, "offset=61") || !strings.Contains(out, "offset and limit") {
		t.Errorf("read without a range:\n%s", out)
	}
	if len(out) > 4000 {
		t.Errorf("the outline answer is %d bytes", len(out))
	}
	out, _, _ = ws.Call(context.Background(), ReadFile, []byte(`{"path":"big.go","offset":495,"limit":10}`))
	if strings.Contains(out, "Outline") || !strings.Contains(out, "   500\tfunc F500() {}") {
		t.Errorf("read with a range:\n%s", out)
	}
}

// Malformed arguments get a tool error naming the JSON problem, never Go's
// "cannot unmarshal string into Go value of type tools.callArgs".
func TestMalformedArguments(t *testing.T) {
	repo, head := testRepo(t, map[string]string{"a.go": "package a\n"})
	ws := New(repo, head, visibility.Policy{})
	str := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	for _, tc := range []struct{ args, want string }{
		{str(`{"path": "a.go"`), "they end too early"},
		{str(`{"path": a.go}`), "invalid character 'a' looking for beginning of value at byte 10"},
		{str(`{"path": "a.go",}`), "at byte 17"},
		{`["a.go"]`, "a JSON array, not an object"},
		{`{"path": 3}`, `parameter "path" must be a JSON string, got a number`},
		{`{"file": "a.go"}`, `unknown parameter "file"`},
	} {
		out, isErr, err := ws.Call(context.Background(), ReadFile, json.RawMessage(tc.args))
		if err != nil || !isErr || !strings.Contains(out, tc.want) || strings.Contains(out, "Go value") {
			t.Errorf("%s: %q (%v), want %q", tc.args, out, err, tc.want)
		}
	}
}
