package board

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/task"
)

// The timeline says each kind of event in words, with what matters.
func TestTimeline(t *testing.T) {
	num := func(s string) json.Number { return json.Number(s) }
	for _, tc := range []struct {
		kind   string
		data   map[string]any
		text   string
		detail []string
		class  string
	}{
		{"transition", map[string]any{"from": "review", "to": "test", "label": "review passes", "reason": "code review ok"}, "review → test", []string{"review passes", "code review ok"}, "transition"},
		{"override", map[string]any{"from": "codegen", "to": "test", "reason": "hotfix", "skipped_phases": []any{"review"}}, "override codegen → test", []string{"reason: hotfix", "skipped [review]"}, "override"},
		{"redo", map[string]any{"from": "done", "to": "accept", "reason": "again", "archived": "history/3-accept"}, "redo done → accept", []string{"again", "archived in history/3-accept"}, "redo"},
		{"model_call", map[string]any{"role": "codegen", "provider": "openai", "model": "gpt-x", "tokens_in": num("1200"), "tokens_out": num("40"), "latency_ms": num("900"), "cost_usd": num("0.0123"), "tool_calls": []any{"read_file"}}, "codegen: openai gpt-x", []string{"1200 in / 40 out tokens", "900 ms", "$0.01", "tools [read_file]"}, "model_call"},
		{"model_call", map[string]any{"role": "planner", "provider": "p", "model": "m", "error": "timeout"}, "planner: p m", []string{"error: timeout"}, "model_call bad"},
		{"phase_finished", map[string]any{"phase": "test", "status": "failed", "error": "suite crashed"}, "test finished: failed", []string{"suite crashed"}, "phase_finished bad"},
		{"phase_finished", map[string]any{"phase": "test", "status": "passed", "summary": map[string]any{"overall_pass": true, "summary": map[string]any{"passed": num("3")}}}, "test finished: passed", []string{"3 passed, 0 failed, 0 skipped"}, "phase_finished"},
		{"phase_finished", map[string]any{"phase": "test", "status": "failed", "summary": map[string]any{"status": "completed", "overall_pass": false, "sandbox": "bwrap", "base": "dbc5b321117bec018e29",
			"summary": map[string]any{"passed": num("2"), "failed": num("1")}}}, "test finished: failed", []string{"2 passed, 1 failed, 0 skipped · sandbox bwrap · base dbc5b321117b"}, "phase_finished bad"},
		{"phase_finished", map[string]any{"phase": "planning", "status": "clarifying", "summary": map[string]any{"status": "clarifying", "round": num("1"), "files": num("0"), "open_questions": []any{"q1"}}},
			"planning finished: clarifying", []string{"round 1 · open questions: q1 · 0 file(s)"}, "phase_finished"},
		{"phase_finished", map[string]any{"phase": "plan_review", "status": "approved", "summary": map[string]any{"ok": true, "blocked": false, "reviewers": num("5"), "plan_sha256": "ba58c5dd8f2fed84ad91e3"}},
			"plan_review finished: approved", []string{"ok · 5 reviewer(s) · plan ba58c5dd8f2f"}, "phase_finished"},
		{"phase_finished", map[string]any{"phase": "review", "status": "changes_requested", "summary": map[string]any{"ok": false, "issues": num("4"), "blocking": num("1"), "reviewers": num("4")}},
			"review finished: changes_requested", []string{"not ok · 4 reviewer(s) · 4 issue(s) · 1 blocking"}, "phase_finished"},
		{"phase_finished", map[string]any{"phase": "codegen", "status": "completed", "summary": map[string]any{"attempt": num("2"), "files": num("2"), "deletes": num("0"), "base": "03a4df625fe0b82b6872"}},
			"codegen finished: completed", []string{"attempt 2 · 2 file(s) · base 03a4df625fe0"}, "phase_finished"},
		{"phase_finished", map[string]any{"phase": "accept", "status": "decided", "summary": map[string]any{"verdict": "accepted", "commit": "dbc5b321117bec018e29", "decider": map[string]any{"kind": "human", "name": "demo"},
			"judged": map[string]any{"revision": num("27"), "sha256": map[string]any{"diff_sha256": "ab"}}}},
			"accept finished: decided", []string{"verdict accepted by human demo · commit dbc5b321117b · judged revision 27"}, "phase_finished"},
		{"phase_finished", map[string]any{"phase": "revert", "status": "reverted", "summary": map[string]any{"status": "reverted", "reverted_commit": "6054bd02e58484c18508", "revert_commit": "6e28eb260bfa0be56251"}},
			"revert finished: reverted", []string{"reverted 6054bd02e584 · in 6e28eb260bfa"}, "phase_finished"},
		{"user_input", map[string]any{"question": "q1", "answer": "runes"}, "answered q1", []string{"runes"}, "user_input"},
		{"git_done", map[string]any{"op": "accept", "outcome": "committed", "commit": "abc123"}, "git accept: committed", []string{"abc123"}, "git_done"},
		// The status word is not said twice.
		{"phase_finished", map[string]any{"phase": "review", "status": "ok", "summary": map[string]any{"ok": true, "issues": num("0"), "reviewers": num("4")}},
			"review finished: ok", []string{"4 reviewer(s) · 0 issue(s)"}, "phase_finished"},
	} {
		t.Run(tc.kind+" "+tc.text, func(t *testing.T) {
			e := timeline([]task.Event{{Seq: 4, Kind: eventKind(tc.kind), Data: tc.data}})[0]
			if e.Text != tc.text || e.Class != tc.class || e.Seq != 4 {
				t.Errorf("got %q (%s), want %q (%s)", e.Text, e.Class, tc.text, tc.class)
			}
			for _, d := range tc.detail {
				if !strings.Contains(e.Detail, d) {
					t.Errorf("detail %q lacks %q", e.Detail, d)
				}
			}
		})
	}
}

func eventKind(k string) event.Kind { return event.Kind(k) }

// Every field a phase reports has words on the timeline: a summary with
// all of them set shows none as name=value (the fallback for a field this
// list does not know yet).
func TestSummaryTextKnowsEveryField(t *testing.T) {
	yes, n := true, 1
	s := &event.PhaseSummary{Status: "x", Round: &n, OpenQuestions: []string{"q1"}, RestoredAnswers: []string{"q2"}, Files: &n,
		OK: &yes, Reviewers: &n, Blocked: &yes, PlanSHA256: "ab", Issues: &n, Blocking: &n,
		Base: "cd", Deletes: &n, Unplanned: []string{"x.go"}, Attempt: &n,
		OverallPass: &yes, Tests: &artifact.Summary{Passed: 1}, Sandbox: "bwrap",
		Verdict: "accepted", Target: "codegen", Commit: "ef", Regression: &yes, Decider: &artifact.Decider{Kind: "human"},
		Judged: &event.Judged{Revision: 3}, RevertedCommit: "01", RevertCommit: "23"}
	if have, all := len(s.Fields()), reflect.TypeFor[event.PhaseSummary]().NumField(); have != all {
		t.Fatalf("the summary sets %d of the %d fields: set every field of event.PhaseSummary here", have, all)
	}
	if got := summaryText(s); strings.Contains(got, "=") {
		t.Errorf("a field without words: %s", got)
	}
}
