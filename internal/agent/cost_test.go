package agent

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/llm"
	"github.com/orchdev/orch/internal/task"
	"github.com/orchdev/orch/internal/work"
)

// costEvents decodes transcript lines the way Task.Transcript does
// (numbers become json.Number).
func costEvents(t *testing.T, lines ...string) []task.Event {
	t.Helper()
	out := make([]task.Event, len(lines))
	for i, l := range lines {
		if err := json.Unmarshal([]byte(l), &out[i]); err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
	}
	return out
}

func TestSumCosts(t *testing.T) {
	const ts = `"ts":"2026-11-25T10:00:00Z","prev":""`
	cases := []struct {
		name   string
		events []task.Event
		want   CostSummary
	}{
		{"no events", nil, CostSummary{Phases: []PhaseCost{}}},
		{"other kinds ignored", costEvents(t, `{"seq":1,`+ts+`,"kind":"transition","tokens_in":5}`), CostSummary{Phases: []PhaseCost{}}},
		{
			"from a transcript",
			costEvents(t,
				`{"seq":1,`+ts+`,"kind":"model_call","phase":"planning","role":"planner","cached":false,"tokens_in":1000,"tokens_out":200,"cost_usd":0.006}`,
				`{"seq":2,`+ts+`,"kind":"model_call","phase":"codegen","role":"codegen","cached":false,"tokens_in":5000,"tokens_out":3000,"cost_usd":0.06,"cached_tokens_in":4000,"cache_write_tokens":600}`,
				`{"seq":3,`+ts+`,"kind":"model_call","phase":"codegen","role":"codegen","cached":true,"tokens_in":5000,"tokens_out":3000}`,
				`{"seq":4,`+ts+`,"kind":"model_call","phase":"review","role":"code_reviewer:tests","cached":false,"tokens_in":700,"tokens_out":50}`,
				`{"seq":5,`+ts+`,"kind":"model_call","phase":"review","role":"code_reviewer:security","cached":false,"tokens_in":0,"tokens_out":0,"error":"timeout"}`,
				`{"seq":6,`+ts+`,"kind":"model_call","role":"x","tokens_in":"many","tokens_out":-4}`,
			),
			CostSummary{
				Phases: []PhaseCost{
					{"planning", CostLine{Calls: 1, TokensIn: 1000, TokensOut: 200, CostUSD: 0.006}},
					{"codegen", CostLine{Calls: 2, CachedCalls: 1, TokensIn: 5000, TokensOut: 3000, CachedTokensIn: 4000, CacheWriteTokens: 600, CostUSD: 0.06}},
					{"review", CostLine{Calls: 2, FailedCalls: 1, TokensIn: 700, TokensOut: 50, UnpricedCalls: 1}},
					{"unknown", CostLine{Calls: 1, UnpricedCalls: 1}},
				},
				Total: CostLine{Calls: 6, CachedCalls: 1, FailedCalls: 1, TokensIn: 6700, TokensOut: 3250, CachedTokensIn: 4000, CacheWriteTokens: 600, CostUSD: 0.066, UnpricedCalls: 2},
			},
		},
		{
			"written by this process",
			[]task.Event{{Kind: "model_call", Data: map[string]any{"phase": "accept", "cached": false, "tokens_in": int64(10), "tokens_out": int64(5), "cost_usd": 0.5}},
				{Kind: "model_call", Data: map[string]any{"phase": "custom", "tokens_in": 3, "tokens_out": 4.0}}},
			CostSummary{
				Phases: []PhaseCost{
					{"accept", CostLine{Calls: 1, TokensIn: 10, TokensOut: 5, CostUSD: 0.5}},
					{"custom", CostLine{Calls: 1, TokensIn: 3, TokensOut: 4, UnpricedCalls: 1}},
				},
				Total: CostLine{Calls: 2, TokensIn: 13, TokensOut: 9, CostUSD: 0.5, UnpricedCalls: 1},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := SumCosts(task.ModelCalls(tc.events))
			// Summed one call at a time, with a summary taken between
			// them (the board's cards): the same, to the last bit.
			var one CostSum
			for _, c := range task.ModelCalls(tc.events) {
				one.Summary()
				one.Add(c)
			}
			if sum := one.Summary(); !reflect.DeepEqual(sum, got) {
				t.Errorf("summed one at a time\n got %+v\nwant %+v", sum, got)
			}
			// The engine's sum of the spend (work.SpentBy, which budgets
			// start from) agrees with the cost summary.
			spent := work.SpentBy(task.ModelCalls(tc.events))
			same := func(what string, s work.Spend, l CostLine) {
				if s.Calls != l.Calls || s.TokensIn != l.TokensIn || s.TokensOut != l.TokensOut || s.LatencyMS != l.LatencyMS || math.Abs(s.CostUSD-l.CostUSD) > 1e-9 {
					t.Errorf("%s: spent %+v, cost line %+v", what, s, l)
				}
			}
			same("total", spent.Total, got.Total)
			for _, p := range got.Phases {
				if p.Phase != "unknown" {
					same(p.Phase, spent.Phase(lifecycle.Phase(p.Phase)), p.CostLine)
				}
			}
			// Costs are sums of floats: compare them with a tolerance.
			if math.Abs(got.Total.CostUSD-tc.want.Total.CostUSD) > 1e-9 {
				t.Errorf("total cost %v, want %v", got.Total.CostUSD, tc.want.Total.CostUSD)
			}
			got.Total.CostUSD, tc.want.Total.CostUSD = 0, 0
			for i := range got.Phases {
				if i < len(tc.want.Phases) && math.Abs(got.Phases[i].CostUSD-tc.want.Phases[i].CostUSD) < 1e-9 {
					got.Phases[i].CostUSD = tc.want.Phases[i].CostUSD
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("sum\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestFormatUSD(t *testing.T) {
	for c, want := range map[float64]string{0: "$0.00", 0.004: "$0.0040", 1.234: "$1.23", 12: "$12.00"} {
		if got := FormatUSD(c); got != want {
			t.Errorf("FormatUSD(%v) = %s, want %s", c, got, want)
		}
	}
}

// An unpriced model's calls are never shown as $0.00.
func TestFormatCostUnpriced(t *testing.T) {
	for _, tc := range []struct {
		l    CostLine
		want string
	}{
		{CostLine{Calls: 2, CostUSD: 0.5}, "$0.50"},
		{CostLine{Calls: 2, TokensIn: 900, UnpricedCalls: 2}, "price unknown"},
		{CostLine{Calls: 3, CostUSD: 0.5, UnpricedCalls: 1}, "$0.50 + unknown"},
		{CostLine{Calls: 1, CachedCalls: 1}, "$0.00"},
	} {
		if got := FormatCost(tc.l); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.l, got, tc.want)
		}
	}
}

// Under a cost budget an unpriced model behind a per-token API is
// refused, not counted as $0; [prices."*"] prices it; a command
// provider's model is not refused.
func TestUnpricedUnderCostBudget(t *testing.T) {
	rt := &Runtime{Config: config.Default()}
	openai := llm.Config{Type: llm.TypeOpenAI, Model: "my-model"}
	err := rt.checkPriced(openai, "my-model")
	var ue *UnpricedError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), `[prices."my-model"]`) || !strings.Contains(err.Error(), "budgets.cost_usd = 0") {
		t.Fatalf("unpriced openai model: %v", err)
	}
	if err := rt.checkPriced(llm.Config{Type: llm.TypeCommand}, "my-model"); err != nil {
		t.Errorf("command provider refused: %v", err)
	}
	rt.Config.Prices = map[string]config.Price{AnyModelPrice: {Input: 1, Output: 2}}
	if err := rt.checkPriced(openai, "my-model"); err != nil {
		t.Errorf(`with [prices."*"]: %v`, err)
	}
	if c, ok := rt.Cost("my-model", llm.Usage{InputTokens: 1_000_000, OutputTokens: 1_000_000}); !ok || c != 3 {
		t.Errorf(`cost at [prices."*"]: %v %v, want 3`, c, ok)
	}
	rt.Config.Prices = nil
	rt.Config.Budgets.CostUSD = 0
	if err := rt.checkPriced(openai, "my-model"); err != nil {
		t.Errorf("without a cost budget: %v", err)
	}
}
