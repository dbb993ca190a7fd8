package agent

import (
	"fmt"
	"time"

	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/llm"
	"github.com/orchdev/orch/internal/work"
)

// BudgetError: a model call was refused before it was made because it
// would exceed a limit of [budgets].
type BudgetError struct {
	Scope string // "task" or the phase
	Limit string // calls, tokens_in, tokens_out, cost_usd, wall_time
	Spent string
	Max   string
	Key   string // the configuration key to raise
}

// ExitCode: a refused call is exit 3 (nothing was sent).
func (e *BudgetError) ExitCode() exit.Code { return exit.Refused }

func (e *BudgetError) Error() string {
	return fmt.Sprintf("budget exceeded: the %s's %s would go over its limit (spent %s, limit %s): nothing was sent to the model; raise %s in .orch/config.toml (0 = no limit) and run the phase again",
		e.Scope, e.Limit, e.Spent, e.Max, e.Key)
}

// spend is what a task has used, per phase and in total.
type spend struct {
	total   CostLine
	byPhase map[string]CostLine
}

// ledger returns run in's spend: the task's spend as the engine committed
// it when the run started (in.Spent), kept up to date by the run's calls.
// It is kept per task and run, so that the calls of one run (reviewers in
// parallel, a second ask after tools were refused) see each other's
// bookings; nothing is read from the project. Called with rt.mu held.
func (rt *Runtime) ledger(in work.Input) *spend {
	key := in.Task + "\x00" + in.Run
	if l, ok := rt.spent[key]; ok {
		return l
	}
	line := func(s work.Spend) CostLine {
		return CostLine{Calls: s.Calls, TokensIn: s.TokensIn, TokensOut: s.TokensOut, CostUSD: s.CostUSD, LatencyMS: s.LatencyMS}
	}
	l := &spend{total: line(in.Spent.Total), byPhase: map[string]CostLine{}}
	for p, s := range in.Spent.Phases {
		l.byPhase[string(p)] = line(s)
	}
	rt.spent[key] = l
	return l
}

// Forget drops run in's ledger: a later run with the same key starts
// again from its own Input (the accept advisor, which has no run id).
func (rt *Runtime) Forget(in work.Input) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	delete(rt.spent, in.Task+"\x00"+in.Run)
}

// EstimateTokens is a deliberately generous estimate of a prompt's tokens
// (about 3 characters a token), so that a limit is not crossed by surprise.
func EstimateTokens(req llm.Request) int64 {
	n := len(req.Schema) + len(req.SchemaName)
	for _, m := range req.Messages {
		n += len(m.Content) + 8
		for _, tc := range m.ToolCalls {
			n += len(tc.ID) + len(tc.Name) + len(tc.Arguments) + 8
		}
	}
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	return int64(n/3 + 1)
}

// Reserve checks the budgets before a call of run in and, when it may go ahead,
// books it (the booking is corrected by settle). Concurrent calls of one
// phase (reviewers) see each other's bookings.
func (rt *Runtime) Reserve(in work.Input, model string, req llm.Request) (CostLine, error) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	l, phase := rt.ledger(in), string(in.Phase)
	est := CostLine{Calls: 1, TokensIn: EstimateTokens(req), TokensOut: int64(req.MaxTokens)}
	if c, ok := rt.Cost(model, llm.Usage{InputTokens: est.TokensIn, OutputTokens: est.TokensOut}); ok {
		est.CostUSD = c
	}
	b := rt.Config.Budgets
	if err := overBudget("task", "budgets", b.Task(), l.total, est); err != nil {
		return CostLine{}, err
	}
	if pb, ok := b.Phase[phase]; ok {
		if err := overBudget("phase "+phase, "budgets.phase."+phase, pb, l.byPhase[phase], est); err != nil {
			return CostLine{}, err
		}
	}
	l.book(phase, est, 1)
	return est, nil
}

// Settle replaces run in's booking with what the call answered by resp really
// used.
func (rt *Runtime) Settle(in work.Input, booked CostLine, resp llm.Response) {
	used := CostLine{Calls: 1, TokensIn: resp.Usage.InputTokens, TokensOut: resp.Usage.OutputTokens, LatencyMS: resp.Latency.Milliseconds()}
	if c, ok := rt.Cost(resp.Model, resp.Usage); ok {
		used.CostUSD = c
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	l, phase := rt.ledger(in), string(in.Phase)
	l.book(phase, booked, -1)
	l.book(phase, used, 1)
}

func (l *spend) book(phase string, c CostLine, sign int) {
	apply := func(x *CostLine) {
		x.Calls += sign * c.Calls
		x.TokensIn += int64(sign) * c.TokensIn
		x.TokensOut += int64(sign) * c.TokensOut
		x.CostUSD += float64(sign) * c.CostUSD
		x.LatencyMS += int64(sign) * c.LatencyMS
	}
	apply(&l.total)
	p := l.byPhase[phase]
	apply(&p)
	l.byPhase[phase] = p
}

// overBudget checks spent+next against b.
func overBudget(scope, key string, b config.Budget, spent, next CostLine) error {
	mk := func(limit, s, m string) error {
		return &BudgetError{Scope: scope, Limit: limit, Spent: s, Max: m, Key: key + "." + limit}
	}
	switch {
	case b.Calls > 0 && spent.Calls+next.Calls > b.Calls:
		return mk("calls", fmt.Sprint(spent.Calls), fmt.Sprint(b.Calls))
	case b.TokensIn > 0 && spent.TokensIn+next.TokensIn > b.TokensIn:
		return mk("tokens_in", fmt.Sprintf("%d (+%d for this prompt)", spent.TokensIn, next.TokensIn), fmt.Sprint(b.TokensIn))
	case b.TokensOut > 0 && spent.TokensOut+next.TokensOut > b.TokensOut:
		return mk("tokens_out", fmt.Sprint(spent.TokensOut), fmt.Sprint(b.TokensOut))
	case b.CostUSD > 0 && spent.CostUSD+next.CostUSD > b.CostUSD:
		return mk("cost_usd", FormatUSD(spent.CostUSD), FormatUSD(b.CostUSD))
	case b.WallTime > 0 && time.Duration(spent.LatencyMS)*time.Millisecond >= b.WallTime.Std():
		return mk("wall_time", (time.Duration(spent.LatencyMS) * time.Millisecond).Round(time.Second).String(), b.WallTime.Std().String())
	}
	return nil
}

// Cost prices usage with the configuration's prices, then the embedded
// table.
func (rt *Runtime) Cost(model string, u llm.Usage) (float64, bool) {
	p, ok := llm.PriceOf(model, priceOverrides(rt.Config.Prices))
	if !ok {
		// [prices."*"] prices every model the table does not.
		var any config.Price
		if any, ok = rt.Config.Prices[AnyModelPrice]; !ok {
			return 0, false
		}
		p = llm.Price{Input: any.Input, Output: any.Output, CachedInput: any.CachedInput, CacheWrite: any.CacheWrite}
	}
	return p.Cost(u), true
}

// AnyModelPrice is the [prices] key that prices every model without a
// price of its own.
const AnyModelPrice = "*"

// UnpricedError refuses a call to a model API whose price is not known
// while a cost budget is set: counting it as $0 would let the budget be
// passed unseen.
type UnpricedError struct {
	Model string
}

// ExitCode: a refused call is exit 3 (nothing was sent).
func (e *UnpricedError) ExitCode() exit.Code { return exit.Refused }

func (e *UnpricedError) Error() string {
	return fmt.Sprintf("model %s has no known price and a cost budget is set (budgets.cost_usd): nothing was sent to it; price it in .orch/config.toml ([prices.%q] input = …, output = …, USD per million tokens; 0 for a free local model), or price every unpriced model with [prices.\"*\"], or set budgets.cost_usd = 0",
		e.Model, e.Model)
}

// checkPriced refuses a call to model through an openai or anthropic
// provider (a per-token API) when its price is unknown and a cost budget
// applies. A command or script provider is not refused: its calls show
// their tokens and "price unknown" in orch cost.
func (rt *Runtime) checkPriced(cfg llm.Config, model string) error {
	if cfg.Type != llm.TypeOpenAI && cfg.Type != llm.TypeAnthropic || !rt.hasCostBudget() {
		return nil
	}
	if _, ok := rt.Cost(model, llm.Usage{}); ok {
		return nil
	}
	return &UnpricedError{Model: model}
}

// hasCostBudget reports whether any cost limit is set.
func (rt *Runtime) hasCostBudget() bool {
	if rt.Config.Budgets.CostUSD > 0 {
		return true
	}
	for _, b := range rt.Config.Budgets.Phase {
		if b.CostUSD > 0 {
			return true
		}
	}
	return false
}

// BudgetUse is one limit with what was spent against it.
type BudgetUse struct {
	Scope   string  `json:"scope"` // task or the phase
	Limit   string  `json:"limit"` // calls, tokens_in, tokens_out, cost_usd, wall_time
	Spent   float64 `json:"spent"`
	Max     float64 `json:"max"`
	Percent float64 `json:"percent"`
}

// BudgetUses compares a task's spend with every configured limit.
func BudgetUses(b config.Budgets, sum CostSummary) []BudgetUse {
	var out []BudgetUse
	add := func(scope string, lim config.Budget, c CostLine) {
		for _, x := range []struct {
			name       string
			spent, max float64
		}{
			{"calls", float64(c.Calls - c.CachedCalls), float64(lim.Calls)},
			{"tokens_in", float64(c.TokensIn), float64(lim.TokensIn)},
			{"tokens_out", float64(c.TokensOut), float64(lim.TokensOut)},
			{"cost_usd", c.CostUSD, lim.CostUSD},
			{"wall_time", float64(c.LatencyMS) / 1000, lim.WallTime.Std().Seconds()},
		} {
			if x.max > 0 {
				out = append(out, BudgetUse{Scope: scope, Limit: x.name, Spent: x.spent, Max: x.max, Percent: 100 * x.spent / x.max})
			}
		}
	}
	add("task", b.Task(), sum.Total)
	for _, p := range sum.Phases {
		if lim, ok := b.Phase[p.Phase]; ok {
			add(p.Phase, lim, p.CostLine)
		}
	}
	return out
}

// BudgetWarnings lists the limits at 80 % or more, for `orch status`.
func BudgetWarnings(b config.Budgets, sum CostSummary) []string {
	var out []string
	for _, u := range BudgetUses(b, sum) {
		if u.Percent >= 80 {
			out = append(out, fmt.Sprintf("budget: %s %s at %.0f%% (%s of %s)", u.Scope, u.Limit, u.Percent, figure(u.Limit, u.Spent), figure(u.Limit, u.Max)))
		}
	}
	return out
}

// figure renders a budget amount: dollars, seconds or a count.
func figure(limit string, v float64) string {
	switch limit {
	case "cost_usd":
		return FormatUSD(v)
	case "wall_time":
		return fmt.Sprintf("%.0fs", v)
	}
	return fmt.Sprintf("%.0f", v)
}
