package review

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/agent/agenttest"
	"github.com/orchdev/orch/internal/agent/codegen"
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/phasetest"
)

func TestAggregateCodeReview(t *testing.T) {
	ok := CodeAnswer{OK: true, Issues: []CodeAnswerIssue{}}
	minor := CodeAnswer{OK: true, Summary: " fine ", Issues: []CodeAnswerIssue{{Severity: "minor", Kind: "style", File: "a.go", Line: 3, Message: " rename x "}}}
	blockingButOK := CodeAnswer{OK: true, Issues: []CodeAnswerIssue{{Severity: "blocking", Kind: "security", Message: "injection"}}}
	notOK := CodeAnswer{OK: false, Issues: []CodeAnswerIssue{{Severity: "major", Kind: "test", Message: "no test"}}}
	cases := []struct {
		name     string
		in       []CodePersonaAnswer
		wantOK   bool
		issues   int
		blocking []int
	}{
		{"nobody", nil, false, 0, nil},
		{"all ok", []CodePersonaAnswer{{"correctness", ok}, {"tests", ok}}, true, 0, []int{0, 0}},
		{"minor issues keep ok", []CodePersonaAnswer{{"correctness", ok}, {"style", minor}}, true, 1, []int{0, 0}},
		{"a blocking issue overrides ok", []CodePersonaAnswer{{"security", blockingButOK}, {"tests", ok}}, false, 1, []int{1, 0}},
		{"one reviewer not ok", []CodePersonaAnswer{{"correctness", ok}, {"tests", notOK}}, false, 1, []int{0, 0}},
		{"everything", []CodePersonaAnswer{{"a", minor}, {"b", blockingButOK}, {"c", notOK}}, false, 3, []int{0, 1, 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := AggregateCode(tc.in)
			if rec.OK != tc.wantOK || len(rec.Issues) != tc.issues || len(rec.Reviewers) != len(tc.in) {
				t.Fatalf("aggregate %+v", rec)
			}
			for i, v := range rec.Reviewers {
				if v.ID != tc.in[i].Persona || v.OK != tc.in[i].Answer.OK || v.Blocking != tc.blocking[i] || v.Issues != len(tc.in[i].Answer.Issues) {
					t.Errorf("reviewer %d: %+v", i, v)
				}
			}
			// Every issue is tagged with its reviewer, in reviewer order.
			n := 0
			for _, a := range tc.in {
				for _, is := range a.Answer.Issues {
					got := rec.Issues[n]
					if got.Reviewer != a.Persona || got.Severity != is.Severity || got.Message != strings.TrimSpace(is.Message) {
						t.Errorf("issue %d: %+v", n, got)
					}
					n++
				}
			}
			// The record is what `orch next` reads, with the same verdict.
			data, err := json.Marshal(rec)
			if err != nil {
				t.Fatal(err)
			}
			cr, err := artifact.DecodeCodeReview(artifact.CodeReviewFile, data)
			if err != nil {
				t.Fatal(err)
			}
			if passes := cr.OK && len(cr.BlockingIssues()) == 0; passes != tc.wantOK {
				t.Errorf("decoded verdict %v, want %v", passes, tc.wantOK)
			}
		})
	}
}

func TestCheckCodeReviewerAnswer(t *testing.T) {
	paths := map[string]bool{"calc.go": true, "old.go": true}
	cases := []struct{ name, raw, want string }{
		{"ok", `{"ok":true,"issues":[]}`, ""},
		{"issue", `{"ok":false,"summary":"s","issues":[{"severity":"major","kind":"code","file":"calc.go","line":4,"message":"m"}]}`, ""},
		{"no file", `{"ok":false,"issues":[{"severity":"blocking","kind":"plan","message":"the plan is wrong"}]}`, ""},
		{"missing ok", `{"issues":[]}`, "ok: missing"},
		{"missing issues", `{"ok":true}`, "issues: missing"},
		{"bad severity", `{"ok":true,"issues":[{"severity":"critical","kind":"code","message":"m"}]}`, "issues[0].severity"},
		{"bad kind", `{"ok":true,"issues":[{"severity":"minor","kind":"perf","message":"m"}]}`, "issues[0].kind"},
		{"no kind", `{"ok":true,"issues":[{"severity":"minor","message":"m"}]}`, "issues[0].kind"},
		{"file outside the diff", `{"ok":true,"issues":[{"severity":"minor","kind":"code","file":"other.go","message":"m"}]}`, `"other.go" is not a path of the diff`},
		{"negative line", `{"ok":true,"issues":[{"severity":"minor","kind":"code","file":"calc.go","line":-1,"message":"m"}]}`, "issues[0].line"},
		{"blank message", `{"ok":true,"issues":[{"severity":"minor","kind":"code","message":"  "}]}`, "issues[0].message is blank"},
		{"wrong type", `{"ok":"yes","issues":[]}`, "does not match the schema"},
	}
	check := func(raw []byte) (CodeAnswer, error) { return CheckCodeAnswer(raw, paths) }
	for _, tc := range cases {
		agenttest.CheckAnswer(t, tc.name, check, tc.raw, tc.want)
	}
}

func FuzzCheckCodeReviewerAnswer(f *testing.F) {
	f.Add([]byte(`{"ok":true,"issues":[]}`))
	f.Add([]byte(`{"ok":false,"issues":[{"severity":"blocking","kind":"plan","file":"a.go","line":2,"message":"m"}]}`))
	f.Add([]byte(`{"ok":true,"issues":[{"severity":"x","kind":"y","file":"../z","line":-5,"message":""}]}`))
	paths := map[string]bool{"a.go": true}
	f.Fuzz(func(t *testing.T, raw []byte) {
		a, err := CheckCodeAnswer(raw, paths)
		if err != nil {
			return
		}
		for _, is := range a.Issues {
			if !slices.Contains(codeReviewSeverities, is.Severity) || !slices.Contains(codeReviewKinds, is.Kind) ||
				(is.File != "" && !paths[is.File]) || is.Line < 0 || strings.TrimSpace(is.Message) == "" {
				t.Fatalf("accepted %+v", is)
			}
		}
		// Whatever was accepted aggregates into a valid artifact.
		data, err := json.Marshal(AggregateCode([]CodePersonaAnswer{{"p", a}}))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := artifact.DecodeCodeReview(artifact.CodeReviewFile, data); err != nil {
			t.Fatalf("aggregate of an accepted answer is invalid: %v", err)
		}
	})
}

// TestReviewCodeConcurrentPersonas: the four default personas are asked at
// the same time (each request waits until all four have arrived), and
// their verdicts are aggregated into review/code-review.json and .md.
func TestReviewCodeConcurrentPersonas(t *testing.T) {
	f := agenttest.NewCodeEnv(t, nil)
	if _, err := phasetest.Run(context.Background(), f.O, f.ID, codegen.Worker{RT: f.ScriptRuntime(agenttest.CodegenEntry)}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	arrived := 0
	all := make(chan struct{})
	persona := regexp.MustCompile(`persona "([a-z]+)"`)
	api := agenttest.NewAnthropicAPI(t, func(_ int, body map[string]any) any {
		mu.Lock()
		arrived++
		first := arrived == 1
		if arrived == 4 {
			close(all)
		}
		mu.Unlock()
		// The first persona's call goes alone (it warms the prompt
		// cache); the other three are then in flight together.
		if !first {
			select {
			case <-all:
			case <-time.After(30 * time.Second):
				t.Errorf("the reviewers were not asked concurrently")
			}
		}
		m := persona.FindStringSubmatch(agenttest.UserText(body))
		if m == nil {
			t.Errorf("no persona in the prompt")
			return map[string]any{"ok": true, "issues": []any{}}
		}
		if first && m[1] != "correctness" {
			t.Errorf("the first call is %s's, want the first configured persona's", m[1])
		}
		if m[1] == "security" {
			return map[string]any{"ok": false, "summary": "unsafe", "issues": []any{map[string]any{"severity": "blocking", "kind": "security", "file": "calc.go", "line": 4, "message": "validate the input"}}}
		}
		return map[string]any{"ok": true, "summary": m[1] + " is fine", "issues": []any{}}
	})
	rt := api.Runtime(f)
	rt.Config.Review.Calls = config.ReviewCallsPerPersona
	pr, out, err := orchestrator.Run(context.Background(), f.O, f.ID, CodeWorker{RT: rt})
	if err != nil {
		t.Fatal(err)
	}
	if pr.Entered == nil || pr.Entered.To != lifecycle.Review {
		t.Errorf("review did not enter from codegen: %+v", pr.Entered)
	}
	reqs := api.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests", len(reqs))
	}
	prompt := agenttest.UserText(reqs[0])
	for _, want := range []string{"Make Add add", "+func Add(a, b int) int { return a + b }", "calc_test.go"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("review prompt lacks %q", want)
		}
	}
	rec := out.Value.Review
	if rec.OK || len(rec.Issues) != 1 || rec.Issues[0].Reviewer != "security" || len(rec.Reviewers) != 4 {
		t.Errorf("review %+v", rec)
	}
	for i, want := range []string{"correctness", "tests", "security", "maintainability"} {
		if rec.Reviewers[i].ID != want {
			t.Errorf("reviewer %d is %s, want %s (config order)", i, rec.Reviewers[i].ID, want)
		}
	}
	cr := artifact.LoadCodeReview(f.Task.Dir)
	if !cr.OK() || cr.Value.OK || len(cr.Value.BlockingIssues()) != 1 {
		t.Fatalf("code-review.json %+v", cr)
	}
	md := f.Read("review/code-review.md")
	if !strings.Contains(md, "changes requested") || !strings.Contains(md, "validate the input") || !strings.Contains(md, "`calc.go:4`") {
		t.Errorf("code-review.md:\n%s", md)
	}
	roles := map[string]bool{}
	for _, c := range f.ModelCalls() {
		if c["phase"] == "review" {
			roles[c["role"].(string)] = true
		}
	}
	if len(roles) != 4 || !roles["code_reviewer:security"] {
		t.Errorf("model_call roles %v", roles)
	}
	if to := f.Next(); to != lifecycle.Codegen {
		t.Errorf("orch next → %s, want codegen", to)
	}
	f.NoKeyOnDisk()
}

// TestReviewCodeRoutes: the aggregated verdict routes `orch next`.
func TestReviewCodeRoutes(t *testing.T) {
	okAll := agenttest.Entry{Role: "code_reviewer", JSON: `{"ok":true,"summary":"fine","issues":[{"severity":"info","kind":"style","message":"nice"}]}`}
	cases := []struct {
		name    string
		entries []agenttest.Entry
		ok      bool
		want    lifecycle.Phase
	}{
		{"ok → test", []agenttest.Entry{okAll}, true, lifecycle.Test},
		{"not ok → codegen", []agenttest.Entry{{Role: "code_reviewer:tests", JSON: `{"ok":false,"issues":[{"severity":"major","kind":"test","file":"calc_test.go","message":"test the negative case"}]}`}, okAll}, false, lifecycle.Codegen},
		{"blocking plan issue → planning", []agenttest.Entry{{Role: "code_reviewer:correctness", JSON: `{"ok":false,"issues":[{"severity":"blocking","kind":"plan","message":"the plan forgets overflow"}]}`}, okAll}, false, lifecycle.Planning},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := agenttest.NewCodeEnv(t, nil)
			rt := f.ScriptRuntime(append([]agenttest.Entry{agenttest.CodegenEntry}, tc.entries...)...)
			if _, err := phasetest.Run(context.Background(), f.O, f.ID, codegen.Worker{RT: rt}); err != nil {
				t.Fatal(err)
			}
			if to := f.Next(); to != lifecycle.Review {
				t.Fatalf("next → %s", to)
			}
			res, err := phasetest.Run(context.Background(), f.O, f.ID, CodeWorker{RT: rt})
			if err != nil {
				t.Fatal(err)
			}
			if res.Review.OK != tc.ok || len(res.Review.Reviewers) != 4 {
				t.Errorf("review %+v", res.Review)
			}
			if to := f.Next(); to != tc.want {
				t.Errorf("orch next → %s, want %s", to, tc.want)
			}
		})
	}
}

// TestReviewCodeInvalidAnswerFailsThePhase: a reviewer that keeps naming
// a file outside the diff fails the phase; no review is written.
func TestReviewCodeInvalidAnswerFailsThePhase(t *testing.T) {
	f := agenttest.NewCodeEnv(t, nil)
	bad := agenttest.Entry{Role: "code_reviewer:security", JSON: `{"ok":true,"issues":[{"severity":"minor","kind":"security","file":"/etc/passwd","message":"m"}]}`}
	rt := f.ScriptRuntime(agenttest.CodegenEntry, bad, bad, bad, agenttest.Entry{Role: "code_reviewer", JSON: `{"ok":true,"issues":[]}`})
	if _, err := phasetest.Run(context.Background(), f.O, f.ID, codegen.Worker{RT: rt}); err != nil {
		t.Fatal(err)
	}
	_, err := phasetest.Run(context.Background(), f.O, f.ID, CodeWorker{RT: rt})
	if err == nil || !strings.Contains(err.Error(), "reviewer security") || !strings.Contains(err.Error(), "is not a path of the diff") {
		t.Fatalf("error %v", err)
	}
	if f.Exists(artifact.CodeReviewFile) {
		t.Errorf("a review was written")
	}
	if f.Phase() != "review" {
		t.Errorf("phase %s", f.Phase())
	}
}

func TestReviewCodeRefusesBadPersona(t *testing.T) {
	f := agenttest.NewCodeEnv(t, nil)
	rt := f.ScriptRuntime(agenttest.CodegenEntry)
	rt.Config.Review.CodePersonas = []string{"correctness", "../../x"}
	_, err := phasetest.Run(context.Background(), f.O, f.ID, CodeWorker{RT: rt})
	if err == nil || !strings.Contains(err.Error(), "review.code_personas") {
		t.Fatalf("error %v", err)
	}
}

// TestReviewCodePanelDecidesAsPerPersona: the gate decides exactly as
// before on the same verdicts, whether the code-review panel answers in one
// conversation or persona by persona: the same code-review.json, the same
// `orch next`.
func TestReviewCodePanelDecidesAsPerPersona(t *testing.T) {
	okV := map[string]any{"ok": true, "summary": "fine", "issues": []any{}}
	issue := func(severity, kind, msg string) map[string]any {
		return map[string]any{"severity": severity, "kind": kind, "file": "calc.go", "line": 4, "message": msg}
	}
	for _, tc := range []struct {
		name     string
		verdicts map[string]map[string]any // persona → verdict; others ok
		next     lifecycle.Phase
	}{
		{"all ok", nil, lifecycle.Test},
		{"ok with a minor", map[string]map[string]any{"maintainability": {"ok": true, "summary": "name it", "issues": []any{issue("minor", "style", "rename x")}}}, lifecycle.Test},
		{"one not ok", map[string]map[string]any{"tests": {"ok": false, "issues": []any{issue("major", "test", "test the negative case")}}}, lifecycle.Codegen},
		{"blocking but ok", map[string]map[string]any{"security": {"ok": true, "issues": []any{issue("blocking", "security", "validate the input")}}}, lifecycle.Codegen},
		{"blocking plan issue", map[string]map[string]any{"correctness": {"ok": false, "issues": []any{issue("blocking", "plan", "the plan forgets overflow")}}}, lifecycle.Planning},
		{"two not ok", map[string]map[string]any{"tests": {"ok": false, "issues": []any{issue("major", "test", "x")}}, "security": {"ok": false, "issues": []any{issue("blocking", "security", "y")}}}, lifecycle.Codegen},
	} {
		t.Run(tc.name, func(t *testing.T) {
			verdict := func(p string) map[string]any {
				if v, found := tc.verdicts[p]; found {
					return v
				}
				return okV
			}
			persona := regexp.MustCompile(`persona "([a-z]+)"`)
			baseRE := regexp.MustCompile(`"base": "[0-9a-f]{40}"`)
			var files [2]string
			for i, calls := range []string{config.ReviewCallsPanel, config.ReviewCallsPerPersona} {
				f := agenttest.NewCodeEnv(t, nil)
				if _, err := phasetest.Run(context.Background(), f.O, f.ID, codegen.Worker{RT: f.ScriptRuntime(agenttest.CodegenEntry)}); err != nil {
					t.Fatal(err)
				}
				api := agenttest.NewAnthropicAPI(t, func(_ int, body map[string]any) any {
					tools, _ := json.Marshal(body["tools"])
					if strings.Contains(string(tools), `"reviews"`) {
						var reviews []any
						for _, p := range []string{"correctness", "tests", "security", "maintainability"} {
							v := map[string]any{"persona": p}
							for k, x := range verdict(p) {
								v[k] = x
							}
							reviews = append(reviews, v)
						}
						return map[string]any{"reviews": reviews}
					}
					m := persona.FindStringSubmatch(agenttest.UserText(body))
					if m == nil {
						t.Errorf("%s: no persona in a per-persona prompt", calls)
						return okV
					}
					return verdict(m[1])
				})
				rt := api.Runtime(f)
				rt.Config.Review.Calls = calls
				if _, err := phasetest.Run(context.Background(), f.O, f.ID, CodeWorker{RT: rt}); err != nil {
					t.Fatal(err)
				}
				if n, want := len(api.Requests()), map[string]int{config.ReviewCallsPanel: 1, config.ReviewCallsPerPersona: 4}[calls]; n != want {
					t.Errorf("%s: %d requests, want %d", calls, n, want)
				}
				// base is each task's own repository commit (two
				// repositories, made at different times); the rest must
				// match byte for byte.
				files[i] = baseRE.ReplaceAllString(f.Read(artifact.CodeReviewFile), `"base": "…"`)
				if to := f.Next(); to != tc.next {
					t.Errorf("%s: orch next → %s, want %s", calls, to, tc.next)
				}
			}
			if files[0] != files[1] {
				t.Errorf("code-review.json differs:\npanel:\n%s\nper persona:\n%s", files[0], files[1])
			}
		})
	}
}

// The same finding from several reviewers (same place, same text, blanks
// and case aside) is one finding with every reviewer and the most severe
// severity; anything else stays apart. The Markdown lists it once.
func TestMergeFindings(t *testing.T) {
	is := func(rev, sev, file string, line int, msg string) CodeIssue {
		return CodeIssue{Issue: artifact.Issue{Severity: sev, Kind: "code", File: file, Line: line, Message: msg}, Reviewer: rev}
	}
	for _, tc := range []struct {
		name string
		in   []CodeIssue
		want []string // "severity place: message by"
	}{
		{"four reviewers, one finding", []CodeIssue{
			is("security", "minor", "a.go", 3, "Unchecked error"),
			is("risk", "major", "a.go", 3, "unchecked  error"),
			is("testing", "minor", "a.go", 3, "unchecked error "),
			is("architecture", "info", "a.go", 3, "Unchecked error"),
		}, []string{"major a.go:3: Unchecked error by security, risk, testing, architecture (4 reviewers)"}},
		{"another line, another file, another text", []CodeIssue{
			is("security", "minor", "a.go", 3, "unchecked error"),
			is("risk", "minor", "a.go", 4, "unchecked error"),
			is("risk", "minor", "b.go", 3, "unchecked error"),
			is("testing", "minor", "a.go", 3, "no test"),
		}, []string{"minor a.go:3: unchecked error by security", "minor a.go:4: unchecked error by risk", "minor b.go:3: unchecked error by risk", "minor a.go:3: no test by testing"}},
		{"one reviewer twice", []CodeIssue{
			is("risk", "minor", "", 0, "too big"),
			is("risk", "blocking", "", 0, "too big"),
		}, []string{"blocking : too big by risk"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, f := range MergeFindings(tc.in) {
				got = append(got, fmt.Sprintf("%s %s: %s by %s", f.Severity, f.Place(), f.Message, f.By()))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("MergeFindings:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
	md := CodeMarkdown(CodeRecord{Issues: []CodeIssue{is("security", "minor", "a.go", 3, "unchecked error"), is("risk", "minor", "a.go", 3, "unchecked error")}})
	if strings.Count(md, "unchecked error") != 1 || !strings.Contains(md, "(code, security, risk (2 reviewers)) `a.go:3`: unchecked error") {
		t.Errorf("CodeMarkdown:\n%s", md)
	}
}
