package board

import (
	"context"
	"errors"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/task"
	"github.com/orchdev/orch/internal/work"
)

// A card's "in phase" is the time since the task entered its phase (the
// transcript), not since its last change; the task page lists how long
// the task stayed in each phase.
func TestTimeInPhase(t *testing.T) {
	f := NewFixture(t)
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	clock := t0
	f.O.Now = func() time.Time { return clock }
	if _, _, err := f.P.CreateTask("d", "durations", t0); err != nil {
		t.Fatal(err)
	}
	clock = t0.Add(time.Hour)
	f.Move("d", lifecycle.PlanReview) // entered at 1h
	clock = t0.Add(3 * time.Hour)
	// A run that fails changes the task (its actor) but not its phase.
	if _, err := f.O.RunPhase(context.Background(), "d", lifecycle.PlanReview, func(context.Context, work.Input) (orchestrator.Outcome, error) {
		return orchestrator.Outcome{}, errors.New("reviewers unreachable")
	}); err == nil {
		t.Fatal("the run did not fail")
	}
	if st, _, _ := mustOpen(t, f, "d").CommittedState(); !st.UpdatedAt.Equal(t0.Add(3 * time.Hour)) {
		t.Fatalf("the run did not change the task: updated %v", st.UpdatedAt)
	}
	s, srv := f.Board(Options{Now: func() time.Time { return t0.Add(5 * time.Hour) }})
	_, board := get(t, s, srv, "/")
	if !strings.Contains(board, "age 5h · in phase 4h") {
		t.Errorf("the card does not say age 5h, in phase 4h (since entering plan_review, not the last change 2h ago): %s", between(board, `data-task="d"`, "</a>"))
	}
	_, page := get(t, s, srv, "/task/d")
	if !strings.Contains(page, `<span id="in-phase">for 4h</span>`) {
		t.Errorf("the task page's head does not say for 4h: %s", between(page, `class="sub"`, "</p>"))
	}
	stays := regexp.MustCompile(`<[^>]+>`).ReplaceAllString(between(page, `id="stays"`, "</p>"), "")
	if !strings.Contains(stays, "planning 1h → plan_review 4h (so far)") {
		t.Errorf("phase durations %q", stays)
	}
}

// A failed run: no green "started" notice above its errors, and each error
// (the lines of its message) an item of a red list.
func TestFailedRunShowsErrorsAsList(t *testing.T) {
	f := NewFixture(t)
	f.Task("e", "fails")
	s, srv := f.Board(Options{})
	// A job whose error joins four errors, as a worker's can.
	j := &Job{ID: "j4", Task: "e", Action: "review plan", Started: time.Now()}
	if !s.jobs.start(j) {
		t.Fatal("job not started")
	}
	j.finish("", errors.Join(
		exit.New(exit.ErrProvider, "architecture: the provider answered 500"),
		exit.New(exit.ErrProvider, "risk: the provider answered 500"),
		exit.New(exit.ErrProvider, "tests: the provider answered 500"),
		exit.New(exit.ErrProvider, "security: the provider answered 500")))
	_, page := get(t, s, srv, "/task/e")
	list := between(page, `<ul id="job-result" class="errors">`, "</ul>")
	if n := strings.Count(list, "<li>"); n != 4 || !strings.Contains(list, "<li>orch: architecture: the provider answered 500</li>") {
		t.Errorf("the errors are not a list of four: %q", list)
	}

	// A real run that fails (no provider configured): the page it leads
	// to, once the run ended, has no "started" notice.
	code, body, res := post(t, s, srv, "/task/e/work", url.Values{"phase": {"planning"}})
	if code != 303 {
		t.Fatalf("work: %d %s", code, body)
	}
	st := waitJob(t, s, "e")
	if st.Error == "" {
		t.Fatalf("the planner ran without a provider: %+v", st)
	}
	_, page = get(t, s, srv, res.Header.Get("Location"))
	if strings.Contains(page, "started orch plan") || strings.Contains(page, `class="flash ok"`) {
		t.Errorf("a failed run shows the green started notice: %s", between(page, `<section id="actions">`, `<div class="forms">`))
	}
	if !strings.Contains(page, `<ul id="job-result" class="errors">`) || !strings.Contains(page, "exit 8: the model provider failed (what the CLI would exit with)") ||
		!strings.Contains(page, `class="job finished failed"`) {
		t.Errorf("the failed run's errors are not shown as a list: %s", between(page, `<div id="job"`, `<div class="forms">`))
	}
	for _, l := range strings.Split(st.Error, "\n") { // st.Error is exit.Format's text
		if strings.TrimSpace(l) != "" && !strings.Contains(list+page, "<li>"+escape(l)+"</li>") {
			t.Errorf("error line %q is not an item of its own", l)
		}
	}
}

// The task page: the answer forms under Actions (not in the plan), the
// table of contents only links to sections with something in them, and
// the task list marks the task shown (aria-current); the board marks the
// project's current task.
func TestTaskPageLayout(t *testing.T) {
	f := NewFixture(t)
	f.Task("a", "greet")
	f.Plan("a", "Greet", "Shall we greet?", nil)
	f.Task("b", "the current one")
	s, srv := f.Board(Options{})
	_, page := get(t, s, srv, "/task/a")

	actions, plan := strings.Index(page, `<section id="actions">`), strings.Index(page, `<section id="plan">`)
	form := strings.Index(page, `action="/task/a/answer"`)
	if actions < 0 || plan < 0 || form < actions || form > plan {
		t.Errorf("the answer form is not under Actions (actions at %d, form at %d, plan at %d)", actions, form, plan)
	}
	if strings.Contains(page[plan:], `action="/task/a/answer"`) {
		t.Error("an answer form is still in the Plan section")
	}
	if !strings.Contains(page[plan:], `<a href="#answer-q1">answer it under Actions</a>`) {
		t.Error("the plan's question does not point to its answer form")
	}

	toc := between(page, `<nav class="toc">`, "</nav>")
	for _, want := range []string{"#lifecycle", "#actions", "#plan", "#timeline"} {
		if !strings.Contains(toc, `href="`+want+`"`) {
			t.Errorf("the contents lack %s: %s", want, toc)
		}
	}
	for _, empty := range []string{"#plan-review", "#diff", "#code-review", "#tests", "#evidence", "#history"} {
		if strings.Contains(toc, `href="`+empty+`"`) {
			t.Errorf("the contents link to the empty section %s: %s", empty, toc)
		}
	}

	nav := between(page, `<nav class="tasks" aria-label="tasks">`, "</nav>")
	if strings.Count(nav, `aria-current="page"`) != 1 || !strings.Contains(nav, `<a href="/task/a" class="here" aria-current="page">a `) {
		t.Errorf("the task list does not mark the task shown: %s", nav)
	}
	if !strings.Contains(nav, `<a href="/task/b">b <span class="phase">planning</span> <span class="tag"`) {
		t.Errorf("the task list does not mark b as the project's current task: %s", nav)
	}
	_, board := get(t, s, srv, "/")
	if !strings.Contains(board, `data-task="b" aria-current="true"`) || strings.Contains(board, `data-task="a" aria-current`) {
		t.Errorf("the board does not mark the current task b: %s", between(board, `data-task="b"`, "</a>"))
	}
}

// between is the text of s after the first start, up to the next end.
func between(s, start, end string) string {
	i := strings.Index(s, start)
	if i < 0 {
		return ""
	}
	s = s[i+len(start):]
	if j := strings.Index(s, end); j >= 0 {
		return s[:j]
	}
	return s
}

func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(s)
}

func mustOpen(t *testing.T, f *Fixture, id string) *task.Task {
	t.Helper()
	tk, err := f.P.Open(id)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// Each accept verdict recorded from the board ends where it leads (the
// table of docs/lifecycle.md), and the job's result says where.
func TestAcceptVerdictsEndWhereTheyLead(t *testing.T) {
	f := NewFixture(t)
	s, srv := f.Board(Options{})
	ts := &httptestServer{srv}
	for _, tc := range []struct {
		id      string
		form    url.Values
		to      lifecycle.Phase
		commits bool
	}{
		{"rej", url.Values{"verdict": {"rejected"}}, lifecycle.Revert, false},
		{"back", url.Values{"verdict": {"changes_requested"}, "target": {"codegen"}}, lifecycle.Codegen, false},
		{"replan", url.Values{"verdict": {"changes_requested"}, "target": {"planning"}}, lifecycle.Planning, false},
		// Last: its commit creates hello.txt, which the others' patch creates too.
		{"acc", url.Values{"verdict": {"accepted"}}, lifecycle.Done, true},
	} {
		t.Run(tc.id, func(t *testing.T) {
			f.Task(tc.id, "greet "+tc.id)
			f.ToAccept(tc.id, "Greet "+tc.id)
			head := gittest.Git(t, f.Root, "rev-parse", "HEAD")
			_, page := get(t, s, srv, "/task/"+tc.id)
			form := tc.form
			form.Set("reasons", "decided in a test")
			form.Set("revision", between(between(page, `id="form-accept"`, "</form>"), `name="revision" value="`, `"`))
			act(t, f, s, ts, "/task/"+tc.id+"/accept", form)
			st := waitJob(t, s, tc.id)
			if st.Error != "" || f.Phase(tc.id) != tc.to || !strings.Contains(st.Result, "accept → "+string(tc.to)) {
				t.Fatalf("phase %s, result %q, error %q; want %s", f.Phase(tc.id), st.Result, st.Error, tc.to)
			}
			if moved := gittest.Git(t, f.Root, "rev-parse", "HEAD") != head; moved != tc.commits {
				t.Errorf("HEAD moved: %v, want %v", moved, tc.commits)
			}
			_, page = get(t, s, srv, "/task/"+tc.id)
			if !strings.Contains(page, `<span class="phase" id="phase">`+string(tc.to)+`</span>`) || strings.Contains(page, `id="form-accept"`) {
				t.Errorf("the page does not show the task in %s without the accept form", tc.to)
			}
		})
	}
}

// The page of a task that is not there (a mistyped address, a removed
// folder) is a page of the board: 404, the name escaped, the tasks there
// are and the way back; a name that is no task id at all likewise.
func TestMissingTaskPage(t *testing.T) {
	f := NewFixture(t)
	f.Task("here", "a task that is there")
	s, srv := f.Board(Options{})
	for _, id := range []string{"gone", "%3Cb%3Ex"} {
		code, page := get(t, s, srv, "/task/"+id)
		if code != 404 {
			t.Errorf("/task/%s: %d", id, code)
		}
		for _, want := range []string{`<a class="home" href="/">orch board</a>`, `<a href="/task/here">here`, `<a href="/">Back to the board</a>`, "it has no task of that name"} {
			if !strings.Contains(page, want) {
				t.Errorf("/task/%s lacks %q: %s", id, want, page)
			}
		}
		if strings.Contains(page, "<b>") {
			t.Errorf("/task/%s: the name is not escaped", id)
		}
	}
}
