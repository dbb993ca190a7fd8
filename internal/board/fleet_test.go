package board

import (
	"errors"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/agent/planner"
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/fleetlink"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/nextstep"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/view"
)

// fleetAddr is the Temporal address of the tests' fleet.
const fleetAddr = "127.0.0.1:7233"

// fleetFixture is a board's clone (Local) and the fleet's tasks (Fleet,
// another repository: what the fleet's workflows hold), reached through a
// real fleetlink.Link running this test binary as orch-fleet
// (fleetstandin_test.go).
type fleetFixture struct {
	Local, Fleet *Fixture
}

func newFleetFixture(t *testing.T) *fleetFixture {
	return &fleetFixture{Local: NewFixture(t), Fleet: NewFixture(t)}
}

// link is the link to the fleet at Temporal address addr.
func (ff *fleetFixture) link(t *testing.T, addr string) *fleetlink.Link {
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return &fleetlink.Link{Binary: bin, Root: ff.Local.Root, Fleet: config.Fleet{Address: addr, Namespace: "orch-test"},
		Env: append(os.Environ(), standinRoot+"="+ff.Fleet.Root, standinAddr+"="+fleetAddr)}
}

// submitted marks task id as the fleet's in the local clone (the ref
// orch-fleet submit and pull leave: fleetlink.LocalRef).
func (ff *fleetFixture) submitted(t *testing.T, id string) {
	t.Helper()
	out, err := exec.Command("git", "-C", ff.Local.Root, "update-ref", fleetlink.LocalRef(id), "HEAD").CombinedOutput()
	if err != nil {
		t.Fatalf("git update-ref: %v: %s", err, out)
	}
}

// column is the board's column of phase p.
func column(t *testing.T, page string, p lifecycle.Phase) string {
	t.Helper()
	_, rest, ok := strings.Cut(page, `data-phase="`+string(p)+`"`)
	if !ok {
		t.Fatalf("no column %s on the board", p)
	}
	col, _, _ := strings.Cut(rest, "</section>")
	return col
}

// cardOf is task id's card in a column ("" when it is not there).
func cardOf(col, id string) string {
	_, rest, ok := strings.Cut(col, `data-task="`+id+`"`)
	if !ok {
		return ""
	}
	c, _, _ := strings.Cut(rest, "</a>")
	return c
}

// fleetPost posts a fleet task's form, naming revision rev, and returns
// the status and the page it leads to (the redirect followed).
func fleetPost(t *testing.T, s *Server, ts *httptestServer, path string, rev int64, form url.Values) (int, string) {
	t.Helper()
	form.Set("revision", strconv.FormatInt(rev, 10))
	code, body, res := post(t, s, ts.Server, path, form)
	if code != 303 {
		return code, body
	}
	code, page := get(t, s, ts.Server, res.Header.Get("Location"))
	return code, page
}

// The board shows the fleet's tasks beside the local ones, by phase and
// with what each waits for; a fleet task's page shows its status and log
// as the fleet returns them; its gate actions go to the fleet and come
// back with the fleet's outcome or orch's refusal (message and exit
// code); local tasks stay local.
func TestFleetBoard(t *testing.T) {
	ff := newFleetFixture(t)
	local, fl := ff.Local, ff.Fleet
	local.Task("l1", "a local task")
	// In the fleet: a planning task with an open question, a task at
	// the accept gate, a task in test submitted from this clone (its
	// folder here is what was submitted), a done task submitted from
	// here (its workflow ended: the listing no longer names it).
	fl.Task("f-plan", "plan in the fleet")
	fl.Plan("f-plan", "Plan in the fleet", "Which greeting?", nil)
	fl.Task("f-accept", "accept in the fleet")
	fl.ToAccept("f-accept", "Accept in the fleet")
	fl.Task("f-sub", "submitted from here")
	fl.ToTest("f-sub", "Submitted")
	local.Task("f-sub", "submitted from here")
	ff.submitted(t, "f-sub")
	fl.Task("f-done", "done in the fleet")
	fl.Move("f-done", lifecycle.Done)
	local.Task("f-done", "done in the fleet")
	ff.submitted(t, "f-done")

	s, srv := local.Board(Options{Fleet: ff.link(t, fleetAddr)})
	ts := &httptestServer{srv}

	code, page := get(t, s, srv, "/")
	if code != 200 {
		t.Fatalf("board: %d: %s", code, page)
	}
	planning := column(t, page, lifecycle.Planning)
	if c := cardOf(planning, "l1"); c == "" || strings.Contains(c, ">fleet<") {
		t.Errorf("the local task l1 is not a local card in planning: %q", c)
	}
	if c := cardOf(planning, "f-plan"); !strings.Contains(c, ">fleet<") || !strings.Contains(c, "waits for your answer to q1") || !strings.Contains(c, "card human") && !strings.Contains(page, `class="card human`) {
		t.Errorf("f-plan's card does not say it waits for the answer to q1 (fleet): %q", c)
	}
	if cardOf(planning, "f-sub") != "" {
		t.Error("f-sub shows in planning, as its folder here says, not where the fleet has it")
	}
	if c := cardOf(column(t, page, lifecycle.Test), "f-sub"); !strings.Contains(c, "submitted from here") || !strings.Contains(c, "in the fleet: waits for a test run") {
		t.Errorf("f-sub's card in test: %q", c)
	}
	if c := cardOf(column(t, page, lifecycle.Accept), "f-accept"); !strings.Contains(c, "waits for your accept decision") {
		t.Errorf("f-accept's card in accept: %q", c)
	}
	if c := cardOf(column(t, page, lifecycle.Done), "f-done"); !strings.Contains(c, ">fleet<") || !strings.Contains(c, "done") {
		t.Errorf("f-done (its workflow ended) is not a fleet card in done: %q", c)
	}
	if cardOf(planning, "f-done") != "" {
		t.Error("f-done shows in planning, as its folder here says")
	}

	// The task page: the status and the log the fleet returns.
	want, err := fl.O.Status("f-plan")
	if err != nil {
		t.Fatal(err)
	}
	code, page = get(t, s, srv, "/task/f-plan")
	if code != 200 {
		t.Fatalf("f-plan's page: %d: %s", code, page)
	}
	for _, w := range []string{`id="phase">planning`, `id="revision">` + strconv.FormatInt(want.Revision, 10), "waits for your answer to q1",
		"<code>orch answer q1 TEXT</code>", `<input type="hidden" name="question" value="q1">`, `id="answer-q1"`, "task created", "Which greeting?", want.Edges[0].Reason} {
		if !strings.Contains(page, w) {
			t.Errorf("f-plan's page does not show %q", w)
		}
	}
	// The local task's page is the local one.
	if code, page = get(t, s, srv, "/task/l1"); code != 200 || !strings.Contains(page, `id="form-work"`) {
		t.Errorf("l1's page is not the local page: %d", code)
	}

	// Refusals: the fleet's, with the message and exit code of orch's
	// own check on the same task (what the local command says).
	planSt, planStep, err := view.StatusOf(fl.O, "f-plan")
	if err != nil {
		t.Fatal(err)
	}
	refusals := []struct {
		name, path string
		task       string
		form       url.Values
		want       error
	}{
		{"answer an unknown question", "/task/f-plan/answer", "f-plan", url.Values{"question": {"q9"}, "answer": {"hello"}},
			planner.CheckAnswer("f-plan", lifecycle.Planning, artifact.LoadPlan(fl.Dir("f-plan")), "q9", "hello")},
		{"redo a later phase", "/task/f-plan/redo", "f-plan", url.Values{"phase": {"test"}, "reason": {"again"}},
			func() error { _, err := orchestrator.RedoTarget(lifecycle.Planning, lifecycle.Test); return err }()},
		{"accept while planning", "/task/f-plan/accept", "f-plan", url.Values{"verdict": {"accepted"}, "reasons": {"fine"}},
			nextstep.WrongPhase(planSt.StatusView, lifecycle.Accept, func(a string) string { return "orch " + a }, nextstep.StepLine(planStep))},
		{"revert while planning", "/task/f-plan/revert", "f-plan", url.Values{"reason": {"bad"}},
			nextstep.WrongPhase(planSt.StatusView, lifecycle.Revert, func(a string) string { return "orch " + a }, nextstep.StepLine(planStep))},
		{"override out of done", "/task/f-done/override", "f-done", url.Values{"reason": {"reopen"}},
			orchestrator.CheckOverride(lifecycle.Lifecycle(), "f-done", lifecycle.Done, "", "reopen")},
	}
	for _, c := range refusals {
		t.Run(c.name, func(t *testing.T) {
			if c.want == nil {
				t.Fatal("the local check does not refuse: the case tests nothing")
			}
			before, err := fl.O.Status(c.task)
			if err != nil {
				t.Fatal(err)
			}
			code, page := fleetPost(t, s, ts, c.path, before.Revision, c.form)
			if code != 200 {
				t.Fatalf("POST %s: %d: %s", c.path, code, page)
			}
			st := waitJob(t, s, c.task)
			if st.Error != exit.Format(c.want) || st.Code != int(exit.Of(c.want)) {
				t.Errorf("the fleet's refusal:\n%s (exit %d)\nthe local check's:\n%s (exit %d)", st.Error, st.Code, exit.Format(c.want), exit.Of(c.want))
			}
			after, _ := fl.O.Status(c.task)
			if after.Revision != before.Revision || after.Phase != before.Phase {
				t.Errorf("a refused action changed the fleet's task: %s@%d → %s@%d", before.Phase, before.Revision, after.Phase, after.Revision)
			}
			// The page shows it as the CLI would print it.
			_, page = get(t, s, srv, "/task/"+c.task)
			first, _, _ := strings.Cut(exit.Format(c.want), "\n")
			if !strings.Contains(page, htmlEscape(first)) || !strings.Contains(page, "exit "+strconv.Itoa(int(exit.Of(c.want)))) {
				t.Errorf("the page does not show the refusal %q with its exit code", first)
			}
		})
	}

	// What only a local task has is refused at once (usage, exit 2).
	for _, p := range []string{"/task/f-sub/next", "/task/f-sub/work"} {
		_, page := fleetPost(t, s, ts, p, 1, url.Values{"phase": {"test"}, "from": {"test"}})
		if !strings.Contains(page, "task f-sub is the fleet&#39;s") || !strings.Contains(page, "exit 2") {
			t.Errorf("POST %s on a fleet task: not refused as the fleet's", p)
		}
	}

	// A form of a page older than the task: 409 and the page as the
	// fleet now returns it; nothing sent.
	cur, _ := fl.O.Status("f-sub")
	code, page = fleetPost(t, s, ts, "/task/f-sub/override", cur.Revision-1, url.Values{"reason": {"late"}})
	if code != 409 || !strings.Contains(page, "task f-sub: the task changed after this page was loaded (revision "+strconv.FormatInt(cur.Revision-1, 10)+" then, "+strconv.FormatInt(cur.Revision, 10)+" now)") {
		t.Errorf("stale override: %d, the page does not say what changed", code)
	}
	if now, _ := fl.O.Status("f-sub"); now.Revision != cur.Revision {
		t.Error("a stale form changed the fleet's task")
	}

	// Actions carried out by the fleet.
	rev := func(id string) int64 {
		v, err := fl.O.Status(id)
		if err != nil {
			t.Fatal(err)
		}
		return v.Revision
	}
	ok := func(id, path string, form url.Values, want string) {
		t.Helper()
		code, page := fleetPost(t, s, ts, path, rev(id), form)
		if code != 200 {
			t.Fatalf("POST %s: %d: %s", path, code, page)
		}
		st := waitJob(t, s, id)
		if st.Error != "" || !strings.Contains(st.Result, want) {
			t.Fatalf("POST %s: %q %q, want %q", path, st.Result, st.Error, want)
		}
	}
	ok("f-plan", "/task/f-plan/answer", url.Values{"question": {"q1"}, "answer": {"warmly"}}, "the fleet: task f-plan is in planning at revision")
	if p := artifact.LoadPlan(fl.Dir("f-plan")); !p.OK() || p.Value.Questions[0].Answer == nil || *p.Value.Questions[0].Answer != "warmly" {
		t.Error("the answer did not reach the fleet's task")
	}
	_, page = get(t, s, srv, "/task/f-plan")
	if !strings.Contains(page, `id="revision">`+strconv.FormatInt(rev("f-plan"), 10)) || !strings.Contains(page, "q1") {
		t.Error("f-plan's page does not show the revision after the answer")
	}

	ok("f-accept", "/task/f-accept/accept", url.Values{"verdict": {"rejected"}, "reasons": {"not now\n\nnot like this"}}, "the fleet: task f-accept is in revert")
	d := artifact.LoadDecision(fl.Dir("f-accept"))
	if !d.OK() || d.Value.Verdict != "rejected" || d.Value.Decider.Name != "tester" || len(d.Value.Reasons) != 2 {
		t.Errorf("the fleet's decision: %+v", d.Value)
	}
	_, page = get(t, s, srv, "/task/f-accept")
	if !strings.Contains(page, `id="form-revert"`) || strings.Contains(page, `id="form-accept"`) {
		t.Error("f-accept's page in revert does not offer the revert form (only)")
	}
	_, page = get(t, s, srv, "/")
	if c := cardOf(column(t, page, lifecycle.Revert), "f-accept"); !strings.Contains(c, "waits for a revert with your reason") {
		t.Errorf("after the decision, f-accept's card: %q", c)
	}

	ok("f-sub", "/task/f-sub/override", url.Values{"reason": {"tested by hand"}, "to": {"accept"}}, "is in accept")
	ok("f-sub", "/task/f-sub/redo", url.Values{"phase": {"codegen"}, "reason": {"once more"}}, "is in codegen")
	if p := fl.Phase("f-sub"); p != lifecycle.Codegen {
		t.Errorf("f-sub in the fleet: %s, want codegen", p)
	}
	if local.Phase("f-sub") != lifecycle.Planning {
		t.Error("the fleet's action changed the submitted folder here")
	}

	// A local task stays local with the fleet configured.
	code, page = fleetPost(t, s, ts, "/task/l1/override", 1, url.Values{"reason": {"skip ahead"}, "to": {"plan_review"}})
	if code != 200 || local.Phase("l1") != lifecycle.PlanReview || !strings.Contains(page, "l1: planning → plan_review by override") {
		t.Errorf("the local override: %d, phase %s", code, local.Phase("l1"))
	}
}

// htmlEscape escapes what html/template escapes in text.
func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;", "+", "&#43;").Replace(s)
}

// A fleet that does not answer: the board says so above the local tasks,
// which keep working; a fleet task's page shows the error and no action;
// an action is refused with the link's message and exit code.
func TestFleetBoardUnreachable(t *testing.T) {
	ff := newFleetFixture(t)
	ff.Local.Task("l1", "a local task")
	ff.Local.Task("f-sub", "submitted from here")
	ff.submitted(t, "f-sub")
	s, srv := ff.Local.Board(Options{Fleet: ff.link(t, "127.0.0.1:1")})
	ts := &httptestServer{srv}
	code, page := get(t, s, srv, "/")
	if code != 200 || !strings.Contains(page, `id="notice"`) || !strings.Contains(page, "the fleet did not answer: orch: cannot reach the fleet&#39;s Temporal service at 127.0.0.1:1") {
		t.Fatalf("board without the fleet: %d, no notice", code)
	}
	planning := column(t, page, lifecycle.Planning)
	if cardOf(planning, "l1") == "" {
		t.Error("the local task is not on the board")
	}
	if c := cardOf(planning, "f-sub"); !strings.Contains(c, "the fleet did not answer") {
		t.Errorf("the fleet's task is shown as if its folder here were current: %q", c)
	}
	code, page = get(t, s, srv, "/task/f-sub")
	if code != 200 || !strings.Contains(page, `id="fleet-error"`) || strings.Contains(page, `id="form-redo"`) {
		t.Errorf("the fleet task's page without the fleet: %d", code)
	}
	// Its Actions say why there is none, rather than stand empty.
	if !strings.Contains(between(page, `<section id="actions">`, "</section>"), `id="no-action"`) {
		t.Errorf("the empty actions of a fleet task without the fleet say nothing: %s", between(page, `<section id="actions">`, "</section>"))
	}
	_, page = fleetPost(t, s, ts, "/task/f-sub/redo", 1, url.Values{"reason": {"x"}})
	if !strings.Contains(page, "cannot reach the fleet&#39;s Temporal service") || !strings.Contains(page, "exit 1") {
		t.Error("an action without the fleet is not refused with the link's message and exit code")
	}
	if code, _ := get(t, s, srv, "/task/l1"); code != 200 {
		t.Error("a local task's page fails without the fleet")
	}
}

// orch-fleet not found: the board serves the local tasks and says why the
// fleet's are missing, with the link's hint.
func TestFleetBoardNoBinary(t *testing.T) {
	f := NewFixture(t)
	f.Task("l1", "a local task")
	_, err := fleetlink.Open(f.Root, config.Fleet{Address: fleetAddr, Binary: "no/such/orch-fleet"})
	if !errors.Is(err, fleetlink.ErrNoBinary) {
		t.Fatalf("Open without the binary: %v", err)
	}
	s, srv := f.Board(Options{FleetErr: err})
	code, page := get(t, s, srv, "/")
	if code != 200 || !strings.Contains(page, "no/such/orch-fleet") || !strings.Contains(page, "go build -o DIR/orch-fleet") || cardOf(column(t, page, lifecycle.Planning), "l1") == "" {
		t.Errorf("board without orch-fleet: %d", code)
	}
}

// The fleet's changes reach open pages: the board polls the listing while
// a page listens and publishes the tasks that changed.
func TestFleetPoll(t *testing.T) {
	ff := newFleetFixture(t)
	ff.Fleet.Task("f1", "in the fleet")
	s, _ := ff.Local.Board(Options{Fleet: ff.link(t, fleetAddr), FleetPoll: 20 * time.Millisecond})
	sub, cancel := s.watch.subscribe()
	defer cancel()
	deadline := time.Now().Add(time.Minute)
	for {
		s.fleet.mu.Lock()
		base := s.fleet.seen != nil
		s.fleet.mu.Unlock()
		if base {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the poller never read the listing")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if ids := sub.take(); len(ids) != 0 {
		t.Errorf("the first listing published changes: %v", ids)
	}
	ff.Fleet.Move("f1", lifecycle.PlanReview)
	select {
	case <-sub.wake:
		if ids := sub.take(); len(ids) != 1 || ids[0] != "f1" {
			t.Errorf("changed: %v, want [f1]", ids)
		}
	case <-time.After(time.Minute):
		t.Fatal("the fleet's change was not published")
	}
}

// What a fleet task's card says it waits for, from its phase and its
// workflow's reason for waiting (lifecycle.Pilot's messages).
func TestFleetWaits(t *testing.T) {
	open := lifecycle.Pilot(lifecycle.PilotInput{Phase: lifecycle.Planning, Reason: "open question", MaxAttempts: 3,
		Open: []artifact.Question{{ID: "q2", Text: "Which one?", Blocking: true}, {ID: "q3", Text: "And?", Blocking: true}}})
	accept := lifecycle.Pilot(lifecycle.PilotInput{Phase: lifecycle.Accept})
	revert := lifecycle.Pilot(lifecycle.PilotInput{Phase: lifecycle.Revert})
	for _, c := range []struct {
		phase   lifecycle.Phase
		waiting string
		words   string
		human   bool
	}{
		{lifecycle.Planning, "", "in the fleet: waits for the planner", false},
		{lifecycle.Codegen, "", "in the fleet: waits for codegen", false},
		{lifecycle.Test, "", "in the fleet: waits for a test run", false},
		{lifecycle.Done, "", "done", false},
		{lifecycle.Planning, open.Message, "waits for your answer to q2", true},
		{lifecycle.Accept, accept.Message, "waits for your accept decision", true},
		{lifecycle.Revert, revert.Message, "waits for a revert with your reason", true},
		{lifecycle.Codegen, "codegen ran 3 times without passing review and tests: look at history/\nmore", "waits for you: codegen ran 3 times without passing review and tests: look at history/", true},
		{lifecycle.Planning, "5 planning rounds without a plan ready for review: x", "waits for you: 5 planning rounds without a plan ready for review: x", true},
	} {
		words, human := fleetWaits(c.phase, c.waiting)
		if words != c.words || human != c.human {
			t.Errorf("fleetWaits(%s, %q) = %q, %v; want %q, %v", c.phase, c.waiting, words, human, c.words, c.human)
		}
	}
	if open.Stop != lifecycle.StopGate || accept.Stop != lifecycle.StopGate || revert.Stop != lifecycle.StopGate {
		t.Fatal("the cases' messages are not the gates' (lifecycle.Pilot changed)")
	}
}

// The open questions a fleet task's workflow waits for, read from its
// reason for waiting (lifecycle.Pilot's message).
func TestOpenQuestionsOf(t *testing.T) {
	pilot := lifecycle.Pilot(lifecycle.PilotInput{Phase: lifecycle.Planning, MaxAttempts: 3,
		Open: []artifact.Question{{ID: "q1", Text: "Which greeting: hello: or hi?", Blocking: true}, {ID: "scope-2", Text: "And tests?", Blocking: true}}})
	for _, c := range []struct {
		name, waiting string
		want          []string // id=text
	}{
		{"the pilot's message", pilot.Message, []string{"q1=Which greeting: hello: or hi?", "scope-2=And tests?"}},
		{"not questions", "the accept decision is yours", nil},
		{"no line after", "open blocking question(s): answer with `orch answer ID TEXT`:", nil},
		{"a line that does not read so ends the list", "open blocking question(s):\n  q1: first\nsomething else\n  q2: second", []string{"q1=first"}},
		{"an id with a space", "open blocking question(s):\n  q 1: text", nil},
		{"empty", "", nil},
	} {
		var got []string
		for _, q := range openQuestionsOf(c.waiting) {
			got = append(got, q.ID+"="+q.Text)
		}
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// FuzzOpenQuestionsOf: whatever the fleet says, the questions read have
// an id without blanks, never empty.
func FuzzOpenQuestionsOf(f *testing.F) {
	f.Add("open blocking question(s): answer with `orch answer ID TEXT`:\n  q1: Which?\n  q2: And?")
	f.Add("the accept decision is yours")
	f.Add("open blocking question\n: \n  :x")
	f.Fuzz(func(t *testing.T, waiting string) {
		for _, q := range openQuestionsOf(waiting) {
			if q.ID == "" || strings.ContainsAny(q.ID, " \t\n") {
				t.Fatalf("question id %q read from %q", q.ID, waiting)
			}
		}
	})
}
