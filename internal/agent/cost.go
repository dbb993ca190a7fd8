package agent

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/task"
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

// SumCosts sums the model_call events of a transcript. Other events are
// ignored; a field of the wrong type counts as absent.
func SumCosts(events []task.Event) CostSummary {
	by := map[string]*CostLine{}
	for _, ev := range events {
		if ev.Kind != "model_call" {
			continue
		}
		phase, _ := ev.Data["phase"].(string)
		if phase == "" {
			phase = "unknown"
		}
		var l CostLine
		l.Calls = 1
		switch {
		case boolField(ev.Data, "cached"):
			l.CachedCalls = 1
		default:
			l.TokensIn = intField(ev.Data, "tokens_in")
			l.TokensOut = intField(ev.Data, "tokens_out")
			l.CachedTokensIn = intField(ev.Data, "cached_tokens_in")
			l.CacheWriteTokens = intField(ev.Data, "cache_write_tokens")
			l.LatencyMS = intField(ev.Data, "latency_ms")
			if c, ok := floatField(ev.Data, "cost_usd"); ok {
				l.CostUSD = c
			} else if _, failed := ev.Data["error"]; !failed {
				l.UnpricedCalls = 1
			}
		}
		if _, failed := ev.Data["error"]; failed {
			l.FailedCalls = 1
		}
		if by[phase] == nil {
			by[phase] = &CostLine{}
		}
		by[phase].Add(l)
	}
	sum := CostSummary{Phases: []PhaseCost{}}
	for _, p := range lifecycle.Phases() {
		if l := by[string(p)]; l != nil {
			sum.Phases = append(sum.Phases, PhaseCost{Phase: string(p), CostLine: *l})
			delete(by, string(p))
		}
	}
	for _, p := range slices.Sorted(maps.Keys(by)) {
		sum.Phases = append(sum.Phases, PhaseCost{Phase: p, CostLine: *by[p]})
	}
	for _, p := range sum.Phases {
		sum.Total.Add(p.CostLine)
	}
	return sum
}

func boolField(data map[string]any, key string) bool {
	b, _ := data[key].(bool)
	return b
}

// intField reads a number written by this process (int64, int, float64)
// or read back from the transcript (json.Number); negative counts are 0.
func intField(data map[string]any, key string) int64 {
	var n int64
	switch v := data[key].(type) {
	case json.Number:
		if i, err := v.Int64(); err == nil {
			n = i
		} else if f, err := v.Float64(); err == nil {
			n = int64(f)
		}
	case int64:
		n = v
	case int:
		n = int64(v)
	case float64:
		n = int64(v)
	}
	return max(n, 0)
}

func floatField(data map[string]any, key string) (float64, bool) {
	switch v := data[key].(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		return f, err == nil && f >= 0
	case float64:
		return v, v >= 0
	case int64:
		return float64(v), v >= 0
	case int:
		return float64(v), v >= 0
	}
	return 0, false
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
