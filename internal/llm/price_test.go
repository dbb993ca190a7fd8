package llm

import (
	"math"
	"strings"
	"testing"
)

func TestPrices(t *testing.T) {
	over := map[string]Price{"gpt-5.5": {Input: 1, Output: 2}, "my-local": {Input: 0, Output: 0}}
	for _, tc := range []struct {
		model string
		u     Usage
		over  map[string]Price
		want  float64
		ok    bool
	}{
		{DefaultOpenAIModel, Usage{InputTokens: 1_000_000, OutputTokens: 1_000_000}, nil, 35, true},
		{"gpt-5.5-2026-04-23", Usage{InputTokens: 1_000_000, CachedInputTokens: 800_000}, nil, 200_000*5.0/1e6 + 800_000*0.5/1e6, true},
		{"gpt-5.5-pro", Usage{OutputTokens: 1000}, nil, 0.18, true},
		{DefaultAnthropicModel, Usage{InputTokens: 1_000_000, CachedInputTokens: 500_000, CacheWriteTokens: 100_000, OutputTokens: 10_000}, nil,
			400_000*2.0/1e6 + 500_000*0.10/1e6 + 100_000*2.5/1e6 + 10_000*10.0/1e6, true},
		{"claude-sonnet-5", Usage{InputTokens: 1_000_000, CachedInputTokens: 1_000_000}, nil, 0.20, true},
		{"gpt-5.5", Usage{InputTokens: 1_000_000, CachedInputTokens: 1_000_000}, over, 1, true}, // no cached rate: the input rate
		{"my-local-7b", Usage{InputTokens: 5}, over, 0, true},
		{"llama3.2", Usage{InputTokens: 5}, over, 0, false},
		{"", Usage{}, nil, 0, false},
		// Inconsistent figures never price below zero.
		{"gpt-5.5", Usage{InputTokens: 10, CachedInputTokens: 50, CacheWriteTokens: 50}, nil, 10 * 0.5 / 1e6, true},
	} {
		p, ok := PriceOf(tc.model, tc.over)
		if ok != tc.ok {
			t.Errorf("%s: priced %v, want %v", tc.model, ok, tc.ok)
			continue
		}
		if got := p.Cost(tc.u); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s %+v: cost %v, want %v", tc.model, tc.u, got, tc.want)
		}
	}
	// Every default model is priced.
	for _, m := range []string{DefaultOpenAIModel, DefaultAnthropicModel} {
		if _, ok := PriceOf(m, nil); !ok {
			t.Errorf("default model %s has no price", m)
		}
	}
	if n := UnpricedNote("llama3.2", nil, true); !strings.Contains(n, `[prices."llama3.2"]`) || !strings.Contains(n, "cost budget") {
		t.Errorf("note %q", n)
	}
	if UnpricedNote("llama3.2", nil, false) != "" || UnpricedNote(DefaultOpenAIModel, nil, true) != "" {
		t.Error("a note where none is due")
	}
}
