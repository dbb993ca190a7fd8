package agent

import (
	"fmt"
	"slices"

	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/lifecycle"
)

// CostLine sums model calls. Tokens and cost count only calls that reached
// a model: a cached call cost nothing again. Cost is the sum of the calls
// whose price is known; UnpricedCalls counts the others.
type CostLine struct {
	Calls       int   `json:"calls"`
	CachedCalls int   `json:"cached_calls"`
	FailedCalls int   `json:"failed_calls"`
	TokensIn    int64 `json:"tokens_in"`
	TokensOut   int64 `json:"tokens_out"`
	// CachedTokensIn and CacheWriteTokens are the part of TokensIn the
	// provider read from, or wrote to, its prompt cache.
	CachedTokensIn   int64   `json:"cached_tokens_in"`
	CacheWriteTokens int64   `json:"cache_write_tokens"`
	CostUSD          float64 `json:"cost_usd"`
	UnpricedCalls    int     `json:"unpriced_calls"`
	LatencyMS        int64   `json:"latency_ms"` // summed latency of the calls that reached a model
}

// Add sums another line into l.
func (l *CostLine) Add(o CostLine) {
	l.Calls += o.Calls
	l.CachedCalls += o.CachedCalls
	l.FailedCalls += o.FailedCalls
	l.TokensIn += o.TokensIn
	l.TokensOut += o.TokensOut
	l.CachedTokensIn += o.CachedTokensIn
	l.CacheWriteTokens += o.CacheWriteTokens
	l.CostUSD += o.CostUSD
	l.UnpricedCalls += o.UnpricedCalls
	l.LatencyMS += o.LatencyMS
}

// PhaseCost is the cost of one phase.
type PhaseCost struct {
	Phase string `json:"phase"`
	CostLine
}

// CostSummary is the cost of one task's model calls, per phase (in
// lifecycle order, then unknown phases by name) and in total.
type CostSummary struct {
	Phases []PhaseCost `json:"phases"`
	Total  CostLine    `json:"total"`
}

// SumCosts sums model calls (task.ModelCalls reads them from a
// transcript), per phase; a call with no phase counts as "unknown".
func SumCosts(calls []event.ModelCall) CostSummary {
	var s CostSum
	for _, c := range calls {
		s.Add(c)
	}
	return s.Summary()
}

// CostSum sums model calls one at a time, in the order SumCosts sums
// them, so that a reader of a growing transcript adds only the calls
// appended and gets the same summary (the board's cards). Its zero value
// sums none; a copy shares the sums of the original.
type CostSum struct {
	by map[string]*CostLine
}

// Add sums call c.
func (s *CostSum) Add(c event.ModelCall) {
	phase := string(c.Phase)
	if phase == "" {
		phase = "unknown"
	}
	var l CostLine
	l.Calls = 1
	switch {
	case c.Cached:
		l.CachedCalls = 1
	default:
		l.TokensIn = max(c.TokensIn, 0)
		l.TokensOut = max(c.TokensOut, 0)
		l.CachedTokensIn = max(c.CachedTokensIn, 0)
		l.CacheWriteTokens = max(c.CacheWriteTokens, 0)
		l.LatencyMS = max(c.LatencyMS, 0)
		if c.CostUSD != nil && *c.CostUSD >= 0 {
			l.CostUSD = *c.CostUSD
		} else if c.Error == "" {
			l.UnpricedCalls = 1
		}
	}
	if c.Error != "" {
		l.FailedCalls = 1
	}
	if s.by == nil {
		s.by = map[string]*CostLine{}
	}
	if s.by[phase] == nil {
		s.by[phase] = &CostLine{}
	}
	s.by[phase].Add(l)
}

// Summary is the sum of the calls added: per phase in lifecycle order,
// then unknown phases by name, and in total.
func (s CostSum) Summary() CostSummary {
	sum := CostSummary{Phases: []PhaseCost{}}
	for _, p := range lifecycle.Phases() {
		if l := s.by[string(p)]; l != nil {
			sum.Phases = append(sum.Phases, PhaseCost{Phase: string(p), CostLine: *l})
		}
	}
	var other []string
	for p := range s.by {
		if !lifecycle.Phase(p).Valid() {
			other = append(other, p)
		}
	}
	slices.Sort(other)
	for _, p := range other {
		sum.Phases = append(sum.Phases, PhaseCost{Phase: p, CostLine: *s.by[p]})
	}
	for _, p := range sum.Phases {
		sum.Total.Add(p.CostLine)
	}
	return sum
}

// FormatCost renders a line's cost for people: "price unknown" when no
// call of it has a known price, the known part and "+ unknown" when some
// have none; never $0.00 for calls whose price is not known.
func FormatCost(l CostLine) string {
	switch {
	case l.UnpricedCalls > 0 && l.CostUSD == 0:
		return "price unknown"
	case l.UnpricedCalls > 0:
		return FormatUSD(l.CostUSD) + " + unknown"
	}
	return FormatUSD(l.CostUSD)
}

// FormatUSD renders a cost for people.
func FormatUSD(c float64) string {
	if c > 0 && c < 0.01 {
		return fmt.Sprintf("$%.4f", c)
	}
	return fmt.Sprintf("$%.2f", c)
}
