package agent

import (
	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/llm"
)

// PriceTableDate is when the embedded prices (llm's table, with its
// sources) were taken from the vendors' public price pages. Prices change:
// a model missing there has no cost figure, never a guessed one.
const PriceTableDate = llm.PriceTableDate

// Cost returns the USD cost of usage with model from the embedded price
// table, when the price is known.
func Cost(model string, u llm.Usage) (float64, bool) {
	p, ok := llm.PriceOf(model, nil)
	if !ok {
		return 0, false
	}
	return p.Cost(u), true
}

// priceOverrides converts the configuration's [prices].
func priceOverrides(ps map[string]config.Price) map[string]llm.Price {
	out := make(map[string]llm.Price, len(ps))
	for model, p := range ps {
		out[model] = llm.Price{Input: p.Input, Output: p.Output, CachedInput: p.CachedInput, CacheWrite: p.CacheWrite}
	}
	return out
}
