package testrun

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/orchdev/orch/internal/proctest"
	"github.com/orchdev/orch/internal/sandbox"
)

// requireBwrap skips the test when bwrap does not work here, or fails it
// when ORCH_REQUIRE_BWRAP=1 says the sandbox must be tested.
func requireBwrap(t *testing.T) {
	t.Helper()
	if _, err := sandbox.Available(); err != nil {
		if os.Getenv("ORCH_REQUIRE_BWRAP") == "1" || os.Getenv("CI") != "" {
			t.Fatalf("ORCH_REQUIRE_BWRAP=1 or CI is set, but the bwrap sandbox is unavailable (.ci/run installs bubblewrap): %v", err)
		}
		t.Skipf("bwrap sandbox unavailable (set ORCH_REQUIRE_BWRAP=1 to make this a failure): %v", err)
	}
}

var goCacheOnce = sync.OnceValues(func() (string, error) {
	out, err := exec.Command("go", "env", "GOCACHE").Output()
	return strings.TrimSpace(string(out)), err
})

// goEnv is the current environment set up for offline go builds.
func goEnv(t *testing.T) []string {
	t.Helper()
	cache, err := goCacheOnce()
	if err != nil || cache == "" {
		t.Fatalf("go env GOCACHE: %q, %v", cache, err)
	}
	return sandbox.MergeEnv(os.Environ(), map[string]string{
		"GOFLAGS": "-mod=mod",
		"GOPROXY": "off",
		"GOCACHE": cache,
	})
}

// options returns Options for dir with no sandbox and a fresh log folder.
func options(t *testing.T, dir string) Options {
	t.Helper()
	return Options{Dir: dir, LogDir: filepath.Join(t.TempDir(), "logs"), Sandbox: SandboxNone, Env: os.Environ()}
}

// sh is a suite running script with sh -c.
func sh(name, script string) Suite {
	return Suite{Name: name, Kind: KindTest, Command: []string{"sh", "-c", script}}
}

// readPids reads the pids a script wrote, one per line.
func readPids(t *testing.T, path string) []int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read pids: %v", err)
	}
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("bad pid %q in %s", f, path)
		}
		pids = append(pids, pid)
	}
	return pids
}

// procsWithEnv returns the pids of live processes whose environment holds
// the entry kv (NAME=value), sandboxed ones with their host pids.
func procsWithEnv(t *testing.T, kv string) []int {
	t.Helper()
	return proctest.WithEnv(kv, "")
}

// countingWriter counts what is written to it.
type countingWriter struct{ n atomic.Int64 }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n.Add(int64(len(p)))
	return len(p), nil
}
