package agenttest

import (
	"encoding/json"
	"testing"

	"github.com/orchdev/orch/internal/llm"
)

// CheckStrictSchema fails t unless the schema of v (llm.SchemaFor) is in
// OpenAI's strict subset: every field required, every object closed.
func CheckStrictSchema(t *testing.T, v any) {
	t.Helper()
	schema, err := llm.SchemaFor(v)
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(schema, &s); err != nil {
		t.Fatal(err)
	}
	checkStrict(t, s, "$")
}

func checkStrict(t *testing.T, s map[string]any, at string) {
	t.Helper()
	if props, ok := s["properties"].(map[string]any); ok {
		if s["additionalProperties"] != false {
			t.Errorf("%s: additionalProperties not false", at)
		}
		req := map[string]bool{}
		required, _ := s["required"].([]any)
		for _, r := range required {
			req[r.(string)] = true
		}
		for name, sub := range props {
			if !req[name] {
				t.Errorf("%s.%s is not required", at, name)
			}
			checkStrict(t, sub.(map[string]any), at+"."+name)
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		checkStrict(t, items, at+"[]")
	}
}
