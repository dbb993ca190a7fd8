package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/orchdev/orch/internal/clip"
)

// ArgsProblem says what is wrong with a tool call's arguments when they
// are not a JSON object, in words a model can act on: where the JSON is
// broken and what was expected. Providers hand malformed arguments on as
// a JSON string holding what the model sent (llm.ToolCall). ok is false
// when args is an object, empty or null (no arguments).
func ArgsProblem(args json.RawMessage) (problem string, ok bool) {
	t := bytes.TrimSpace(args)
	if len(t) == 0 || string(t) == "null" || t[0] == '{' && json.Valid(t) {
		return "", false
	}
	sent := string(t)
	if t[0] == '"' {
		var s string
		if json.Unmarshal(t, &s) == nil {
			sent = s
		}
	}
	var v any
	err := json.Unmarshal([]byte(sent), &v)
	var se *json.SyntaxError
	switch {
	case err != nil && strings.Contains(err.Error(), "unexpected end of JSON input"):
		return fmt.Sprintf("the arguments are not valid JSON: they end too early, after %d bytes (a string, object or array left open: was the answer cut off?); send one complete JSON object", len(sent)), true
	case errors.As(err, &se):
		return fmt.Sprintf("the arguments are not valid JSON: %s at byte %d (%s); send one JSON object", se.Error(), se.Offset, near(sent, int(se.Offset))), true
	case err != nil:
		return fmt.Sprintf("the arguments are not valid JSON: %v; send one JSON object", err), true
	}
	return fmt.Sprintf("the arguments are a JSON %s, not an object; send one JSON object of the tool's parameters", jsonKind(v)), true
}

// near shows the text around byte off.
func near(s string, off int) string {
	off = min(max(off, 0), len(s))
	lo := max(off-20, 0)
	return fmt.Sprintf("near %q", clip.Bytes(s[lo:], 40))
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "array"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	case nil:
		return "null"
	}
	return "value"
}

// fieldProblem rewrites a decoding error of an object's arguments in the
// tool's words: an unknown parameter, or one of the wrong type.
func fieldProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("parameter %q must be a JSON %s, got a %s", te.Field, te.Type.Kind(), te.Value)
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return "unknown parameter " + name
	}
	return err.Error()
}
