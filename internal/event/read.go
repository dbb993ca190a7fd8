package event

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"

	"github.com/orchdev/orch/internal/lifecycle"
)

// ModelCallOf reads a model_call event's fields as stored (numbers as
// json.Number when read back from a transcript, Go numbers when written by
// this process). It is lenient, as a cost reader must be: a field of the
// wrong type counts as absent and a negative count as 0; an "error" field
// that is present marks the call failed even when empty.
func ModelCallOf(data map[string]any) ModelCall {
	var c ModelCall
	phase, _ := data["phase"].(string)
	c.Phase = lifecycle.Phase(phase)
	c.Role, _ = data["role"].(string)
	c.Provider, _ = data["provider"].(string)
	c.Model, _ = data["model"].(string)
	c.Cached, _ = data["cached"].(bool)
	c.TokensIn = intField(data, "tokens_in")
	c.TokensOut = intField(data, "tokens_out")
	c.CachedTokensIn = intField(data, "cached_tokens_in")
	c.CacheWriteTokens = intField(data, "cache_write_tokens")
	c.LatencyMS = intField(data, "latency_ms")
	if f, ok := floatField(data, "cost_usd"); ok {
		c.CostUSD = &f
	}
	if e, present := data["error"]; present {
		s, _ := e.(string)
		if s == "" {
			s = "failed"
		}
		c.Error = s
	}
	return c
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
