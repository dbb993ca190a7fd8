package lifecycle

import (
	"strings"
	"testing"
)

// A mistyped phase name suggests the phase within two edits or with that
// prefix; a name close to none suggests nothing.
func TestParsePhaseSuggests(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plannign", `(did you mean "planning"?)`},
		{"tset", `(did you mean "test"?)`},
		{"plan_reveiw", `(did you mean "plan_review"?)`},
		{"Reviw", `(did you mean "review"?)`},
		{"code", `(did you mean "codegen"?)`},
		{"acept", `(did you mean "accept"?)`},
		{"deploy", ""},
		{"xyzzy", ""},
	} {
		_, err := ParsePhase(tc.in)
		if err == nil {
			t.Fatalf("ParsePhase(%q) accepted", tc.in)
		}
		got := err.Error()
		if tc.want == "" && strings.Contains(got, "did you mean") || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("ParsePhase(%q) = %q, want suggestion %q", tc.in, got, tc.want)
		}
	}
}
