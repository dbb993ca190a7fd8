package agenttest

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// update rewrites the golden files of the agents' tests:
// go test ./internal/agent/... -run TestRender -update-golden
var update = flag.Bool("update-golden", false, "rewrite the agents' testdata/*.golden files")

// Golden compares got with testdata/name of the test's package (rewritten
// first under -update-golden).
func Golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update-golden to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs (run with -update-golden to accept):\n--- got\n%s", path, got)
	}
}
