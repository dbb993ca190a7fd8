package review

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/agent/agenttest"
	"github.com/orchdev/orch/internal/agent/planner"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/phasetest"
)

// TestKeysNeverWritten runs planning, an answer and the plan review
// against an OpenAI-compatible server with a key in the environment, then
// searches every file under .orch/ for it.
func TestKeysNeverWritten(t *testing.T) {
	const key = "sk-proj-FAKE-4f9d2c7e1b8a6d3f0e5c9b2a7d4e1f8c"
	round := 0
	api := agenttest.NewOpenAIAPI(t, func(r agenttest.ChatRequest) string {
		if r.ResponseFormat.JSONSchema.Name == "plan_review" {
			return agenttest.JSONOf(t, agenttest.PanelAnswer(agenttest.PlanPersonas, func(string) map[string]any { return agenttest.Verdict(true, "info", "approve") }))
		}
		round++
		if round == 1 {
			return agenttest.JSONOf(t, agenttest.PlannerAnswer("Retry", nil, agenttest.Question("q1", "How many attempts?", true)))
		}
		return agenttest.JSONOf(t, agenttest.PlannerAnswer("Retry", []map[string]any{agenttest.FileEntry("fetch/fetch.go", "update")}, agenttest.Question("q1", "How many attempts?", true)))
	})
	e := agenttest.NewPlanEnv(t, nil, agenttest.Brief, api.Config())
	e.Env["OPENAI_API_KEY"] = key
	if _, err := phasetest.Run(agenttest.Ctx, e.O, e.ID, planner.Worker{RT: e.Runtime()}); err != nil {
		t.Fatal(err)
	}
	if err := planner.Answer(agenttest.Ctx, e.O, e.ID, "q1", "three"); err != nil {
		t.Fatal(err)
	}
	if _, err := phasetest.Run(agenttest.Ctx, e.O, e.ID, planner.Worker{RT: e.Runtime()}); err != nil {
		t.Fatal(err)
	}
	if _, err := phasetest.Run(agenttest.Ctx, e.O, e.ID, PlanWorker{RT: e.Runtime()}); err != nil {
		t.Fatal(err)
	}
	headers := api.ReceivedHeaders()
	for i, h := range headers {
		if h.Get("Authorization") != "Bearer "+key {
			t.Errorf("request %d was not authorized with the key", i)
		}
	}
	n := len(headers)
	if n != 3 {
		t.Errorf("%d requests, want 2 planner + 1 for the panel of 5 reviewers", n)
	}
	files := 0
	err := filepath.WalkDir(e.P.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(data, []byte(key)) || bytes.Contains(data, []byte(key[8:])) {
			t.Errorf("%s contains the API key", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 10 {
		t.Errorf("only %d files under .orch/: the search looked at nothing", files)
	}
}

// TestPlanSeesFeedbackAndAnswers: after a review asking for changes and a
// return to planning, the next round's prompt holds the reviewers' issues,
// the answers and the minutes.
func TestPlanSeesFeedbackAndAnswers(t *testing.T) {
	var users []string
	calls := 0
	api := agenttest.NewOpenAIAPI(t, func(r agenttest.ChatRequest) string {
		if r.ResponseFormat.JSONSchema.Name == "plan_review" {
			return agenttest.JSONOf(t, agenttest.PanelAnswer(agenttest.PlanPersonas, func(p string) map[string]any {
				if p == "risk" {
					return agenttest.Verdict(false, "major", "revise", "handle context cancellation between attempts")
				}
				return agenttest.Verdict(true, "info", "approve")
			}))
		}
		calls++
		users = append(users, r.User())
		return agenttest.JSONOf(t, agenttest.PlannerAnswer("Retry", []map[string]any{agenttest.FileEntry("fetch/fetch.go", "update")}))
	})
	e := agenttest.NewPlanEnv(t, nil, agenttest.Brief, api.Config())
	e.Env["OPENAI_API_KEY"] = "sk-test-feedback"
	if _, err := phasetest.Run(agenttest.Ctx, e.O, e.ID, planner.Worker{RT: e.Runtime()}); err != nil {
		t.Fatal(err)
	}
	rv, err := phasetest.Run(agenttest.Ctx, e.O, e.ID, PlanWorker{RT: e.Runtime()})
	if err != nil {
		t.Fatal(err)
	}
	if rv.Review.OK || rv.Review.Blocked {
		t.Fatalf("review %+v", rv.Review)
	}
	nr, err := e.O.Next(agenttest.Ctx, e.ID, orchestrator.NextRequest{})
	if err != nil || nr.To != lifecycle.Planning {
		t.Fatalf("next after a review asking for changes: %+v %v", nr, err)
	}
	if st := e.State(); st.Actors["planning"].Status != lifecycle.PlanWorkshop {
		t.Errorf("planning status after the return: %v", st.Actors["planning"].Status)
	}
	if _, err := phasetest.Run(agenttest.Ctx, e.O, e.ID, planner.Worker{RT: e.Runtime()}); err != nil {
		t.Fatal(err)
	}
	if calls != 2 {
		t.Fatalf("%d planner calls", calls)
	}
	second := users[1]
	for _, want := range []string{"handle context cancellation between attempts", `<data name="current-plan"`, `<data name="meeting"`, "round 1 → review_ready"} {
		if !strings.Contains(second, want) {
			t.Errorf("round 2 prompt lacks %q", want)
		}
	}
	if st := e.State(); st.Actors["planning"].Round != 2 || st.Actors["planning"].Status != lifecycle.PlanReviewReady {
		t.Errorf("actors.planning %v", st.Actors["planning"])
	}
}
