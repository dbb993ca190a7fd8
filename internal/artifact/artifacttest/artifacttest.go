// Package artifacttest holds what tests need to look into orch's
// artifacts. Only tests import it.
package artifacttest

import (
	"testing"

	"github.com/orchdev/orch/internal/artifact"
)

// FindCase returns the case named name, failing the test when cases has
// none.
func FindCase(t testing.TB, cases []artifact.Case, name string) artifact.Case {
	t.Helper()
	for _, c := range cases {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no case %q in %+v", name, cases)
	return artifact.Case{}
}
