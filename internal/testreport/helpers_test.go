package testreport

import (
	"testing"

	"github.com/orchdev/orch/internal/artifact"
)

// findCase returns the case with the given name, failing the test if absent.
func findCase(t *testing.T, cases []artifact.Case, name string) artifact.Case {
	t.Helper()
	for _, c := range cases {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no case %q in %+v", name, cases)
	return artifact.Case{}
}
