package testrun

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/sandbox"
)

func TestSandboxGoSuites(t *testing.T) {
	requireBwrap(t)
	t.Parallel()
	// A module without imports builds in a moment even with an empty
	// GOCACHE; TestSandboxGoTestSlow compiles the testing package too.
	dir := t.TempDir()
	gittest.WriteFiles(t, dir, map[string]string{
		"go.mod": "module example.com/n\n\ngo 1.22\n",
		"n.go":   "package n\n\nfunc Add(a, b int) int { return a + b }\n",
	})
	checkSandboxedGo(t, dir, 0)
}

func TestSandboxGoTestSlow(t *testing.T) {
	requireBwrap(t)
	if os.Getenv("ORCH_SLOW_TESTS") != "1" {
		t.Skip("compiles the standard library into a fresh GOCACHE (20-40 s on two cores); set ORCH_SLOW_TESTS=1 to run")
	}
	t.Parallel()
	checkSandboxedGo(t, goModule(t, "package m\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 2) != 4 {\n\t\tt.Fatal(\"bad\")\n\t}\n}\n"), 2)
}

// checkSandboxedGo runs the detected go suites of dir under bwrap, with the
// user's GOCACHE in the environment, and checks that they pass with a
// sandbox-only cache.
func checkSandboxedGo(t *testing.T, dir string, passed int) {
	t.Helper()
	suites, _, err := Detect(dir, DetectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	opt := options(t, dir)
	opt.Sandbox = SandboxBwrap
	opt.Env = goEnv(t)
	userCache, _ := sandbox.LookupEnv(opt.Env, "GOCACHE")
	suites = append(suites, sh("gocache", "go env GOCACHE > gocache.txt"))
	report, info, err := Run(context.Background(), suites, opt)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if report.Status != artifact.TestCompleted || !report.OverallPass {
		log, _ := os.ReadFile(filepath.Join(opt.LogDir, "go-test.log"))
		t.Fatalf("go in the sandbox: %+v\nlog:\n%s", report, log)
	}
	if got := report.Suites[0].Summary.Passed; got != passed {
		t.Errorf("go-test passed %d cases, want %d: %+v", got, passed, report.Suites[0].Cases)
	}
	data, err := os.ReadFile(filepath.Join(dir, "gocache.txt"))
	cache := strings.TrimSpace(string(data))
	if err != nil || cache == userCache || !strings.Contains(cache, "orch-gocache-") {
		t.Errorf("GOCACHE in the sandbox = %q (%v), want a fresh orch-gocache- folder, not the user's %s", cache, err, userCache)
	}
	if _, err := os.Stat(cache); err == nil {
		t.Errorf("the run's GOCACHE %s was not removed", cache)
	}
	if info.Sandbox != SandboxBwrap {
		t.Errorf("RunInfo.Sandbox = %q", info.Sandbox)
	}
}

func TestSandboxTimeoutKillsEverything(t *testing.T) {
	requireBwrap(t)
	for _, tt := range hangScripts() {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opt := options(t, t.TempDir())
			opt.Sandbox = SandboxBwrap
			during, marker := runUntilTimeout(t, opt, tt.script)
			if len(during) < 4 {
				t.Errorf("while the suite ran, %d processes carried the marker (%v), want at least the shell, two sleeps and the sub-shell", len(during), during)
			}
			if left := procsWithEnv(t, marker); len(left) > 0 {
				t.Errorf("processes of the sandboxed suite still run after Run returned: %v", left)
			}
		})
	}
}

// TestSandboxGitOddPath: a linked worktree whose main repository lies
// under a path holding a colon and a line break (legal, and git prints such
// paths raw) still sees the main repository's git folder in the sandbox,
// so the suite's `git status` and `git log` work.
func TestSandboxGitOddPath(t *testing.T) {
	requireBwrap(t)
	t.Parallel()
	base := filepath.Join(t.TempDir(), "a:b\nc")
	main := filepath.Join(base, "main")
	gittest.WriteFiles(t, main, map[string]string{"a.txt": "a\n"})
	gittest.Git(t, main, "init", "-q")
	head := gittest.CommitAll(t, main, "base")
	wt := filepath.Join(base, "wt")
	gittest.Git(t, main, "worktree", "add", "-q", "--detach", wt, "HEAD")

	opt := options(t, wt)
	opt.Sandbox = SandboxBwrap
	report, _, err := Run(context.Background(), []Suite{sh("git", "git status --porcelain >status.txt && git log -1 --format=%H >log.txt")}, opt)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !report.OverallPass {
		log, _ := os.ReadFile(filepath.Join(opt.LogDir, "git.log"))
		t.Fatalf("git in the sandbox under %q failed: %+v\nlog:\n%s", wt, report, log)
	}
	if got := strings.TrimSpace(gittest.ReadFile(t, filepath.Join(wt, "log.txt"))); got != head {
		t.Errorf("git log in the sandbox = %q, want %s", got, head)
	}
	// The shell creates status.txt before git status runs: the one
	// untracked file of an otherwise clean worktree.
	if got := gittest.ReadFile(t, filepath.Join(wt, "status.txt")); got != "?? status.txt\n" {
		t.Errorf("git status in the sandbox = %q, want only ?? status.txt", got)
	}
}
