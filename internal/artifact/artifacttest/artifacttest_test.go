package artifacttest

import (
	"testing"

	"github.com/orchdev/orch/internal/artifact"
)

func TestFindCase(t *testing.T) {
	cases := []artifact.Case{{Name: "a", Status: "pass"}, {Name: "b", Status: "fail"}}
	if c := FindCase(t, cases, "b"); c.Status != "fail" {
		t.Errorf("FindCase(b) = %+v", c)
	}
}
