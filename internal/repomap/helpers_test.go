package repomap

import (
	"os"
	"testing"

	"github.com/orchdev/orch/internal/gittest"
)

func TestMain(m *testing.M) {
	if spec := os.Getenv("REPOMAP_HELPER"); spec != "" {
		os.Exit(helperMain(spec))
	}
	os.Exit(gittest.Main(m))
}

func git(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	return gittest.Git(tb, dir, args...)
}

// newRepo commits files into a new repository and returns its folder.
func newRepo(tb testing.TB, files map[string]string) string {
	tb.Helper()
	dir, _ := gittest.Seed(tb, files)
	return dir
}
