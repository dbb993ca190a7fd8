package event

import (
	"reflect"
	"testing"
)

// ReadModelCall decodes a stored model_call into its type, counting a
// field of the wrong type as absent, as the cost readers always did.
func TestReadModelCall(t *testing.T) {
	cost := 0.25
	for _, tc := range []struct {
		name, data string
		want       ModelCall
	}{
		{"as written", `{"phase":"codegen","role":"codegen","provider":"p","model":"m","tokens_in":120,"tokens_out":30,"latency_ms":9,"cost_usd":0.25,"cached":true,"cached_tokens_in":100,"cache_write_tokens":5}`,
			ModelCall{Phase: "codegen", Role: "codegen", Provider: "p", Model: "m", TokensIn: 120, TokensOut: 30, LatencyMS: 9, CostUSD: &cost, Cached: true, CachedTokensIn: 100, CacheWriteTokens: 5}},
		{"wrong types count as absent", `{"phase":3,"role":["r"],"tokens_in":"120","tokens_out":-4,"cost_usd":"1","cached":"yes"}`, ModelCall{}},
		{"a fraction of a count is cut", `{"tokens_in":12.7}`, ModelCall{TokensIn: 12}},
		{"a negative cost is unknown", `{"cost_usd":-1}`, ModelCall{}},
		{"an empty error marks a failure", `{"error":""}`, ModelCall{Error: "failed"}},
		{"an error of another type too", `{"error":{"code":1}}`, ModelCall{Error: "failed"}},
		{"an error", `{"error":"timeout"}`, ModelCall{Error: "timeout"}},
		{"not an object", `[1]`, ModelCall{}},
	} {
		if got := ReadModelCall([]byte(tc.data)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// FuzzReadModelCall: a stored model_call of any shape (a transcript is
// untrusted: a person or another tool may have written it) reads without
// panicking, and never as negative counts or a negative cost.
func FuzzReadModelCall(f *testing.F) {
	for _, s := range []string{
		`{"phase":"codegen","tokens_in":120,"tokens_out":30,"cost_usd":0.25,"cached":true}`,
		`{"tokens_in":"12","cost_usd":-1,"error":null}`,
		`{"tokens_in":1e400,"latency_ms":-9223372036854775808}`,
		`[]`, `null`, `{"error":{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := ReadModelCall(data)
		if c.TokensIn < 0 || c.TokensOut < 0 || c.CachedTokensIn < 0 || c.CacheWriteTokens < 0 || c.LatencyMS < 0 {
			t.Fatalf("negative count from %q: %+v", data, c)
		}
		if c.CostUSD != nil && *c.CostUSD < 0 {
			t.Fatalf("negative cost from %q", data)
		}
	})
}
