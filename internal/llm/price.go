package llm

import "strings"

// PriceTableDate is when the embedded prices were last checked against
// the vendors' price pages. Prices change: a model missing here has no
// cost figure, never a guessed one; [prices] in .orch/config.toml adds or
// overrides entries.
const PriceTableDate = "2026-11-26"

// Price is USD per million tokens. CachedInput is the price of input read
// from the prompt cache and CacheWrite of input written to it; zero means
// the input price.
type Price struct {
	Input       float64
	Output      float64
	CachedInput float64
	CacheWrite  float64
}

// Cost is the USD cost of u at p. Cached and cache-written tokens are
// part of u.InputTokens and are priced at their own rates.
func (p Price) Cost(u Usage) float64 {
	cached := min(max(u.CachedInputTokens, 0), u.InputTokens)
	written := min(max(u.CacheWriteTokens, 0), u.InputTokens-cached)
	plain := u.InputTokens - cached - written
	cachedRate, writeRate := p.CachedInput, p.CacheWrite
	if cachedRate == 0 {
		cachedRate = p.Input
	}
	if writeRate == 0 {
		writeRate = p.Input
	}
	return (float64(plain)*p.Input + float64(cached)*cachedRate + float64(written)*writeRate + float64(u.OutputTokens)*p.Output) / 1e6
}

// prices maps a model name prefix to its price; the longest matching
// prefix wins, so dated snapshots ("gpt-5.5-2026-04-23") take their
// model's price. Sources, read 2026-11-26:
//
//   - OpenAI, https://openai.com/api/pricing/ (standard tier, prompts up to
//     272K tokens; cached input is a tenth of the input price; OpenAI
//     charges nothing extra for cache writes).
//   - Anthropic, https://platform.claude.com/docs/en/about-claude/pricing
//     and the model pages (https://platform.claude.com/docs/en/models/…):
//     cache writes are the 5-minute rate (1.25× input), cache reads a
//     tenth of input, except Claude Sonnet 5.5 whose cache reads cost
//     $0.10 since 2026-10-07 (its migration guide).
var prices = map[string]Price{
	// OpenAI. gpt-5.5 is orch's default OpenAI model.
	"gpt-5.5":      {Input: 5.00, Output: 30.00, CachedInput: 0.50},
	"gpt-5.5-pro":  {Input: 30.00, Output: 180.00},
	"gpt-5.4":      {Input: 2.50, Output: 15.00, CachedInput: 0.25},
	"gpt-5":        {Input: 1.25, Output: 10.00, CachedInput: 0.125},
	"gpt-5-mini":   {Input: 0.25, Output: 2.00, CachedInput: 0.025},
	"gpt-5-nano":   {Input: 0.05, Output: 0.40, CachedInput: 0.005},
	"gpt-4.1":      {Input: 2.00, Output: 8.00, CachedInput: 0.50},
	"gpt-4.1-mini": {Input: 0.40, Output: 1.60, CachedInput: 0.10},
	"gpt-4.1-nano": {Input: 0.10, Output: 0.40, CachedInput: 0.025},
	"gpt-4o":       {Input: 2.50, Output: 10.00, CachedInput: 1.25},
	"gpt-4o-mini":  {Input: 0.15, Output: 0.60, CachedInput: 0.075},
	"o3":           {Input: 2.00, Output: 8.00, CachedInput: 0.50},
	"o4-mini":      {Input: 1.10, Output: 4.40, CachedInput: 0.275},
	// Anthropic. claude-sonnet-5-5 is orch's default Anthropic model.
	"claude-sonnet-5-5": {Input: 2.00, Output: 10.00, CachedInput: 0.10, CacheWrite: 2.50},
	"claude-sonnet-5":   {Input: 2.00, Output: 10.00, CachedInput: 0.20, CacheWrite: 2.50},
	"claude-opus-5-5":   {Input: 4.00, Output: 20.00, CacheWrite: 5.00}, // cache reads: not confirmed, priced as input
	"claude-opus-5":     {Input: 5.00, Output: 25.00, CachedInput: 0.50, CacheWrite: 6.25},
	"claude-haiku-4-5":  {Input: 1.00, Output: 5.00, CachedInput: 0.10, CacheWrite: 1.25},
	"claude-sonnet-4":   {Input: 3.00, Output: 15.00, CachedInput: 0.30, CacheWrite: 3.75},
	"claude-opus-4":     {Input: 15.00, Output: 75.00, CachedInput: 1.50, CacheWrite: 18.75},
	"claude-3-7-sonnet": {Input: 3.00, Output: 15.00, CachedInput: 0.30, CacheWrite: 3.75},
	"claude-3-5-haiku":  {Input: 0.80, Output: 4.00, CachedInput: 0.08, CacheWrite: 1.00},
}

// PriceOf returns the price of model: the longest matching prefix in
// overrides (the configuration's [prices]), then in the embedded table.
func PriceOf(model string, overrides map[string]Price) (Price, bool) {
	if p, ok := longestPrefix(model, overrides); ok {
		return p, true
	}
	return longestPrefix(model, prices)
}

func longestPrefix(model string, table map[string]Price) (Price, bool) {
	best, bestLen := Price{}, 0
	for prefix, p := range table {
		if prefix != "" && strings.HasPrefix(model, prefix) && len(prefix) > bestLen {
			best, bestLen = p, len(prefix)
		}
	}
	return best, bestLen > 0
}

// UnpricedNote warns that a cost budget cannot be enforced for model and
// says how to price it; "" when the model is priced or no cost budget is
// set.
func UnpricedNote(model string, overrides map[string]Price, costBudget bool) string {
	if !costBudget || model == "" {
		return ""
	}
	if _, ok := PriceOf(model, overrides); ok {
		return ""
	}
	return "warning: model " + model + " has no price, so under the cost budget orch refuses to call it through an openai or anthropic provider (a command's calls show their tokens and \"price unknown\"); price it in .orch/config.toml ([prices.\"*\"] prices every unpriced model):\n" +
		"  [prices.\"" + model + "\"]\n  input = 2.50          # USD per million input tokens\n  output = 10.00        # USD per million output tokens\n  cached_input = 0.25   # optional: USD per million cached input tokens"
}
