package phasetest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// KillRounds is how many kills a kill test of the real orch binary makes
// (landing's of accept and revert, testphase's of orch test): ci when CI
// is set, local otherwise; ORCH_KILL_ROUNDS overrides both.
func KillRounds(ci, local int) int {
	if s := os.Getenv("ORCH_KILL_ROUNDS"); s != "" {
		var n int
		if _, err := fmt.Sscan(s, &n); err == nil && n > 0 {
			return n
		}
	}
	if os.Getenv("CI") != "" {
		return ci
	}
	return local
}

// BuildOrch builds cmd/orch into a temporary folder of t and returns its
// path.
func BuildOrch(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("phasetest: cannot locate the module")
	}
	bin := filepath.Join(t.TempDir(), "orch")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/orch")
	cmd.Dir = filepath.Join(filepath.Dir(file), "..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// OrchEnv is the environment of the git and orch processes of a test that
// runs orch as a program: the test's own, without git's and the user's
// configuration, with home as HOME (orch's caches and configuration go
// there) and a fixed git identity.
func OrchEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GIT_") || k == "HOME" || k == "XDG_CONFIG_HOME" || k == "XDG_CACHE_HOME" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=kill test", "GIT_AUTHOR_EMAIL=kill@orch.invalid",
		"GIT_COMMITTER_NAME=kill test", "GIT_COMMITTER_EMAIL=kill@orch.invalid")
}
