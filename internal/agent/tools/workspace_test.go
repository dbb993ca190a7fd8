package tools

import (
	"context"
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
