package agent_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/agent/agenttest"
	"github.com/orchdev/orch/internal/agent/planner"
	"github.com/orchdev/orch/internal/agent/review"
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/llm"
	"github.com/orchdev/orch/internal/phasetest"
)

func Kinds(e *agenttest.PlanEnv) []string {
	var ks []string
	for _, ev := range e.Events() {
		ks = append(ks, string(ev.Kind))
	}
	return ks
}

// TestBudgetRefusesBeforeTheCall: a call that would exceed a limit is
// refused before anything is sent; the phase fails with a clear message,
// a budget_exceeded event, and no valid artifact.
func TestBudgetRefusesBeforeTheCall(t *testing.T) {
	q := map[string]any{"id": "q1", "text": "how many?", "blocking": true}
	script := agenttest.ScriptConfig(t,
		agenttest.ScriptEntry("planner", agenttest.PlannerAnswer("Retry", nil, q)),
		agenttest.ScriptEntry("planner", agenttest.PlannerAnswer("Retry", []map[string]any{{"path": "fetch/fetch.go", "intent": "update", "summary": "s"}})))
	e := agenttest.NewPlanEnv(t, nil, agenttest.Brief, "[budgets]\ncalls = 1\n"+script)
	if _, err := phasetest.Run(agenttest.Ctx, e.O, e.ID, planner.Worker{RT: e.Runtime()}); err != nil {
		t.Fatalf("first round within budget: %v", err)
	}
	if err := planner.Answer(agenttest.Ctx, e.O, e.ID, "q1", "3"); err != nil {
		t.Fatal(err)
	}
	_, err := phasetest.Run(agenttest.Ctx, e.O, e.ID, planner.Worker{RT: e.Runtime()})
	var be *agent.BudgetError
	if !errors.As(err, &be) || be.Limit != "calls" || be.Scope != "task" || !strings.Contains(err.Error(), "budgets.calls") {
		t.Fatalf("second round: %v, want a calls budget error naming budgets.calls", err)
	}
	calls, exceeded := 0, 0
	for _, ev := range e.Events() {
		switch ev.Kind {
		case "model_call":
			calls++
		case "budget_exceeded":
			exceeded++
			if ev.Data["limit"] != "calls" || ev.Data["key"] != "budgets.calls" {
				t.Errorf("budget_exceeded event: %v", ev.Data)
			}
		}
	}
	if calls != 1 || exceeded != 1 {
		t.Errorf("%d model calls and %d budget events, want 1 and 1: %v", calls, exceeded, Kinds(e))
	}
	// The refused round changed no artifact: the plan is round 1's, with
	// its answered question.
	pl := artifact.LoadPlan(e.TaskDir())
	if !pl.OK() || len(pl.Value.FilePlan) != 0 {
		t.Errorf("plan after the refused round: %+v", pl)
	}
}

func TestBudgetTokensEstimatedBeforeTheCall(t *testing.T) {
	script := agenttest.ScriptConfig(t, agenttest.ScriptEntry("planner", agenttest.PlannerAnswer("Retry", nil)))
	e := agenttest.NewPlanEnv(t, nil, agenttest.Brief, "[budgets]\ntokens_in = 50\n"+script)
	_, err := phasetest.Run(agenttest.Ctx, e.O, e.ID, planner.Worker{RT: e.Runtime()})
	var be *agent.BudgetError
	if !errors.As(err, &be) || be.Limit != "tokens_in" {
		t.Fatalf("err = %v, want a tokens_in budget error", err)
	}
	for _, ev := range e.Events() {
		if ev.Kind == "model_call" {
			t.Errorf("a model call was made: %v", ev.Data)
		}
	}
}

func TestBudgetPerPhase(t *testing.T) {
	v := agenttest.Verdict(true, "info", "approve")
	script := agenttest.ScriptConfig(t, agenttest.ScriptEntry("plan_reviewer", v))
	e := agenttest.NewPlanEnv(t, nil, agenttest.Brief, "[budgets.phase.plan_review]\ncalls = 3\n"+script)
	e.WriteTaskFile(artifact.PlanFile, agenttest.ReadyPlan)
	_, err := phasetest.Run(agenttest.Ctx, e.O, e.ID, review.PlanWorker{RT: e.Runtime()})
	var be *agent.BudgetError
	if !errors.As(err, &be) || be.Scope != "phase plan_review" || be.Key != "budgets.phase.plan_review.calls" {
		t.Fatalf("five reviewers against a phase limit of 3 calls: %v", err)
	}
	if e.Exists(artifact.PlanReviewFile) {
		t.Error("a partial review was written")
	}
}

func TestBudgetUsesAndWarnings(t *testing.T) {
	b := config.Budgets{Calls: 10, CostUSD: 2, WallTime: config.Duration(100 * time.Second), Phase: map[string]config.Budget{"codegen": {TokensOut: 1000}}}
	sum := agent.CostSummary{
		Phases: []agent.PhaseCost{{Phase: "codegen", CostLine: agent.CostLine{Calls: 9, TokensOut: 500, CostUSD: 1.7, LatencyMS: 20_000}}},
		Total:  agent.CostLine{Calls: 9, TokensOut: 500, CostUSD: 1.7, LatencyMS: 20_000},
	}
	uses := agent.BudgetUses(b, sum)
	got := map[string]float64{}
	for _, u := range uses {
		got[u.Scope+"/"+u.Limit] = u.Percent
	}
	want := map[string]float64{"task/calls": 90, "task/cost_usd": 85, "task/wall_time": 20, "codegen/tokens_out": 50}
	for k, v := range want {
		if g, ok := got[k]; !ok || g < v-0.01 || g > v+0.01 {
			t.Errorf("%s at %.2f%%, want %.0f%%", k, g, v)
		}
	}
	if len(uses) != len(want) {
		t.Errorf("uses %+v", uses)
	}
	w := agent.BudgetWarnings(b, sum)
	if len(w) != 2 || !strings.Contains(w[0]+w[1], "calls at 90%") || !strings.Contains(w[0]+w[1], "cost_usd at 85%") {
		t.Errorf("warnings %q", w)
	}
}

func TestPricesFromConfig(t *testing.T) {
	rt := &agent.Runtime{Config: config.Config{Prices: map[string]config.Price{"my-model": {Input: 1, Output: 2}}}}
	if c, ok := rt.Cost("my-model-7b", usage(1_000_000, 500_000)); !ok || c != 2 {
		t.Errorf("configured price: %v %v", c, ok)
	}
	if c, ok := rt.Cost("gpt-4.1", usage(1_000_000, 0)); !ok || c != 2 {
		t.Errorf("embedded price: %v %v", c, ok)
	}
	if _, ok := rt.Cost("unknown", usage(1, 1)); ok {
		t.Error("an unknown model got a price")
	}
}

func usage(in, out int64) llm.Usage { return llm.Usage{InputTokens: in, OutputTokens: out} }
