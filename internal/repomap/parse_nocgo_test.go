//go:build !cgo

package repomap

import (
	"errors"
	"testing"
)

// TestGoDefinitionsWithoutCgo: a build without cgo still indexes Go
// files' definitions (go/parser), and no other language's.
func TestGoDefinitionsWithoutCgo(t *testing.T) {
	ix, _ := buildFixture(t, Options{})
	locs := ix.Definitions("NewBackoff")
	if len(locs) != 1 || locs[0].Path != "retry/retry.go" || locs[0].Line != 12 || locs[0].Sig != "func NewBackoff(base int) *Backoff" {
		t.Errorf("Definitions(NewBackoff) = %+v", locs)
	}
	ex := newExtractor()
	defer ex.close()
	if defs, err := ex.definitions(t.Context(), LangPython, []byte("def alpha():\n    pass\n")); !errors.Is(err, errNoParser) || len(defs) != 0 {
		t.Errorf("Python without cgo: %+v, %v; want none and errNoParser", defs, err)
	}
}
