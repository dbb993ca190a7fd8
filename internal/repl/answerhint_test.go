package repl

import (
	"regexp"
	"slices"
	"testing"

	"github.com/orchdev/orch/internal/agent/planner"
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/termtext"
)

// TestAnswerHintsAgree: everything the REPL shows about answering a
// planner's question spells /answer as the REPL parses it: the question's
// id, then the text as it is, the rest of the line (no quotes needed) —
// "/answer ID TEXT", or "/answer q1 TEXT" for a named question. The plan
// rendered in the REPL once said `/answer q1 "…"` while /help said
// "/answer ID TEXT".
func TestAnswerHintsAgree(t *testing.T) {
	plan := planner.RenderMarkdown(artifact.Plan{ID: "t", Title: "Retry", Brief: "add retry",
		Questions: []artifact.Question{{ID: "q1", Text: "How many attempts?", Blocking: true}}})
	asking := lineContext{Project: true, Task: "t", Phase: "planning", Open: "q1"}
	shown := map[string]string{
		"/help":                 helpText(),
		"the usage hint":        parse("/answer q1", asking).msg,
		"the banner":            waitingLine("t", artifact.Question{ID: "q1", Text: "How many attempts?"}),
		"planning/plan.md":      termtext.Markdown(plan, termtext.Style{Slash: true}),
		"planning/plan.md, tty": termtext.Markdown(plan, termtext.Style{Slash: true, Terminal: true, Width: 200}),
	}
	spelled := regexp.MustCompile("/answer[^\n`)]*")
	want := regexp.MustCompile(`^/answer (ID|q1) TEXT\b`)
	for where, text := range shown {
		forms := spelled.FindAllString(text, -1)
		if len(forms) == 0 {
			t.Errorf("%s does not say how to answer:\n%s", where, text)
		}
		for _, f := range forms {
			if !want.MatchString(f) {
				t.Errorf("%s spells %q, want \"/answer ID TEXT\" (or q1 for ID)", where, f)
			}
		}
	}
	// What the hints say is what parse reads: the id, then the words.
	for line, args := range map[string][]string{
		"/answer q1 TEXT":                    {"answer", "--", "q1", "TEXT"},
		"/answer q1 five attempts, then 30s": {"answer", "--", "q1", "five attempts, then 30s"},
		`/answer q1 "five attempts"`:         {"answer", "--", "q1", "five attempts"},
	} {
		if a := parse(line, asking); a.kind != actRun || !slices.Equal(a.args, args) {
			t.Errorf("parse(%q) = %+v, want to run %q", line, a, args)
		}
	}
}
