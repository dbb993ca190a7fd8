package testrun

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/artifact"
)

// isolationScript probes what a suite can reach and writes one
// key=value line per probe to results.txt in its directory.
const isolationScript = `r=results.txt
: > $r
probe() { if ( eval "$2" ) 2>/dev/null; then echo "$1=yes" >> $r; else echo "$1=no" >> $r; fi; }
probe home-write 'echo x > "$OUTSIDE_HOME/probe"'
probe tmp-outside-write 'echo x > "$OUTSIDE_TMP/probe"'
probe dir-write 'echo x > inside.txt'
probe tmp-write 'echo x > /tmp/probe && [ -s /tmp/probe ]'
probe tcp-connect 'bash -c "exec 3<>/dev/tcp/127.0.0.1/$PORT"'
probe run-empty '[ -z "$(ls -A /run)" ]'
env > env.txt
`

func TestSandboxIsolation(t *testing.T) {
	requireBwrap(t)
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatalf("bash is needed for the TCP probe: %v", err)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	outsideHome, err := os.MkdirTemp(home, ".orch-testrun-")
	if err != nil {
		t.Fatalf("cannot create a probe folder in $HOME: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(outsideHome) })
	outsideTmp := t.TempDir()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)

	run := func(t *testing.T, sandbox string) (map[string]string, string, RunInfo) {
		t.Helper()
		dir := t.TempDir()
		os.Remove(filepath.Join(outsideHome, "probe"))
		os.Remove(filepath.Join(outsideTmp, "probe"))
		opt := options(t, dir)
		opt.Sandbox = sandbox
		opt.Env = append(os.Environ(), "FAKE_API_KEY=leak", "GITHUB_TOKEN=leak")
		s := sh("probe", isolationScript)
		s.Env = map[string]string{"OUTSIDE_HOME": outsideHome, "OUTSIDE_TMP": outsideTmp, "PORT": port}
		report, info, err := Run(context.Background(), []Suite{s}, opt)
		if err != nil || !report.OverallPass {
			t.Fatalf("Run: %+v, %v", report, err)
		}
		data, err := os.ReadFile(filepath.Join(dir, "results.txt"))
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, line := range strings.Fields(string(data)) {
			k, v, _ := strings.Cut(line, "=")
			got[k] = v
		}
		if _, err := os.Stat(filepath.Join(dir, "inside.txt")); err != nil {
			t.Errorf("file written inside the directory is not there: %v", err)
		}
		env, err := os.ReadFile(filepath.Join(dir, "env.txt"))
		if err != nil {
			t.Fatal(err)
		}
		return got, string(env), info
	}

	t.Run("control without sandbox", func(t *testing.T) {
		got, _, _ := run(t, SandboxNone)
		want := map[string]string{"home-write": "yes", "tmp-outside-write": "yes", "dir-write": "yes", "tmp-write": "yes", "tcp-connect": "yes"}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("without sandbox %s=%s, want %s (the probe itself is broken)", k, got[k], v)
			}
		}
	})
	t.Run("bwrap", func(t *testing.T) {
		got, env, info := run(t, SandboxBwrap)
		want := map[string]string{"home-write": "no", "tmp-outside-write": "no", "dir-write": "yes", "tmp-write": "yes", "tcp-connect": "no", "run-empty": "yes"}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("in the sandbox %s=%s, want %s", k, got[k], v)
			}
		}
		for _, p := range []string{filepath.Join(outsideHome, "probe"), filepath.Join(outsideTmp, "probe")} {
			if _, err := os.Stat(p); err == nil {
				t.Errorf("the sandboxed suite wrote %s", p)
			}
		}
		if info.Sandbox != SandboxBwrap {
			t.Errorf("RunInfo.Sandbox = %q, want bwrap", info.Sandbox)
		}
		if strings.Contains(env, "leak") {
			t.Errorf("a secret reached the sandbox:\n%s", env)
		}
		for _, want := range []string{"/orch-gocache-", "GOPROXY=off\n", "TMPDIR=/tmp\n"} {
			if !strings.Contains(env, want) {
				t.Errorf("sandbox environment lacks %q", strings.TrimSpace(want))
			}
		}
	})
}

func TestSandboxGoSuites(t *testing.T) {
	requireBwrap(t)
	t.Parallel()
	// A module without imports builds in a moment even with an empty
	// GOCACHE; TestSandboxGoTestSlow compiles the testing package too.
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
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
	suites, _, err := Detect(dir)
	if err != nil {
		t.Fatal(err)
	}
	opt := options(t, dir)
	opt.Sandbox = SandboxBwrap
	opt.Env = goEnv(t)
	userCache, _ := lookupEnv(opt.Env, "GOCACHE")
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
	for i, tt := range hangScripts() {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			opt := options(t, dir)
			opt.Sandbox = SandboxBwrap
			marker := fmt.Sprintf("ORCH_TESTRUN_MARKER=%d-%d-%d", os.Getpid(), i, time.Now().UnixNano())
			name, value, _ := strings.Cut(marker, "=")
			var during []int
			opt.Stream = &triggerWriter{trigger: "up 42", fire: func() { during = procsWithEnv(t, marker) }}
			s := sh("hang", tt.script)
			s.Timeout = time.Second
			s.Env = map[string]string{name: value}
			report, _, err := Run(context.Background(), []Suite{s}, opt)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if c := findCase(t, report.Suites[0].Cases, caseTimeout); c.Message != "timed out after 1s" {
				t.Errorf("timeout case %+v", c)
			}
			if len(during) < 4 {
				t.Errorf("while the suite ran, %d processes carried the marker (%v), want at least the shell, two sleeps and the sub-shell", len(during), during)
			}
			if left := procsWithEnv(t, marker); len(left) > 0 {
				t.Errorf("processes of the sandboxed suite still run after Run returned: %v", left)
			}
		})
	}
}
