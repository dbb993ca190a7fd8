package board

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/work"
)

// act posts a form and returns the page it leads to.
func act(t *testing.T, f *Fixture, s *Server, ts *httptestServer, path string, form url.Values) string {
	t.Helper()
	code, body, res := post(t, s, ts.Server, path, form)
	if code != 303 {
		t.Fatalf("POST %s: status %d: %s", path, code, body)
	}
	code, page := get(t, s, ts.Server, res.Header.Get("Location"))
	if code != 200 {
		t.Fatalf("GET %s: %d", res.Header.Get("Location"), code)
	}
	return page
}

// waitJob waits until the task's job from this board has finished.
func waitJob(t *testing.T, s *Server, id string) JobState {
	t.Helper()
	deadline := time.After(2 * time.Minute)
	for {
		w := s.jobs.waiter()
		j := s.jobs.last(id)
		if j == nil {
			t.Fatal("no job")
		}
		if !j.Running() {
			return j.State(0)
		}
		select {
		case <-w:
		case <-deadline:
			t.Fatalf("the job %s did not finish: %v", j.Action, j.State(0).Lines)
		}
	}
}

// The actions go through the CLI's code: the same results, the same
// refusals with the same messages and exit codes, the same transcript.
func TestActions(t *testing.T) {
	f := NewFixture(t)
	f.Task("a", "greet")
	f.Plan("a", "Greet", "Shall we greet?", nil)
	s, srv := f.Board(Options{})
	ts := &httptestServer{srv}

	// next refused: the open question (exit 3, nothing changed).
	page := act(t, f, s, ts, "/task/a/next", url.Values{"from": {"planning"}})
	for _, want := range []string{"orch: task a stays in planning: no transition holds", "exit 3", "q1"} {
		if !strings.Contains(page, want) {
			t.Errorf("refused next: the page does not say %q", want)
		}
	}
	// A blank override reason: the CLI's usage error.
	page = act(t, f, s, ts, "/task/a/override", url.Values{"reason": {"  "}})
	if !strings.Contains(page, "orch: --override needs a non-blank reason") || !strings.Contains(page, "exit 2") {
		t.Error("blank override: no usage error on the page")
	}
	// A bad phase name is a usage error too.
	page = act(t, f, s, ts, "/task/a/next", url.Values{"to": {"deploy"}})
	if !strings.Contains(page, "unknown phase") {
		t.Error("bad --to: no usage error")
	}
	// answer, then next.
	page = act(t, f, s, ts, "/task/a/answer", url.Values{"question": {"q1"}, "answer": {"yes, warmly"}})
	if !strings.Contains(page, "answered q1") || !strings.Contains(page, "yes, warmly") {
		t.Error("answer: the page does not show it")
	}
	plan := artifact.LoadPlan(f.Dir("a"))
	if !plan.OK() || plan.Value.Questions[0].Answer == nil || *plan.Value.Questions[0].Answer != "yes, warmly" {
		t.Fatalf("the answer is not in the plan: %+v", plan)
	}
	page = act(t, f, s, ts, "/task/a/next", url.Values{"from": {"planning"}})
	if !strings.Contains(page, "a: planning → plan_review") {
		t.Error("next: the page does not say planning → plan_review")
	}
	// --from makes a repeated click safe: refused, nothing changed.
	page = act(t, f, s, ts, "/task/a/next", url.Values{"from": {"planning"}})
	if !strings.Contains(page, "is in plan_review, not planning") {
		t.Error("a second next from planning was not refused")
	}
	// override with a reason, then redo.
	page = act(t, f, s, ts, "/task/a/override", url.Values{"reason": {"hotfix"}, "to": {"review"}})
	if !strings.Contains(page, "plan_review → review by override (hotfix)") || f.Phase("a") != "review" {
		t.Errorf("override: phase %s", f.Phase("a"))
	}
	page = act(t, f, s, ts, "/task/a/redo", url.Values{"phase": {"planning"}, "reason": {"start over"}})
	if !strings.Contains(page, "review → planning (redo)") || f.Phase("a") != "planning" {
		t.Errorf("redo: phase %s", f.Phase("a"))
	}
	// The transcript holds what the CLI writes.
	tk, _ := f.P.Open("a")
	evs, err := tk.Transcript()
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range evs {
		kinds = append(kinds, string(e.Kind))
	}
	want := "created user_input transition override redo"
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("transcript kinds %q, want %q", got, want)
	}
	if r, err := tk.Verify(); err != nil || !r.OK {
		t.Errorf("the transcript does not verify: %v %+v", err, r)
	}
}

// Accept from the board: the evidence before the button, refusals of a
// blank reason, then the commit, as orch accept makes it.
func TestAccept(t *testing.T) {
	f := NewFixture(t)
	f.Task("g", "greet")
	f.ToAccept("g", "Add a greeting")
	s, srv := f.Board(Options{})
	ts := &httptestServer{srv}
	_, page := get(t, s, srv, "/task/g")
	ev := strings.Index(page, "The evidence")
	btn := strings.Index(page, `id="btn-accept"`)
	if ev < 0 || btn < 0 || ev > btn {
		t.Fatal("the evidence is not shown before the accept button")
	}
	for _, want := range []string{"tests: <span class=\"good\" id=\"accept-tests\">passed</span>", "<code>hello.txt</code>", "diff_sha256 bound by"} {
		if !strings.Contains(page[ev:btn], want) {
			t.Errorf("the evidence does not show %q", want)
		}
	}
	page = act(t, f, s, ts, "/task/g/accept", url.Values{"verdict": {"accepted"}, "reasons": {" \n "}})
	if !strings.Contains(page, "a decision needs a non-blank reason") || !strings.Contains(page, "exit 2") {
		t.Error("blank reasons: no usage error")
	}
	page = act(t, f, s, ts, "/task/g/accept", url.Values{"verdict": {"changes_requested"}, "target": {"deploy"}, "reasons": {"x"}})
	if !strings.Contains(page, "needs --to codegen, review or planning") {
		t.Error("bad target: no usage error")
	}
	head := gittest.Git(t, f.Root, "rev-parse", "HEAD")
	page = act(t, f, s, ts, "/task/g/accept", url.Values{"verdict": {"accepted"}, "reasons": {"tests pass\nread the diff"}})
	if !strings.Contains(page, "started orch accept") {
		t.Fatalf("accept did not start: %s", page)
	}
	st := waitJob(t, s, "g")
	if st.Error != "" {
		t.Fatalf("accept failed: %s %v", st.Error, st.Lines)
	}
	commit := gittest.Git(t, f.Root, "rev-parse", "HEAD")
	if commit == head || !strings.Contains(st.Result, commit) {
		t.Fatalf("no commit: HEAD %s, result %q", commit, st.Result)
	}
	msg := gittest.Git(t, f.Root, "log", "-1", "--format=%B")
	if !strings.Contains(msg, "Add a greeting") || !strings.Contains(msg, "Orch-Task: g") {
		t.Errorf("commit message %q", msg)
	}
	if b, err := os.ReadFile(filepath.Join(f.Root, "hello.txt")); err != nil || string(b) != "hello\n" {
		t.Errorf("hello.txt in the work tree: %q %v", b, err)
	}
	d := artifact.LoadDecision(f.Dir("g"))
	if !d.OK() || d.Value.Decider.Name != "tester" || d.Value.Commit != commit || len(d.Value.Reasons) != 2 {
		t.Errorf("decision %+v", d)
	}
	// Recording the decision applies it: the task is in done with its
	// commit, no second Next needed, and the form is gone.
	if f.Phase("g") != "done" || !strings.Contains(st.Result, "accept → done") {
		t.Fatalf("after the accept decision: phase %s, result %q", f.Phase("g"), st.Result)
	}
	_, page = get(t, s, srv, "/task/g")
	if !strings.Contains(page, `<code id="commit">`+commit+`</code>`) || !strings.Contains(page, `<code id="task-commit">`+commit+`</code>`) {
		t.Error("the task page does not show the commit")
	}
	if !strings.Contains(page, `<span class="phase" id="phase">done</span>`) || strings.Contains(page, `id="form-accept"`) || strings.Contains(page, `id="form-next"`) {
		t.Errorf("the task page is not the done task's: %s", between(page, `<section id="actions">`, `<section id="plan">`))
	}
}

// A phase's worker started from the board: the planner (the script
// provider) runs through the registry, its progress lines reach the job.
func TestWorkPlan(t *testing.T) {
	f := NewFixture(t)
	script := `{"responses": [{"role": "planner", "json": {"title": "Greet people", "goals": ["a greeting"], "questions": [{"id": "q1", "text": "How warmly?", "blocking": true}],
	  "file_plan": [{"path": "hello.txt", "intent": "create", "summary": "the greeting"}]}}]}`
	gittest.Write(t, f.P.Dir, "script.json", script)
	gittest.Write(t, f.P.Dir, "config.toml", "[providers.default]\ntype = \"script\"\nscript = \".orch/script.json\"\n")
	f.Task("w", "greet people")
	s, srv := f.Board(Options{})
	ts := &httptestServer{srv}
	page := act(t, f, s, ts, "/task/w/work", url.Values{"phase": {"planning"}})
	if !strings.Contains(page, "started orch plan") {
		t.Fatalf("work did not start: %s", page)
	}
	st := waitJob(t, s, "w")
	if st.Error != "" {
		t.Fatalf("plan failed: %s %v", st.Error, st.Lines)
	}
	if !strings.Contains(strings.Join(st.Lines, "\n"), "orch plan for task w") {
		t.Errorf("progress lines %v", st.Lines)
	}
	plan := artifact.LoadPlan(f.Dir("w"))
	if !plan.OK() || plan.Value.Title != "Greet people" {
		t.Fatalf("plan %+v", plan)
	}
	_, page = get(t, s, srv, "/task/w")
	if !strings.Contains(page, "How warmly?") || !strings.Contains(page, `action="/task/w/answer"`) {
		t.Error("the planner's question has no answer form")
	}
	tk, _ := f.P.Open("w")
	evs, _ := tk.Transcript()
	var kinds []string
	for _, e := range evs {
		kinds = append(kinds, string(e.Kind))
	}
	if got := strings.Join(kinds, " "); !strings.Contains(got, "phase_started model_call phase_finished") {
		t.Errorf("transcript %q", got)
	}
	// An unknown phase or one without a worker here is refused.
	page = act(t, f, s, ts, "/task/w/work", url.Values{"phase": {"done"}})
	if !strings.Contains(page, "has no worker to start from here") {
		t.Error("work on done was not refused")
	}
}

// Revert from the board: the decision, then orch revert's worker; a blank
// reason is the CLI's usage error.
func TestRevert(t *testing.T) {
	f := NewFixture(t)
	f.Task("r", "revert me")
	f.ToAccept("r", "Revert me")
	s, srv := f.Board(Options{})
	ts := &httptestServer{srv}
	act(t, f, s, ts, "/task/r/accept", url.Values{"verdict": {"revert"}, "reasons": {"not wanted after all"}})
	if st := waitJob(t, s, "r"); st.Error != "" {
		t.Fatalf("accept --verdict revert: %s", st.Error)
	}
	// The decision is applied: the task went to revert, and says so.
	if st := waitJob(t, s, "r"); f.Phase("r") != lifecycle.Revert || !strings.Contains(st.Result, "decision recorded: revert; accept → revert") {
		t.Fatalf("after the revert decision: phase %s, result %q", f.Phase("r"), st.Result)
	}
	_, page := get(t, s, srv, "/task/r")
	if !strings.Contains(page, `id="form-revert"`) {
		t.Error("the revert form is not offered in revert")
	}
	page = act(t, f, s, ts, "/task/r/revert", url.Values{"reason": {" "}})
	if !strings.Contains(page, "orch: revert needs a non-blank --reason") {
		t.Error("blank revert reason: no usage error")
	}
	act(t, f, s, ts, "/task/r/revert", url.Values{"reason": {"never applied"}})
	st := waitJob(t, s, "r")
	if st.Error != "" || st.Result != "nothing to revert" {
		t.Fatalf("revert: %q %q", st.Result, st.Error)
	}
	rec := artifact.LoadRevertRecord(f.Dir("r"))
	if !rec.OK() || rec.Value.Status != artifact.RevertNothingToRevert || rec.Value.Reason != "never applied" {
		t.Errorf("revert record %+v", rec)
	}
	if f.Phase("r") != "done" {
		t.Errorf("phase %s after revert", f.Phase("r"))
	}
}

// Task files are shown as plain text, sandboxed, and never from outside
// the task folder.
func TestFile(t *testing.T) {
	f := NewFixture(t)
	f.Task("f", "brief <b>bold</b>")
	if err := os.Symlink("/etc/passwd", filepath.Join(f.Dir("f"), "planning", "leak")); err != nil {
		t.Fatal(err)
	}
	gittest.Write(t, f.P.Dir, "secret.txt", "not a task file")
	s, ts := f.Board(Options{})
	req, _ := http.NewRequest("GET", ts.URL+"/task/f/file?path=planning/brief.md", nil)
	req.AddCookie(&http.Cookie{Name: s.guard.cookie, Value: s.Token()})
	code, body, res := send(t, req)
	if code != 200 || !strings.Contains(body, "<b>bold</b>") || res.Header.Get("Content-Type") != "text/plain; charset=utf-8" || !strings.Contains(res.Header.Get("Content-Security-Policy"), "sandbox") {
		t.Fatalf("brief: %d %q %v", code, body, res.Header)
	}
	for _, p := range []string{"../../secret.txt", "../f/../../secret.txt", "/etc/passwd", "planning/leak", "planning/../../../secret.txt", `planning\..\x`, "", "planning"} {
		code, body := get(t, s, ts, "/task/f/file?path="+url.QueryEscape(p))
		if code == 200 {
			t.Errorf("path %q served: %q", p, body)
		}
	}
}

// The test phase's worker from the board streams the suite's output, and
// Cancel stops it the way Ctrl-C does: the run is recorded as cancelled.
func TestWorkCancel(t *testing.T) {
	f := NewFixture(t)
	gittest.Write(t, f.P.Dir, "config.toml", "[test]\nsandbox = \"none\"\n\n[[test.suites]]\nname = \"slow\"\nkind = \"test\"\ncommand = \"echo suite-started; sleep 60\"\n")
	f.Task("c", "slow tests")
	f.ToTest("c", "Slow")
	s, srv := f.Board(Options{})
	ts := &httptestServer{srv}
	page := act(t, f, s, ts, "/task/c/work", url.Values{"phase": {"test"}})
	j := s.jobs.last("c")
	if j == nil {
		i := strings.Index(page, `id="flash"`)
		t.Fatalf("no job started: %s", page[i:min(len(page), i+600)])
	}
	// Wait for the suite's first line, streamed from its output.
	deadline := time.After(time.Minute)
	for !slices.Contains(j.State(0).Lines, "suite-started") {
		select {
		case <-s.jobs.waiter():
		case <-deadline:
			t.Fatalf("no suite output: %v", j.State(0).Lines)
		}
	}
	page = act(t, f, s, ts, "/task/c/cancel", url.Values{"job": {j.ID}})
	if !strings.Contains(page, "cancelling orch test") {
		i := strings.Index(page, `id="flash"`)
		t.Errorf("cancel: no confirmation: %s / %+v", page[i:min(len(page), i+300)], j.State(0))
	}
	st := waitJob(t, s, "c")
	if st.Error == "" {
		t.Fatalf("a cancelled run reported success: %q", st.Result)
	}
	tk, _ := f.P.Open("c")
	evs, _ := tk.Transcript()
	last := evs[len(evs)-1]
	if last.Kind != "phase_finished" || last.Data["status"] != "cancelled" {
		t.Errorf("the last event is %s %v, want phase_finished cancelled", last.Kind, last.Data["status"])
	}
}

// A job's streamed output is shown line by line, whatever the writes.
func TestJobLines(t *testing.T) {
	js := newJobs()
	j := &Job{ID: "1", Task: "t"}
	if !js.start(j) {
		t.Fatal("not started")
	}
	for _, w := range []string{"one\ntw", "o\n", "", "thr", "ee\nfour\n\nfi"} {
		j.Write([]byte(w))
	}
	j.finish("ok", nil)
	got := strings.Join(j.State(0).Lines, "|")
	if want := "one|two|three|four||fi"; got != want {
		t.Errorf("lines %q, want %q", got, want)
	}
	if st := j.State(4); st.From != 4 || strings.Join(st.Lines, "|") != "|fi" {
		t.Errorf("State(4) = %d %q", st.From, st.Lines)
	}
}

// Revert a done task from the board in one step, as `orch revert` does
// from done: the accepted change is re-opened at revert (a redo logged
// with the reason) and its commit undone; a form of an older page is
// refused with nothing changed; a reverted task offers no revert again.
func TestRevertDone(t *testing.T) {
	f := NewFixture(t)
	f.Task("d", "revert when done")
	f.ToAccept("d", "Greet then regret")
	s, srv := f.Board(Options{})
	ts := &httptestServer{srv}
	act(t, f, s, ts, "/task/d/accept", url.Values{"verdict": {"accepted"}, "reasons": {"looks right"}})
	if st := waitJob(t, s, "d"); st.Error != "" || f.Phase("d") != lifecycle.Done {
		t.Fatalf("accept: %q, phase %s", st.Error, f.Phase("d"))
	}
	accepted := gittest.Git(t, f.Root, "rev-parse", "HEAD")
	_, page := get(t, s, srv, "/task/d")
	form := between(page, `id="form-revert"`, "</form>")
	if form == "" || !strings.Contains(form, "Re-open the done task at revert") || !strings.Contains(form, accepted[:12]) {
		t.Fatalf("the done task offers no revert naming its commit: %s", between(page, `<section id="actions">`, `<section id="plan">`))
	}
	// A form from before the task changed: 409, nothing changed.
	v, _ := s.orch.Status("d")
	code, body, _ := post(t, s, srv, "/task/d/revert", url.Values{"reason": {"too late"}, "revision": {strconv.FormatInt(v.Revision-1, 10)}})
	if code != http.StatusConflict || f.Phase("d") != lifecycle.Done || gittest.Git(t, f.Root, "rev-parse", "HEAD") != accepted {
		t.Fatalf("a stale revert form: %d, phase %s: %s", code, f.Phase("d"), between(body, `id="flash"`, "</div>"))
	}
	act(t, f, s, ts, "/task/d/revert", url.Values{"reason": {"the greeting annoys people"}})
	st := waitJob(t, s, "d")
	if st.Error != "" || !strings.Contains(st.Result, "reverted "+accepted) {
		t.Fatalf("revert of the done task: %q %q %v", st.Result, st.Error, st.Lines)
	}
	if !slices.Contains(st.Lines, "d: done → revert (redo, to revert the done task)") {
		t.Errorf("the job does not say the task was re-opened: %v", st.Lines)
	}
	if f.Phase("d") != lifecycle.Done {
		t.Errorf("phase %s after the revert", f.Phase("d"))
	}
	if _, err := os.Stat(filepath.Join(f.Root, "hello.txt")); !os.IsNotExist(err) {
		t.Errorf("hello.txt still in the work tree after the revert: %v", err)
	}
	if msg := gittest.Git(t, f.Root, "log", "-1", "--format=%B"); !strings.Contains(msg, "Orch-Revert: "+accepted) {
		t.Errorf("HEAD is not the revert commit: %q", msg)
	}
	tk, _ := f.P.Open("d")
	evs, _ := tk.Transcript()
	var redo bool
	for _, e := range evs {
		if p, err := e.Decode(); err == nil {
			if d, ok := p.(event.Redo); ok && d.To == lifecycle.Revert && d.Reason == "orch revert: the greeting annoys people" {
				redo = true
			}
		}
	}
	if !redo {
		t.Error("no redo with the revert's reason in the transcript")
	}
	_, page = get(t, s, srv, "/task/d")
	if strings.Contains(page, `id="form-revert"`) {
		t.Error("a reverted task still offers a revert")
	}
	// Its card on the board says reverted, not done alone.
	_, board := get(t, s, srv, "/")
	if c := between(board, `data-task="d"`, "</a>"); !strings.Contains(c, "done: reverted") {
		t.Errorf("the reverted task's card: %s", c)
	}
	// Its head says it was reverted, and the command in what it waits for
	// is code, not backticks.
	head := between(page, `<div class="taskhead">`, "</div>")
	if !strings.Contains(head, `<span class="bad" id="task-reverted">reverted</span>: <code>`+accepted[:12]+`</code>`) {
		t.Errorf("the head does not say the change was reverted: %s", head)
	}
	if strings.Contains(head, "`") || !strings.Contains(head, "<code>orch redo PHASE</code>") {
		t.Errorf("the head shows backticks instead of code: %s", head)
	}
}

// A refused form says which form it was and gives back what was typed
// into it (the text, the choices), as an alert; nothing changed.
func TestRefusedFormKeepsInput(t *testing.T) {
	f := NewFixture(t)
	f.Task("k", "keep my words")
	f.ToAccept("k", "Keep")
	s, srv := f.Board(Options{})
	ts := &httptestServer{srv}
	before, _ := s.orch.Status("k")

	page := act(t, f, s, ts, "/task/k/accept", url.Values{"verdict": {"changes_requested"}, "target": {"deploy"}, "reasons": {"the <b>name</b> is wrong\nand the test"}})
	flash := between(page, `<div id="flash"`, "</div>")
	for _, want := range []string{`role="alert"`, `data-form="accept"`, "<strong>The accept decision</strong> was not carried out (what you typed is back in its form):", "needs --to codegen, review or planning", "exit 2"} {
		if !strings.Contains(flash, want) {
			t.Errorf("the refusal lacks %q: %s", want, flash)
		}
	}
	form := between(page, `id="form-accept"`, "</form>")
	for _, want := range []string{`id="accept-reasons" rows="3" required>the &lt;b&gt;name&lt;/b&gt; is wrong` + "\nand the test</textarea>",
		`value="changes_requested" checked>`} {
		if !strings.Contains(form, want) {
			t.Errorf("the accept form does not give back %q: %s", want, form)
		}
	}
	if strings.Contains(form, `value="accepted" checked`) {
		t.Error("the accept form checks accepted again instead of the verdict chosen")
	}

	page = act(t, f, s, ts, "/task/k/override", url.Values{"to": {"codegen"}, "reason": {" "}})
	if !strings.Contains(page, "<strong>Override</strong> was not carried out") || !strings.Contains(page, `<option value="codegen" selected>`) {
		t.Errorf("the override's refusal does not name it or keep its target: %s", between(page, `id="form-override"`, "</form>"))
	}
	// The default target says where the forward edge goes.
	if !strings.Contains(page, `<option value="">the forward edge (→ done)</option>`) {
		t.Errorf("the override's default target does not name the phase: %s", between(page, `id="override-to"`, "</select>"))
	}
	// Another form's fields stay empty.
	if strings.Contains(page, `id="accept-reasons" rows="3" required>the`) {
		t.Error("the accept form kept the text of an earlier refusal")
	}

	page = act(t, f, s, ts, "/task/k/redo", url.Values{"phase": {"plannign"}, "reason": {"the plan missed a case"}})
	if !strings.Contains(page, `did you mean &#34;planning&#34;?`) || !strings.Contains(page, `id="redo-reason" value="the plan missed a case"`) {
		t.Errorf("the redo's refusal does not keep its reason: %s", between(page, `<section id="actions">`, `<div class="forms">`))
	}

	after, _ := s.orch.Status("k")
	if after.Revision != before.Revision || after.Phase != lifecycle.Accept {
		t.Errorf("a refused form changed the task: revision %d → %d, phase %s", before.Revision, after.Revision, after.Phase)
	}
	if _, err := os.Stat(filepath.Join(f.Dir("k"), "accept", "decision.json")); !os.IsNotExist(err) {
		t.Errorf("a refused decision was written: %v", err)
	}
}

// A test run from the board whose suite fails: the job's result says the
// run's status and counts, as its phase_finished event does, and is not
// shown as a success (it was a green "orch test finished" above a red
// report).
func TestWorkTestFailing(t *testing.T) {
	f := NewFixture(t)
	gittest.Write(t, f.P.Dir, "config.toml", "[test]\nsandbox = \"none\"\n\n[[test.suites]]\nname = \"unit\"\nkind = \"test\"\ncommand = \"echo one test fails; exit 1\"\n")
	f.Task("tf", "failing tests")
	f.ToTest("tf", "Fail")
	s, srv := f.Board(Options{})
	ts := &httptestServer{srv}
	act(t, f, s, ts, "/task/tf/work", url.Values{"phase": {"test"}})
	st := waitJob(t, s, "tf")
	if st.Error != "" || !st.Warn || !strings.HasPrefix(st.Result, "orch test finished: failed · ") || !strings.Contains(st.Result, "failed") {
		t.Fatalf("the failing run's result: %+v", st)
	}
	_, page := get(t, s, srv, "/task/tf")
	if !strings.Contains(page, `<p id="job-result" class="bad">orch test finished: failed`) || !strings.Contains(page, `class="job finished failed"`) {
		t.Errorf("the failing run is not shown as one: %s", between(page, `<div id="job"`, `<div class="forms">`))
	}
}

// How a run ended, in words, and whether it is a pass.
func TestRunOutcome(t *testing.T) {
	yes, no, two := true, false, 2
	for _, c := range []struct {
		out    work.Output
		msg    string
		passed bool
	}{
		{work.Output{}, "orch x finished: completed", true},
		{work.Output{Status: "failed", Summary: &event.PhaseSummary{OverallPass: &no, Tests: &artifact.Summary{Passed: 2, Failed: 1}}}, "orch x finished: failed · 2 passed, 1 failed, 0 skipped", false},
		{work.Output{Status: "passed", Summary: &event.PhaseSummary{OverallPass: &yes, Tests: &artifact.Summary{Passed: 3}}}, "orch x finished: passed · 3 passed, 0 failed, 0 skipped", true},
		{work.Output{Status: "completed", Summary: &event.PhaseSummary{OK: &no, Issues: &two, Blocking: &two}}, "orch x finished: completed · not ok · 2 issue(s) · 2 blocking", false},
		{work.Output{Status: "rejected", Summary: &event.PhaseSummary{OK: &no, Blocked: &yes}}, "orch x finished: rejected · blocked", false},
		{work.Output{Status: "clarifying", Summary: &event.PhaseSummary{Round: &two, OpenQuestions: []string{"q1"}}}, "orch x finished: clarifying · round 2 · open questions: q1", true},
		{work.Output{Status: "cancelled"}, "orch x finished: cancelled", false},
		{work.Output{Status: "ok", Summary: &event.PhaseSummary{OK: &yes, Reviewers: &two}}, "orch x finished: ok · 2 reviewer(s)", true},
	} {
		msg, passed := runOutcome("x", c.out)
		if msg != c.msg || passed != c.passed {
			t.Errorf("runOutcome(%+v) = %q, %v; want %q, %v", c.out, msg, passed, c.msg, c.passed)
		}
	}
}

// Accepting a change whose tests failed without the confirmation is
// refused before a job starts: the refusal names the form and gives the
// reasons back (it came from the job, after the form was gone); with the
// confirmation the change is accepted.
func TestAcceptIncompleteRefusedOnTheForm(t *testing.T) {
	f := NewFixture(t)
	f.Task("i", "accept despite a failure")
	f.ToTest("i", "Incomplete")
	f.Write("i", "test/report.json", `{"status": "completed", "overall_pass": false, "summary": {"passed": 1, "failed": 1, "skipped": 0, "error": 0}, "suites": [{"id": "go", "kind": "test", "command": "go test ./...", "exit_code": 1, "overall_pass": false, "summary": {"passed": 1, "failed": 1, "skipped": 0, "error": 0}, "cases": [{"name": "TestHello", "status": "pass"}, {"name": "TestFlaky", "status": "fail", "message": "timing"}]}]}`)
	f.Move("i", lifecycle.Accept)
	s, srv := f.Board(Options{})
	ts := &httptestServer{srv}
	page := act(t, f, s, ts, "/task/i/accept", url.Values{"verdict": {"accepted"}, "reasons": {"TestFlaky is known to be flaky"}})
	if s.jobs.last("i") != nil {
		t.Fatal("a job started for a refused accept")
	}
	flash := between(page, `<div id="flash"`, "</div>")
	if !strings.Contains(flash, "<strong>The accept decision</strong> was not carried out") || !strings.Contains(flash, "accepting anyway needs an explicit confirmation (--allow-incomplete)") || !strings.Contains(flash, "exit 3") {
		t.Errorf("the refusal: %s", flash)
	}
	if !strings.Contains(page, `required>TestFlaky is known to be flaky</textarea>`) {
		t.Errorf("the reasons are not given back: %s", between(page, `id="form-accept"`, "</form>"))
	}
	if _, err := os.Stat(filepath.Join(f.Dir("i"), "accept", "decision.json")); !os.IsNotExist(err) {
		t.Errorf("a decision was written: %v", err)
	}
	act(t, f, s, ts, "/task/i/accept", url.Values{"verdict": {"accepted"}, "reasons": {"TestFlaky is known to be flaky"}, "allow_incomplete": {"yes"}})
	if st := waitJob(t, s, "i"); st.Error != "" || f.Phase("i") != lifecycle.Done {
		t.Fatalf("accept with the confirmation: %q %q, phase %s", st.Result, st.Error, f.Phase("i"))
	}
}
