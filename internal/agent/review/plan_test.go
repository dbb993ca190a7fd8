package review

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/agent/agenttest"
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/phasetest"
)

func TestAggregatePlanReview(t *testing.T) {
	v := func(ok bool, severity string) PlanVerdict {
		return PlanVerdict{ID: "r", OK: ok, Severity: severity}
	}
	tests := []struct {
		name        string
		verdicts    []PlanVerdict
		ok, blocked bool
	}{
		{"all ok", []PlanVerdict{v(true, "info"), v(true, "minor"), v(true, "info")}, true, false},
		{"one not ok, minor", []PlanVerdict{v(true, "info"), v(false, "minor"), v(true, "info")}, false, false},
		{"one not ok, major", []PlanVerdict{v(true, "info"), v(false, "major")}, false, false},
		{"one blocking", []PlanVerdict{v(true, "info"), v(false, "blocking"), v(true, "info")}, false, true},
		{"blocking and minor", []PlanVerdict{v(false, "minor"), v(false, "blocking")}, false, true},
		{"ok with a minor remark", []PlanVerdict{v(true, "minor")}, true, false},
		{"no reviewers", nil, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ok, blocked := AggregatePlan(tc.verdicts)
			if ok != tc.ok || blocked != tc.blocked {
				t.Errorf("got ok=%v blocked=%v, want ok=%v blocked=%v", ok, blocked, tc.ok, tc.blocked)
			}
		})
	}
}

// TestReviewPlanRouting runs the five default personas (script provider)
// and checks the aggregate and where `orch next` goes.
func TestReviewPlanRouting(t *testing.T) {
	ok := agenttest.Verdict(true, "info", "approve")
	tests := []struct {
		name        string
		entries     []any
		wantOK      bool
		wantBlocked bool
		next        lifecycle.Phase
	}{
		{"all ok", []any{agenttest.ScriptEntry("plan_reviewer", ok)}, true, false, lifecycle.Codegen},
		{"one minor not ok", []any{
			agenttest.ScriptEntry("plan_reviewer:testing", agenttest.Verdict(false, "minor", "revise", "name the failure cases")),
			agenttest.ScriptEntry("plan_reviewer", ok),
		}, false, false, lifecycle.Planning},
		{"one blocking", []any{
			agenttest.ScriptEntry("plan_reviewer:risk", agenttest.Verdict(false, "blocking", "reject", "retrying POST is unsafe")),
			agenttest.ScriptEntry("plan_reviewer", ok),
		}, false, true, lifecycle.Planning},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := agenttest.NewPlanEnv(t, nil, agenttest.Brief, agenttest.ScriptConfig(t, tc.entries...))
			e.WriteTaskFile(artifact.PlanFile, agenttest.ReadyPlan)
			pr, out, err := orchestrator.Run(agenttest.Ctx, e.O, e.ID, PlanWorker{RT: e.Runtime()})
			if err != nil {
				t.Fatal(err)
			}
			res := out.Value
			if pr.Entered == nil || pr.Entered.To != lifecycle.PlanReview {
				t.Errorf("planning → plan_review not taken: %+v", pr.Entered)
			}
			r := res.Review
			if r.OK != tc.wantOK || r.Blocked != tc.wantBlocked {
				t.Fatalf("aggregate ok=%v blocked=%v", r.OK, r.Blocked)
			}
			var ids []string
			for _, v := range r.Reviewers {
				ids = append(ids, v.ID)
				if v.Role != "plan_reviewer:"+v.ID {
					t.Errorf("role %q", v.Role)
				}
			}
			if want := []string{"product", "architecture", "implementation", "testing", "risk"}; !reflect.DeepEqual(ids, want) {
				t.Errorf("reviewers %v", ids)
			}
			sum := sha256.Sum256([]byte(agenttest.ReadyPlan))
			loaded := artifact.LoadPlanReview(e.TaskDir())
			if !loaded.OK() || loaded.Value.PlanSHA256 != hex.EncodeToString(sum[:]) {
				t.Fatalf("plan-review.json: %+v", loaded)
			}
			if loaded.Value.OK != tc.wantOK || loaded.Value.Blocked != tc.wantBlocked || len(loaded.Value.Reviewers) != 5 {
				t.Errorf("file says %+v", loaded.Value)
			}
			md := string(e.Read("review/plan-review.md"))
			if !strings.Contains(md, "| risk |") {
				t.Errorf("plan-review.md:\n%s", md)
			}
			nr, err := e.O.Next(agenttest.Ctx, e.ID, orchestrator.NextRequest{})
			if err != nil || nr.To != tc.next {
				t.Fatalf("next: %+v %v, want %s", nr, err, tc.next)
			}
		})
	}
}

// TestReviewPlanStaleAfterEdit: a plan edited after its review goes back
// to planning although the review said ok (plan_sha256 differs).
func TestReviewPlanStaleAfterEdit(t *testing.T) {
	e := agenttest.NewPlanEnv(t, nil, agenttest.Brief, agenttest.ScriptConfig(t, agenttest.ScriptEntry("plan_reviewer", agenttest.Verdict(true, "info", "approve"))))
	e.WriteTaskFile(artifact.PlanFile, agenttest.ReadyPlan)
	if _, err := phasetest.Run(agenttest.Ctx, e.O, e.ID, PlanWorker{RT: e.Runtime()}); err != nil {
		t.Fatal(err)
	}
	e.WriteTaskFile(artifact.PlanFile, strings.Replace(agenttest.ReadyPlan, "Retry Fetch", "Retry Fetch twice", 1))
	nr, err := e.O.Next(agenttest.Ctx, e.ID, orchestrator.NextRequest{})
	if err != nil || nr.To != lifecycle.Planning {
		t.Fatalf("next: %+v %v", nr, err)
	}
}

// TestReviewPlanOneFailureFailsAll: a reviewer whose answers stay invalid
// fails the phase; no verdict is written, the raw answer is kept.
func TestReviewPlanOneFailureFailsAll(t *testing.T) {
	bad := map[string]any{"ok": true, "severity": "catastrophic", "decision": "approve"}
	e := agenttest.NewPlanEnv(t, nil, agenttest.Brief, agenttest.ScriptConfig(t,
		agenttest.ScriptEntry("plan_reviewer:architecture", bad), agenttest.ScriptEntry("plan_reviewer:architecture", bad), agenttest.ScriptEntry("plan_reviewer:architecture", bad),
		agenttest.ScriptEntry("plan_reviewer", agenttest.Verdict(true, "info", "approve"))))
	e.WriteTaskFile(artifact.PlanFile, agenttest.ReadyPlan)
	_, err := phasetest.Run(agenttest.Ctx, e.O, e.ID, PlanWorker{RT: e.Runtime()})
	if err == nil || !strings.Contains(err.Error(), "architecture") {
		t.Fatalf("err %v", err)
	}
	if e.Exists(artifact.PlanReviewFile) || e.Exists("review/plan-review.md") {
		t.Error("a partial verdict was written")
	}
	st := e.State()
	if a := st.Actors["plan_review"]; st.Phase != "plan_review" || a.LastRun != "failed" || a.Status != "pending" {
		t.Errorf("state %+v", st)
	}
	if raw := string(e.Read("history/1-plan_review-failed/plan_review/raw/plan_reviewer-architecture.txt")); !strings.Contains(raw, "catastrophic") {
		t.Errorf("raw %s", raw)
	}
}

// TestReviewPlanRefusesOpenQuestion: in plan_review with a plan that has
// an open question, the review is refused before any model call.
func TestReviewPlanRefuses(t *testing.T) {
	e := agenttest.NewPlanEnv(t, nil, agenttest.Brief, agenttest.ScriptConfig(t, agenttest.ScriptEntry("plan_reviewer", agenttest.Verdict(true, "info", "approve"))))
	// Not ready: the normal transition into plan_review does not hold.
	e.WriteTaskFile(artifact.PlanFile, `{"id":"t1","title":"x","brief":"b","questions":[{"id":"q1","text":"?","blocking":true}]}`)
	_, err := phasetest.Run(agenttest.Ctx, e.O, e.ID, PlanWorker{RT: e.Runtime()})
	if !errors.Is(err, exit.ErrRefused) || !strings.Contains(err.Error(), "q1") {
		t.Fatalf("err %v", err)
	}
	if e.State().Phase != "planning" {
		t.Error("phase changed")
	}

	// A persona that would name a file outside review/ never gets past
	// the configuration.
	cfg := "[review]\nplan_personas = [\"../evil\"]\n"
	if _, err := config.Parse("config.toml", []byte(cfg)); err == nil || !strings.Contains(err.Error(), "../evil") {
		t.Fatalf("persona ../evil: %v", err)
	}
}

// TestReviewPlanConcurrent proves the five reviewers are called at the
// same time: the server holds every request until five are in flight.
func TestReviewPlanConcurrent(t *testing.T) {
	var mu = make(chan struct{}, 1)
	var personas []string
	personaRE := regexp.MustCompile(`as the (\w+) reviewer`)
	api := agenttest.NewOpenAIAPI(t, func(r agenttest.ChatRequest) string {
		m := personaRE.FindStringSubmatch(r.All())
		mu <- struct{}{}
		if m != nil {
			personas = append(personas, m[1])
		}
		<-mu
		return agenttest.JSONOf(t, agenttest.Verdict(true, "info", "approve"))
	})
	// The first persona's call goes alone (it warms the provider's prompt
	// cache); the other four are then in flight together.
	api.Warm, api.Barrier = 1, 4
	e := agenttest.NewPlanEnv(t, nil, agenttest.Brief, api.Config()+"\n[review]\ncalls = \"per_persona\"\n")
	e.Env["OPENAI_API_KEY"] = "sk-test-concurrent"
	e.WriteTaskFile(artifact.PlanFile, agenttest.ReadyPlan)
	res, err := phasetest.Run(agenttest.Ctx, e.O, e.ID, PlanWorker{RT: e.Runtime()})
	if err != nil {
		t.Fatal(err)
	}
	peak := api.PeakInFlight()
	if peak != 4 {
		t.Errorf("at most %d reviewer calls were in flight at once, want 4 (after the first)", peak)
	}
	if len(personas) != 5 || personas[0] != "product" {
		t.Errorf("personas asked %v, the first configured one first", personas)
	}
	got := append([]string(nil), personas...)
	sort.Strings(got)
	if want := []string{"architecture", "implementation", "product", "risk", "testing"}; !reflect.DeepEqual(got, want) {
		t.Errorf("personas asked %v", got)
	}
	if !res.Review.OK {
		t.Errorf("review %+v", res.Review)
	}
	// Every reviewer saw the same plan bytes.
	for _, r := range api.Received() {
		if !strings.Contains(r.User(), strings.TrimSpace(agenttest.ReadyPlan)) {
			t.Error("a reviewer did not get the plan as reviewed")
		}
	}
}

// TestReviewPlanPanel: by default the panel is one conversation whose
// answer carries every persona's verdict; the artifact keeps each one.
func TestReviewPlanPanel(t *testing.T) {
	api := agenttest.NewOpenAIAPI(t, func(r agenttest.ChatRequest) string {
		return agenttest.JSONOf(t, agenttest.PanelAnswer(agenttest.PlanPersonas, func(p string) map[string]any {
			return agenttest.Verdict(true, "info", "approve")
		}))
	})
	e := agenttest.NewPlanEnv(t, nil, agenttest.Brief, api.Config())
	e.Env["OPENAI_API_KEY"] = "sk-test-panel"
	e.WriteTaskFile(artifact.PlanFile, agenttest.ReadyPlan)
	res, err := phasetest.Run(agenttest.Ctx, e.O, e.ID, PlanWorker{RT: e.Runtime()})
	if err != nil {
		t.Fatal(err)
	}
	reqs := api.Received()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1 for the panel", len(reqs))
	}
	for _, p := range agenttest.PlanPersonas {
		if !strings.Contains(reqs[0].All(), "- "+p+": ") {
			t.Errorf("the panel's prompt does not name %s with its focus", p)
		}
	}
	if len(res.Review.Reviewers) != 5 || res.Review.Reviewers[4].ID != "risk" || res.Review.Reviewers[4].Role != "plan_reviewer:risk" || !res.Review.OK {
		t.Errorf("review %+v", res.Review)
	}
}

// The gate decides exactly as before on the same verdicts, whether the
// panel answers in one conversation or persona by persona.
func TestReviewPlanPanelDecidesAsPerPersona(t *testing.T) {
	ok := agenttest.Verdict(true, "info", "approve")
	for _, tc := range []struct {
		name     string
		verdicts map[string]map[string]any // persona → verdict; others ok
		next     lifecycle.Phase
	}{
		{"all ok", nil, lifecycle.Codegen},
		{"ok with a minor", map[string]map[string]any{"product": agenttest.Verdict(true, "minor", "approve")}, lifecycle.Codegen},
		{"one minor not ok", map[string]map[string]any{"testing": agenttest.Verdict(false, "minor", "revise", "name the failure cases")}, lifecycle.Planning},
		{"one blocking", map[string]map[string]any{"risk": agenttest.Verdict(false, "blocking", "reject", "retrying POST is unsafe")}, lifecycle.Planning},
		{"two not ok", map[string]map[string]any{"risk": agenttest.Verdict(false, "major", "revise", "x"), "product": agenttest.Verdict(false, "blocking", "reject", "y")}, lifecycle.Planning},
	} {
		t.Run(tc.name, func(t *testing.T) {
			verdict := func(p string) map[string]any {
				if v, found := tc.verdicts[p]; found {
					return v
				}
				return ok
			}
			var files [2][]byte
			for i, calls := range []string{"panel", "per_persona"} {
				personaRE := regexp.MustCompile(`as the (\w+) reviewer`)
				api := agenttest.NewOpenAIAPI(t, func(r agenttest.ChatRequest) string {
					if m := personaRE.FindStringSubmatch(r.All()); m != nil {
						return agenttest.JSONOf(t, verdict(m[1]))
					}
					return agenttest.JSONOf(t, agenttest.PanelAnswer(agenttest.PlanPersonas, verdict))
				})
				e := agenttest.NewPlanEnv(t, nil, agenttest.Brief, api.Config()+"\n[review]\ncalls = \""+calls+"\"\n")
				e.Env["OPENAI_API_KEY"] = "sk-test"
				e.WriteTaskFile(artifact.PlanFile, agenttest.ReadyPlan)
				if _, err := phasetest.Run(agenttest.Ctx, e.O, e.ID, PlanWorker{RT: e.Runtime()}); err != nil {
					t.Fatal(err)
				}
				if n, want := len(api.Received()), map[string]int{"panel": 1, "per_persona": 5}[calls]; n != want {
					t.Errorf("%s: %d requests, want %d", calls, n, want)
				}
				files[i] = e.Read(artifact.PlanReviewFile)
				nr, err := e.O.Next(agenttest.Ctx, e.ID, orchestrator.NextRequest{})
				if err != nil || nr.To != tc.next {
					t.Fatalf("%s: next %+v %v, want %s", calls, nr, err, tc.next)
				}
			}
			if !bytes.Equal(files[0], files[1]) {
				t.Errorf("plan-review.json differs:\npanel:\n%s\nper persona:\n%s", files[0], files[1])
			}
		})
	}
}

// A panel answer that leaves a persona out, names one twice or one that
// is not on the panel is sent back with what is wrong.
func TestPanelAnswerChecked(t *testing.T) {
	p := reviewPanel[PlanVerdict]{Validate: func(persona string, raw []byte) (PlanVerdict, error) {
		v, err := validateReviewerAnswer(raw)
		v.ID = persona
		return v, err
	}}
	ps := []string{"product", "risk"}
	okV := `"ok":true,"severity":"info","decision":"approve","blocking_issues":[],"suggestions":[]`
	for _, tc := range []struct{ raw, want string }{
		{`{"reviews":[{"persona":"risk",` + okV + `},{"persona":"product",` + okV + `}]}`, ""},
		{`{"reviews":[{"persona":"risk",` + okV + `}]}`, `no entry for reviewer "product"`},
		{`{"reviews":[{"persona":"risk",` + okV + `},{"persona":"risk",` + okV + `},{"persona":"product",` + okV + `}]}`, `reviews[1]: reviewer "risk" has an entry already`},
		{`{"reviews":[{"persona":"ops",` + okV + `},{"persona":"risk",` + okV + `},{"persona":"product",` + okV + `}]}`, `reviews[0].persona: "ops" is not one of the reviewers (product, risk)`},
		{`{"reviews":[{"persona":"risk","ok":true},{"persona":"product",` + okV + `}]}`, `reviews[0] (risk): "severity" is missing`},
		{`{"ok":true}`, `expected an object {"reviews": [...]}`},
	} {
		vs, err := p.validatePanel(ps, []byte(tc.raw))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.raw, err)
		case tc.want == "" && (vs[0].ID != "product" || vs[1].ID != "risk"):
			t.Errorf("%s: answers out of the personas' order: %+v", tc.raw, vs)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want %q", tc.raw, err, tc.want)
		}
	}
}

func TestValidateReviewerAnswer(t *testing.T) {
	tests := []struct {
		raw, err string
	}{
		{`{"ok":true,"severity":"info","decision":"approve","blocking_issues":[],"suggestions":["s"],"summary":"fine"}`, ""},
		{`{"ok":false,"severity":"blocking","decision":"reject","blocking_issues":["unsafe"]}`, ""},
		{`{"ok":false,"severity":"minor","decision":"revise","blocking_issues":["name it"]}`, ""},
		{`{"severity":"info","decision":"approve"}`, `"ok" is missing`},
		{`{"ok":true,"decision":"approve"}`, `"severity" is missing`},
		{`{"ok":true,"severity":"info"}`, `"decision" is missing`},
		{`{"ok":"yes","severity":"info","decision":"approve"}`, "expected an object"},
		{`{"ok":true,"severity":"fatal","decision":"approve"}`, `"severity" must be one of`},
		{`{"ok":true,"severity":"info","decision":"lgtm"}`, `"decision" must be one of`},
		{`{"ok":true,"severity":"info","decision":"revise"}`, `goes with "approve"`},
		{`{"ok":false,"severity":"major","decision":"approve","blocking_issues":["x"]}`, `use "revise" or "reject"`},
		{`{"ok":true,"severity":"blocking","decision":"approve"}`, `severity "blocking"`},
		{`{"ok":true,"severity":"info","decision":"approve","blocking_issues":["x"]}`, `not empty`},
		{`{"ok":false,"severity":"major","decision":"revise","blocking_issues":[]}`, `say what must change`},
		{`{"ok":false,"severity":"major","decision":"revise","blocking_issues":["  "]}`, `is blank`},
		{`{"ok":true,"severity":"info","decision":"approve","suggestions":[3]}`, "expected an object"},
		{`[]`, "expected an object"},
		{`null`, `"ok" is missing`},
	}
	for i, tc := range tests {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			_, err := validateReviewerAnswer([]byte(tc.raw))
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("%s: %v", tc.raw, err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("%s: err %v, want %q", tc.raw, err, tc.err)
			}
		})
	}
}

// FuzzValidateReviewerAnswer: an accepted verdict is consistent and
// aggregates like the contract's reader sees it.
func FuzzValidateReviewerAnswer(f *testing.F) {
	for _, s := range []string{
		`{"ok":true,"severity":"info","decision":"approve"}`,
		`{"ok":false,"severity":"blocking","decision":"reject","blocking_issues":["x"]}`,
		`{"ok":false,"severity":"minor","decision":"revise","blocking_issues":["x"],"suggestions":["y"],"summary":"z"}`,
		`{"ok":1}`, `{}`, `"x"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		v, err := validateReviewerAnswer(raw)
		if err != nil {
			return
		}
		if v.OK == (v.Decision != PlanDecisionApprove) || (v.OK && v.Severity == artifact.SeverityBlocking) || v.OK == (len(v.BlockingIssues) > 0) {
			t.Fatalf("inconsistent verdict accepted: %+v", v)
		}
		v.ID = "r"
		out := PlanFile{PlanSHA256: strings.Repeat("a", 64), Reviewers: []PlanVerdict{v}}
		out.OK, out.Blocked = AggregatePlan(out.Reviewers)
		data, err := agent.IndentJSON(out)
		if err != nil {
			t.Fatal(err)
		}
		r, err := artifact.DecodePlanReview(artifact.PlanReviewFile, data)
		if err != nil {
			t.Fatalf("the contract's decoder refuses: %v\n%s", err, data)
		}
		if r.Blocked != (len(r.BlockingReviewers()) > 0) {
			t.Fatalf("blocked %v but blocking reviewers %v", r.Blocked, r.BlockingReviewers())
		}
	})
}

// BenchmarkReviewPlanFiveReviewers1sLatency: five reviewers against a
// provider answering each call after 1 s: one call as a panel (about
// 1 s); persona by persona (ORCH_BENCH_CALLS=per_persona) the first call
// alone, then the other four together (about 2 s), not 5 s.
func BenchmarkReviewPlanFiveReviewers1sLatency(b *testing.B) {
	api := agenttest.NewOpenAIAPI(b, func(r agenttest.ChatRequest) string {
		if strings.Contains(r.All(), "reviewer, before any code") {
			return agenttest.JSONOf(b, agenttest.Verdict(true, "info", "approve"))
		}
		return agenttest.JSONOf(b, agenttest.PanelAnswer(agenttest.PlanPersonas, func(string) map[string]any { return agenttest.Verdict(true, "info", "approve") }))
	})
	api.Latency = time.Second
	e := agenttest.NewPlanEnv(b, nil, agenttest.Brief, api.Config()+"\n[review]\ncalls = \""+cmp.Or(os.Getenv("ORCH_BENCH_CALLS"), "panel")+"\"\n")
	e.Env["OPENAI_API_KEY"] = "sk-test-bench"
	e.WriteTaskFile(artifact.PlanFile, agenttest.ReadyPlan)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rt := e.Runtime()
		rt.Fresh = true
		if _, err := phasetest.Run(agenttest.Ctx, e.O, e.ID, PlanWorker{RT: rt}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/review")
}

// TestReviewerSchemaIsStrict: the plan reviewer's schema is in OpenAI's
// strict subset, so providers can enforce it.
func TestReviewerSchemaIsStrict(t *testing.T) {
	agenttest.CheckStrictSchema(t, reviewerAnswer{})
}
