package agent

import (
	"strings"

	"github.com/orchdev/orch/internal/llm"
)

// PriceTableDate is when the embedded prices were taken from the vendors'
// public price pages. Prices change: a model missing here has no cost
// figure, never a guessed one.
const PriceTableDate = "2026-11-01"

// price is USD per million tokens.
type price struct{ in, out float64 }

// prices maps a model name prefix to its price. The longest matching
// prefix wins.
func prices() map[string]price {
	return map[string]price{
		"gpt-4.1":           {2.00, 8.00},
		"gpt-4.1-mini":      {0.40, 1.60},
		"gpt-4.1-nano":      {0.10, 0.40},
		"gpt-4o":            {2.50, 10.00},
		"gpt-4o-mini":       {0.15, 0.60},
		"gpt-5":             {1.25, 10.00},
		"gpt-5-mini":        {0.25, 2.00},
		"gpt-5-nano":        {0.05, 0.40},
		"o3":                {2.00, 8.00},
		"o4-mini":           {1.10, 4.40},
		"claude-opus-4":     {15.00, 75.00},
		"claude-sonnet-4":   {3.00, 15.00},
		"claude-3-7-sonnet": {3.00, 15.00},
		"claude-3-5-haiku":  {0.80, 4.00},
		"claude-haiku-4":    {1.00, 5.00},
	}
}

// Cost returns the USD cost of usage with model, when the price is known.
func Cost(model string, u llm.Usage) (float64, bool) {
	best, bestLen := price{}, 0
	for prefix, p := range prices() {
		if strings.HasPrefix(model, prefix) && len(prefix) > bestLen {
			best, bestLen = p, len(prefix)
		}
	}
	if bestLen == 0 {
		return 0, false
	}
	return (float64(u.InputTokens)*best.in + float64(u.OutputTokens)*best.out) / 1e6, true
}
