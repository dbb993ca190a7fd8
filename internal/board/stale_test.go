package board

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/task"
)

var hiddenInput = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)

// formOf returns the hidden fields of the form that holds marker (its id,
// or for an answer the question's field) in a page, as the browser would
// post them.
func formOf(t *testing.T, page, marker string) url.Values {
	t.Helper()
	i := strings.Index(page, marker)
	if i < 0 {
		t.Fatalf("the page has no %s", marker)
	}
	start := strings.LastIndex(page[:i], "<form")
	end := strings.Index(page[i:], "</form>")
	if start < 0 || end < 0 {
		t.Fatalf("%s is not in a form", marker)
	}
	v := url.Values{}
	for _, m := range hiddenInput.FindAllStringSubmatch(page[start:i+end], -1) {
		if m[1] != csrfField {
			v.Add(html.UnescapeString(m[1]), html.UnescapeString(m[2]))
		}
	}
	return v
}

// The attack the issue measured: a task page loaded at accept while the
// change is one patch; from the CLI the change is redone and a different
// patch brought through review and test back to accept; the old page's
// accept form (same CSRF token) is refused with 409, saying the change was
// redone, the page shows the task as it is now, and nothing is committed.
// The same holds for every gate form of a page older than the task.
func TestStaleForms(t *testing.T) {
	evil := "diff --git a/hello.txt b/hello.txt\nnew file mode 100644\n--- /dev/null\n+++ b/hello.txt\n@@ -0,0 +1 @@\n+EVIL\n"
	cases := []struct {
		name   string
		phase  func(f *Fixture, id string) // brings the task to the page's state
		marker string                      // the form on the page
		fill   url.Values                  // what the person typed
		action string
		// meanwhile changes the task from the CLI after the page loaded.
		meanwhile func(f *Fixture, id string)
		says      string
	}{
		{"accept after the change was redone", func(f *Fixture, id string) { f.ToAccept(id, "Greet") }, `id="form-accept"`,
			url.Values{"verdict": {"accepted"}, "reasons": {"I read the diff: it says hello"}}, "accept",
			func(f *Fixture, id string) {
				if _, err := f.O.Redo(context.Background(), id, lifecycle.Codegen, "another try"); err != nil {
					f.T.Fatal(err)
				}
				f.Write(id, "code/files/hello.txt", "EVIL\n")
				f.Write(id, "code/diff.patch", evil)
				f.Next(id) // → review
				f.Write(id, "review/code-review.json", `{"ok": true, "issues": []}`)
				f.Next(id) // → test
				f.Write(id, "test/report.json", `{"status": "completed", "overall_pass": true, "summary": {"passed": 1, "failed": 0, "skipped": 0, "error": 0}, "suites": [{"id": "go", "kind": "test", "command": "go test ./...", "exit_code": 0, "overall_pass": true, "summary": {"passed": 1, "failed": 0, "skipped": 0, "error": 0}, "cases": [{"name": "TestHello", "status": "pass"}]}]}`)
				f.Next(id) // → accept
			}, "the change was redone after this page was loaded"},
		{"accept after the diff was edited by hand", func(f *Fixture, id string) { f.ToAccept(id, "Greet") }, `id="form-accept"`,
			url.Values{"verdict": {"accepted"}, "reasons": {"fine"}}, "accept",
			func(f *Fixture, id string) { f.Write(id, "code/diff.patch", evil) },
			"code/diff.patch: shown "},
		{"next", func(f *Fixture, id string) {
			yes := "yes"
			f.Plan(id, "Greet", "Shall we?", &yes)
		}, `id="form-next"`, url.Values{}, "next",
			func(f *Fixture, id string) { f.Move(id, lifecycle.PlanReview) },
			"moved planning → plan_review by override"},
		{"override", func(f *Fixture, id string) {}, `id="form-override"`,
			url.Values{"reason": {"hotfix"}, "to": {"codegen"}}, "override",
			func(f *Fixture, id string) {
				if _, err := f.O.Redo(context.Background(), id, lifecycle.Planning, "again"); err != nil {
					f.T.Fatal(err)
				}
			}, "planning was redone"},
		{"redo", func(f *Fixture, id string) { f.ToTest(id, "Greet") }, `id="form-redo"`,
			url.Values{"phase": {"codegen"}, "reason": {"again"}}, "redo",
			func(f *Fixture, id string) { f.Move(id, lifecycle.Accept) },
			"moved test → accept by override"},
		{"answer", func(f *Fixture, id string) { f.Plan(id, "Greet", "How warmly?", nil) }, `name="question" value="q1"`,
			url.Values{"question": {"q1"}, "answer": {"warmly"}}, "answer",
			func(f *Fixture, id string) {
				f.Move(id, lifecycle.PlanReview)
				f.Move(id, lifecycle.Planning)
			}, "moved plan_review → planning by override"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := NewFixture(t)
			id := f.Task("s", "greet")
			c.phase(f, id)
			s, srv := f.Board(Options{})
			_, page := get(t, s, srv, "/task/"+id)
			form := formOf(t, page, c.marker)
			if form.Get("revision") == "" {
				t.Fatalf("the %s form carries no revision: %v", c.action, form)
			}
			if c.action == "accept" && form.Get("sha256_"+lifecycle.HashDiff) == "" {
				t.Fatalf("the accept form carries no diff hash: %v", form)
			}
			for k, v := range c.fill {
				form[k] = v
			}
			head := gittest.Git(t, f.Root, "rev-parse", "HEAD")
			c.meanwhile(f, id)
			before, err := f.O.Status(id)
			if err != nil {
				t.Fatal(err)
			}
			evs := len(events(t, f, id))
			code, body, _ := post(t, s, srv, "/task/"+id+"/"+c.action, form)
			if code != http.StatusConflict {
				t.Fatalf("a stale %s form: status %d, want 409: %s", c.action, code, body)
			}
			t.Logf("refused: %s", msgOf(body))
			if !strings.Contains(body, html.EscapeString(c.says)) || !strings.Contains(body, "review it again") || !strings.Contains(body, "exit 3") {
				t.Errorf("the refusal does not say %q:\n%s", c.says, flashOf(body))
			}
			// The page shows the task as it is now.
			if !strings.Contains(body, `<span class="phase" id="phase">`+string(before.Phase)+`</span>`) {
				t.Errorf("the 409 page does not show phase %s", before.Phase)
			}
			if !strings.Contains(body, `name="revision" value="`+itoa(before.Revision)+`"`) {
				t.Errorf("the 409 page's forms do not carry the new revision %d", before.Revision)
			}
			after, err := f.O.Status(id)
			if err != nil {
				t.Fatal(err)
			}
			if after.Revision != before.Revision || len(events(t, f, id)) != evs {
				t.Errorf("a refused %s changed the task: revision %d → %d", c.action, before.Revision, after.Revision)
			}
			if now := gittest.Git(t, f.Root, "rev-parse", "HEAD"); now != head {
				t.Errorf("HEAD moved: %s → %s", head, now)
			}
			if s.jobs.last(id) != nil {
				t.Errorf("a job started: %+v", s.jobs.last(id).State(0))
			}
			if c.action == "answer" {
				if p := artifact.LoadPlan(f.Dir(id)); p.OK() && p.Value.Questions[0].Answer != nil {
					t.Errorf("the answer was written: %q", *p.Value.Questions[0].Answer)
				}
			}
			// The same form from the page as it is now is carried out.
			fresh := formOf(t, body, c.marker)
			for k, v := range c.fill {
				fresh[k] = v
			}
			if code, body, _ := post(t, s, srv, "/task/"+id+"/"+c.action, fresh); code != http.StatusSeeOther {
				t.Errorf("the %s form of the new page: status %d: %s", c.action, code, flashOf(body))
			}
		})
	}
}

// A gate form that names no revision is a usage error, not an action.
func TestFormWithoutRevision(t *testing.T) {
	f := NewFixture(t)
	id := f.Task("n", "greet")
	s, srv := f.Board(Options{})
	page := act(t, f, s, &httptestServer{srv}, "/task/"+id+"/override", url.Values{"reason": {"skip"}, "revision": {""}})
	if !strings.Contains(page, "the form names no task revision") || !strings.Contains(page, "exit 2") {
		t.Errorf("no refusal: %s", flashOf(page))
	}
	if p := f.Phase(id); p != lifecycle.Planning {
		t.Errorf("the task moved to %s", p)
	}
}

// The decision names the revision and the hashes it judged: those of the
// page the person decided on.
func TestAcceptRecordsJudged(t *testing.T) {
	f := NewFixture(t)
	id := f.Task("j", "greet")
	f.ToAccept(id, "Greet")
	s, srv := f.Board(Options{})
	_, page := get(t, s, srv, "/task/"+id)
	form := formOf(t, page, `id="form-accept"`)
	form.Set("verdict", "accepted")
	form.Set("reasons", "read it")
	act(t, f, s, &httptestServer{srv}, "/task/"+id+"/accept", form)
	if st := waitJob(t, s, id); st.Error != "" {
		t.Fatalf("accept: %s", st.Error)
	}
	raw, err := os.ReadFile(filepath.Join(f.Dir(id), filepath.FromSlash(artifact.DecisionFile)))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Judged struct {
			Revision int64             `json:"revision"`
			SHA256   map[string]string `json:"sha256"`
		} `json:"judged"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(Hello))
	if itoa(d.Judged.Revision) != form.Get("revision") || d.Judged.SHA256[lifecycle.HashDiff] != hex.EncodeToString(sum[:]) {
		t.Errorf("judged %+v; the page showed revision %s, diff %s", d.Judged, form.Get("revision"), form.Get("sha256_"+lifecycle.HashDiff))
	}
	// The transcript's phase_finished names them too.
	var found bool
	for _, ev := range events(t, f, id) {
		if ev.Kind == "phase_finished" && strings.Contains(string(mustJSON(t, ev.Data)), `"judged":{"revision":`+form.Get("revision")) {
			found = true
		}
	}
	if !found {
		t.Error("no phase_finished event names the judged revision")
	}
}

// events reads the task's transcript.
func events(t *testing.T, f *Fixture, id string) []task.Event {
	t.Helper()
	tk, err := f.P.Open(id)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := tk.Transcript()
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// flashOf is the outcome box of a page, for messages.
func flashOf(page string) string {
	i := strings.Index(page, `id="flash"`)
	if i < 0 {
		return "(no outcome on the page)"
	}
	end := strings.Index(page[i:], "</div>")
	if end < 0 {
		return page[i:]
	}
	return page[i : i+end]
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// msgOf is the outcome's message, as text.
func msgOf(page string) string {
	f := flashOf(page)
	i := strings.Index(f, `<p class="msg">`)
	if i < 0 {
		return f
	}
	f = f[i+len(`<p class="msg">`):]
	if j := strings.Index(f, "</p>"); j >= 0 {
		f = f[:j]
	}
	return html.UnescapeString(f)
}
