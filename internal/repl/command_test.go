package repl

import (
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	none := lineContext{Project: true}
	planning := lineContext{Project: true, Task: "0007-add-retry", Phase: "planning"}
	asking := lineContext{Project: true, Task: "0007-add-retry", Phase: "planning", Open: "q2"}
	review := lineContext{Project: true, Task: "0007-add-retry", Phase: "review"}
	tests := []struct {
		name string
		line string
		c    lineContext
		kind actionKind
		args []string
		show string
		id   string
		hint string // a substring of the hint
	}{
		{name: "empty", line: "   ", c: planning, kind: actNone},
		{name: "plan", line: "/plan", c: planning, kind: actRun, args: []string{"plan"}, show: "planning/plan.md"},
		{name: "plan flags", line: "/plan --fresh", c: planning, kind: actRun, args: []string{"plan", "--fresh"}, show: "planning/plan.md"},
		{name: "review plan", line: "/review plan", c: planning, kind: actRun, args: []string{"review", "plan"}, show: "review/plan-review.md"},
		{name: "review code", line: "/review code --json", c: review, kind: actRun, args: []string{"review", "code", "--json"}, show: "review/code-review.md"},
		{name: "bare review in review", line: "/review", c: review, kind: actRun, args: []string{"review", "code"}, show: "review/code-review.md"},
		{name: "bare review in planning", line: "/review --fresh", c: planning, kind: actRun, args: []string{"review", "plan", "--fresh"}, show: "review/plan-review.md"},
		{name: "bare review in test", line: "/review", c: lineContext{Project: true, Task: "t", Phase: "test"}, kind: actHint, hint: "/review plan | /review code"},
		{name: "review what", line: "/review tests", c: review, kind: actHint, hint: "usage"},
		{name: "codegen", line: "/codegen", c: review, kind: actRun, args: []string{"codegen"}},
		{name: "test", line: "/test --sandbox none", c: review, kind: actRun, args: []string{"test", "--sandbox", "none"}},
		{name: "accept", line: `/accept --verdict accepted --reason "tests pass"`, c: review, kind: actRun, args: []string{"accept", "--verdict", "accepted", "--reason", "tests pass"}},
		{name: "revert", line: "/revert --reason 'broke prod'", c: review, kind: actRun, args: []string{"revert", "--reason", "broke prod"}},
		{name: "next", line: "/next", c: review, kind: actRun, args: []string{"next"}},
		{name: "next override", line: `/next --override "I accept the risk of skipping review" --to test`, c: review, kind: actRun, args: []string{"next", "--override", "I accept the risk of skipping review", "--to", "test"}},
		{name: "next bad quote", line: `/next --override "oops`, c: review, kind: actHint, hint: "unterminated quote"},
		{name: "redo", line: "/redo", c: review, kind: actRun, args: []string{"redo"}},
		{name: "redo phase", line: "/redo codegen --reason 'try again'", c: review, kind: actRun, args: []string{"redo", "codegen", "--reason", "try again"}},
		{name: "status", line: "  /status  ", c: review, kind: actRun, args: []string{"status"}},
		{name: "log", line: "/log", c: review, kind: actRun, args: []string{"log"}},
		{name: "cost", line: "/cost", c: review, kind: actRun, args: []string{"cost"}},
		{name: "diff", line: "/diff", c: review, kind: actRun, args: []string{"diff"}},
		{name: "show", line: "/show code-review", c: review, kind: actRun, args: []string{"show", "code-review"}},
		{name: "answer", line: "/answer q1 don't retry on 4xx", c: asking, kind: actRun, args: []string{"answer", "--", "q1", "don't retry on 4xx"}},
		{name: "answer quoted", line: `/answer q1 "five attempts"`, c: asking, kind: actRun, args: []string{"answer", "--", "q1", "five attempts"}},
		{name: "answer dash text", line: "/answer q1 --verbose is the flag", c: asking, kind: actRun, args: []string{"answer", "--", "q1", "--verbose is the flag"}},
		{name: "answer without text", line: "/answer q1", c: asking, kind: actHint, hint: "usage: /answer ID TEXT"},
		{name: "answer stdin", line: "/answer q1 -", c: asking, kind: actHint, hint: "usage"},
		{name: "task new", line: "/task new add retry with backoff", c: review, kind: actRun, args: []string{"new", "--", "add retry with backoff"}},
		{name: "task new blank", line: "/task new   ", c: review, kind: actHint, hint: "usage: /task new BRIEF"},
		{name: "task switch", line: "/task switch 0003-fix-login", c: review, kind: actSwitch, id: "0003-fix-login"},
		{name: "task switch two ids", line: "/task switch a b", c: review, kind: actHint, hint: "usage: /task switch ID"},
		{name: "task list", line: "/task list", c: review, kind: actRun, args: []string{"list"}},
		{name: "task", line: "/task", c: review, kind: actRun, args: []string{"list"}},
		{name: "task other", line: "/task delete x", c: review, kind: actHint, hint: "usage"},
		{name: "help", line: "/help", c: review, kind: actHelp},
		{name: "quit", line: "/quit", c: review, kind: actQuit},
		{name: "exit", line: "/exit", c: review, kind: actQuit},
		{name: "unknown", line: "/frobnicate", c: review, kind: actHint, hint: "unknown command /frobnicate: /help lists the commands"},
		{name: "unknown prefix", line: "/re", c: review, kind: actHint, hint: "did you mean /redo or /revert or /review?"},
		{name: "plain answers the open question", line: "five attempts, then give up", c: asking, kind: actRun, args: []string{"answer", "--", "q2", "five attempts, then give up"}},
		{name: "plain starts a task", line: "add retry with backoff", c: none, kind: actRun, args: []string{"new", "--", "add retry with backoff"}},
		{name: "plain with dashes starts a task", line: "--verbose flag for the CLI", c: none, kind: actRun, args: []string{"new", "--", "--verbose flag for the CLI"}},
		{name: "plain dash", line: "-", c: none, kind: actHint, hint: "type the text itself"},
		{name: "plain without project", line: "add retry", c: lineContext{}, kind: actHint, hint: "/init creates one"},
		{name: "plain while planning without question", line: "hello", c: planning, kind: actHint, hint: "task 0007-add-retry is in planning with no open question"},
		{name: "plain in review", line: "looks good", c: review, kind: actHint, hint: "Commands: /accept /advise /answer"},
		{name: "plain with question but not planning", line: "x", c: lineContext{Project: true, Task: "t", Phase: "codegen", Open: "q1"}, kind: actHint, hint: "in codegen"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := parse(tt.line, tt.c)
			if a.kind != tt.kind {
				t.Fatalf("parse(%q) kind = %d (%+v), want %d", tt.line, a.kind, a, tt.kind)
			}
			if !slices.Equal(a.args, tt.args) {
				t.Errorf("args = %q, want %q", a.args, tt.args)
			}
			if a.show != tt.show || a.id != tt.id {
				t.Errorf("show, id = %q, %q; want %q, %q", a.show, a.id, tt.show, tt.id)
			}
			if !strings.Contains(a.msg, tt.hint) || (tt.hint == "") != (a.msg == "") {
				t.Errorf("hint = %q, want it to contain %q", a.msg, tt.hint)
			}
			if strings.Contains(a.msg, "\n") {
				t.Errorf("hint is not one line: %q", a.msg)
			}
		})
	}
}

// Every slash command is either handled by parse or reported unknown, and
// the help mentions each one.
func TestCommandsDocumented(t *testing.T) {
	help := helpText()
	for _, name := range commandNames() {
		if !strings.Contains(help, name) {
			t.Errorf("/help does not mention %s", name)
		}
		a := parse(name, lineContext{Project: true, Task: "t", Phase: "review"})
		if a.kind == actHint && strings.Contains(a.msg, "unknown command") {
			t.Errorf("%s is listed but parse calls it unknown", name)
		}
	}
}

// FuzzParse: no line makes parse panic, hints are one line, and runs never
// start with a flag (which cobra would read as the command).
func FuzzParse(f *testing.F) {
	for _, s := range []string{"/next --override \"x\" --to test", "hello", "/answer q1 x", "/task switch", "/review", "/", "/task new '", "\x00/plan"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		for _, c := range []lineContext{{}, {Project: true}, {Project: true, Task: "t", Phase: "planning", Open: "q1"}, {Project: true, Task: "t", Phase: "review"}} {
			a := parse(line, c)
			if a.kind == actRun && (len(a.args) == 0 || strings.HasPrefix(a.args[0], "-")) {
				t.Fatalf("parse(%q) runs %q", line, a.args)
			}
			if a.kind == actHint && strings.Contains(a.msg, "\n") {
				t.Fatalf("parse(%q) hint has several lines: %q", line, a.msg)
			}
		}
	})
}

// TestPhaseCommandsFromRegistry: every phase worker's one-word command is a
// slash command; the two reviews go through /review.
func TestPhaseCommandsFromRegistry(t *testing.T) {
	got := passThrough()
	for _, want := range []string{"/plan", "/codegen", "/test", "/accept", "/revert"} {
		if !slices.Contains(got, want) {
			t.Errorf("%s is not a slash command: %v", want, got)
		}
	}
	if slices.Contains(got, "/review plan") || slices.Contains(got, "/review code") {
		t.Errorf("a two-word command passed through: %v", got)
	}
}
