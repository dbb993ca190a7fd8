package tools

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzArgsProblem: whatever a model sends as a tool call's arguments,
// ArgsProblem does not panic, passes every JSON object (and empty or null
// arguments), and explains everything else in a bounded message.
func FuzzArgsProblem(f *testing.F) {
	for _, s := range []string{`{"path":"a.go"}`, `"{\"path\": \"a.go\""`, `["a"]`, `3`, `null`, ``, `"{"`, `"\u0000"`, `{"a":`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		problem, bad := ArgsProblem(json.RawMessage(data))
		trimmed := strings.TrimSpace(string(data))
		object := trimmed == "" || trimmed == "null" || strings.HasPrefix(trimmed, "{") && json.Valid([]byte(trimmed))
		if bad == object {
			t.Fatalf("%q: problem %v (%q), but it is an object: %v", data, bad, problem, object)
		}
		if bad && (problem == "" || len(problem) > 600) {
			t.Fatalf("%q: problem %q", data, problem)
		}
	})
}
