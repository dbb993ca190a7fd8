package repomap

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/gittest"
)

// TestMain isolates git's configuration (gittest.Main gives HOME a fresh
// folder) but keeps Go's caches, found before HOME moves: a test compiles
// this package without cgo (TestCacheSharedWithBuildWithoutCgo).
func TestMain(m *testing.M) {
	if spec := os.Getenv("REPOMAP_HELPER"); spec != "" {
		os.Exit(helperMain(spec))
	}
	keys := []string{"GOCACHE", "GOMODCACHE", "GOPATH"}
	if out, err := exec.Command("go", append([]string{"env"}, keys...)...).Output(); err == nil {
		for i, v := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if i < len(keys) && os.Getenv(keys[i]) == "" {
				os.Setenv(keys[i], v)
			}
		}
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
