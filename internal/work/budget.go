package work

import (
	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/lifecycle"
)

// Spend is what model calls used: every call counts (a cached one too);
// tokens, cost and latency count only the calls that reached a model,
// and cost only where its price was known.
type Spend struct {
	Calls     int
	TokensIn  int64
	TokensOut int64
	CostUSD   float64
	LatencyMS int64
}

// Add sums o into s.
func (s *Spend) Add(o Spend) {
	s.Calls += o.Calls
	s.TokensIn += o.TokensIn
	s.TokensOut += o.TokensOut
	s.CostUSD += o.CostUSD
	s.LatencyMS += o.LatencyMS
}

// Spent is a task's spend as committed when a run started, in total and
// per phase: the engine sums it from the task's recorded model calls, so
// a worker's budget left is its [budgets] limits less this, whatever
// machine it runs on (docs/workers.md, "Budget").
type Spent struct {
	Total  Spend
	Phases map[lifecycle.Phase]Spend
}

// Phase returns phase p's spend.
func (s Spent) Phase(p lifecycle.Phase) Spend { return s.Phases[p] }

// SpentBy sums committed model calls; a call without a phase counts in
// the total only.
func SpentBy(calls []event.ModelCall) Spent {
	s := Spent{Phases: map[lifecycle.Phase]Spend{}}
	for _, c := range calls {
		one := Spend{Calls: 1}
		if !c.Cached {
			one.TokensIn = max(c.TokensIn, 0)
			one.TokensOut = max(c.TokensOut, 0)
			one.LatencyMS = max(c.LatencyMS, 0)
			if c.CostUSD != nil && *c.CostUSD >= 0 {
				one.CostUSD = *c.CostUSD
			}
		}
		s.Total.Add(one)
		if c.Phase != "" {
			p := s.Phases[c.Phase]
			p.Add(one)
			s.Phases[c.Phase] = p
		}
	}
	return s
}
