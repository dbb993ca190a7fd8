package event

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/orchdev/orch/internal/lifecycle"
)

// ReadModelCall decodes a model_call event's stored fields (its payload
// as a JSON object) into its type, leniently, as a cost reader must be:
// a field of the wrong type counts as absent and a negative count as 0;
// an "error" field that is present marks the call failed even when empty.
// (Decode, the strict reader, refuses such an event; transcripts written
// by older versions may hold one.)
func ReadModelCall(data []byte) ModelCall {
	var s struct {
		Phase            lenient[string]  `json:"phase"`
		Role             lenient[string]  `json:"role"`
		Provider         lenient[string]  `json:"provider"`
		Model            lenient[string]  `json:"model"`
		Cached           lenient[bool]    `json:"cached"`
		TokensIn         count            `json:"tokens_in"`
		TokensOut        count            `json:"tokens_out"`
		CachedTokensIn   count            `json:"cached_tokens_in"`
		CacheWriteTokens count            `json:"cache_write_tokens"`
		LatencyMS        count            `json:"latency_ms"`
		CostUSD          lenient[float64] `json:"cost_usd"`
		Error            *lenient[string] `json:"error"`
	}
	_ = json.Unmarshal(data, &s) // not an object: nothing is known
	c := ModelCall{
		Phase: lifecycle.Phase(s.Phase.V), Role: s.Role.V, Provider: s.Provider.V, Model: s.Model.V, Cached: s.Cached.V,
		TokensIn: int64(s.TokensIn), TokensOut: int64(s.TokensOut), CachedTokensIn: int64(s.CachedTokensIn),
		CacheWriteTokens: int64(s.CacheWriteTokens), LatencyMS: int64(s.LatencyMS),
	}
	if s.CostUSD.OK && s.CostUSD.V >= 0 {
		f := s.CostUSD.V
		c.CostUSD = &f
	}
	if s.Error != nil {
		c.Error = s.Error.V
		if c.Error == "" {
			c.Error = "failed"
		}
	}
	return c
}

// lenient is a field of type T that reads as absent (OK false, V zero)
// when the stored value has another type.
type lenient[T any] struct {
	V  T
	OK bool
}

func (l *lenient[T]) UnmarshalJSON(b []byte) error {
	var v T
	if json.Unmarshal(b, &v) == nil && string(bytes.TrimSpace(b)) != "null" {
		l.V, l.OK = v, true
	}
	return nil
}

// count is a non-negative count: a number (a fraction is cut), anything
// else or a negative number reads as 0.
type count int64

func (c *count) UnmarshalJSON(b []byte) error {
	var f float64
	if json.Unmarshal(b, &f) == nil {
		var i int64
		if json.Unmarshal(b, &i) == nil {
			*c = count(max(i, 0))
			return nil
		}
		*c = count(max(int64(f), 0))
	}
	return nil
}

// Decode returns the typed payload of an event of kind k whose fields are
// data (the JSON object of its payload): the one way a stored event is
// read back. An unknown kind or fields of the wrong type are errors.
func Decode(k Kind, data []byte) (Payload, error) {
	for _, zero := range Catalogue() {
		if zero.Kind() != k {
			continue
		}
		v := reflect.New(reflect.TypeOf(zero))
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber() // numbers in free-form fields (a summary) stay as written
		if err := dec.Decode(v.Interface()); err != nil {
			return nil, fmt.Errorf("%s event: %w", k, err)
		}
		return v.Elem().Interface().(Payload), nil
	}
	return nil, fmt.Errorf("unknown event kind %q", k)
}
