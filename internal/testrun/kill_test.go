package testrun

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/artifact/artifacttest"
	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/procstat"
	"github.com/orchdev/orch/internal/testreport"
)

// sandboxModes are the modes the process tests run in; bwrap only where it
// works (or fails the test under ORCH_REQUIRE_BWRAP=1).
func sandboxModes() []string { return []string{SandboxNone, SandboxBwrap} }

func requireMode(t *testing.T, mode string) {
	t.Helper()
	if mode == SandboxBwrap {
		requireBwrap(t)
	}
}

// testMarker returns a variable only the processes of one test's suite
// carry, independent of orch's own marker.
func testMarker(t *testing.T) (name, value, entry string) {
	t.Helper()
	name = "ORCH_TESTRUN_MARKER"
	value = fmt.Sprintf("%d-%s-%d", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "_"), time.Now().UnixNano())
	return name, value, name + "=" + value
}

// runUntilTimeout runs script as a suite with a one-second timeout and the
// test's marker (testMarker) in its environment, and fails t unless the
// suite timed out. It returns the marker and the pids that carried it when
// the script printed "up 42".
func runUntilTimeout(t *testing.T, opt Options, script string) (during []int, marker string) {
	t.Helper()
	name, value, marker := testMarker(t)
	opt.Stream = &triggerWriter{trigger: "up 42", fire: func() { during = procsWithEnv(t, marker) }}
	s := sh("hang", script)
	s.Timeout = time.Second
	s.Env = map[string]string{name: value}
	report, _, err := Run(context.Background(), []Suite{s}, opt)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if c := artifacttest.FindCase(t, report.Suites[0].Cases, caseTimeout); c.Message != "timed out after 1s" {
		t.Errorf("timeout case %+v", c)
	}
	return during, marker
}

// assertNoneLeft checks, when Run has returned and again a second later,
// that no process carrying the marker is alive.
func assertNoneLeft(t *testing.T, marker string) {
	t.Helper()
	if left := procsWithEnv(t, marker); len(left) > 0 {
		t.Errorf("processes of the suite still run after Run returned: %v", left)
	}
	time.Sleep(time.Second)
	if left := procsWithEnv(t, marker); len(left) > 0 {
		t.Errorf("processes of the suite run 1 s after Run returned: %v", left)
	}
}

// TestTimeoutKillsEverything: at the timeout, nothing of the suite
// survives — detached grandchildren (setsid, double fork), processes that
// ignore SIGTERM — with and without the sandbox.
func TestTimeoutKillsEverything(t *testing.T) {
	scripts := []struct {
		name   string
		script string
		procs  int // processes started before "up 42"
	}{
		{
			name: "detached grandchildren",
			script: `setsid sh -c 'echo $$ >> pids; exec sleep 300' &
(setsid sh -c 'echo $$ >> pids; exec sleep 300' &) &
sh -c 'sleep 300 & echo $! >> pids; wait' &
until [ "$(wc -l < pids 2>/dev/null || echo 0)" -ge 3 ]; do sleep 0.01; done
echo "up $((40 + 2))"; sleep 300`,
			procs: 4,
		},
		{
			name: "ignores TERM",
			script: `trap '' TERM
setsid sh -c 'trap "" TERM; echo $$ >> pids; while :; do sleep 1; done' &
sh -c 'trap "" TERM; sleep 300 & echo $! >> pids; wait' &
until [ "$(wc -l < pids 2>/dev/null || echo 0)" -ge 2 ]; do sleep 0.01; done
echo "up $((40 + 2))"; while :; do sleep 1; done`,
			procs: 3,
		},
	}
	for _, mode := range sandboxModes() {
		for _, tt := range scripts {
			t.Run(mode+"/"+tt.name, func(t *testing.T) {
				requireMode(t, mode)
				t.Parallel()
				dir := t.TempDir()
				opt := options(t, dir)
				opt.Sandbox = mode
				during, marker := runUntilTimeout(t, opt, tt.script)
				if len(during) < tt.procs {
					t.Errorf("while the suite ran, %d processes carried the marker (%v), want at least %d", len(during), during, tt.procs)
				}
				if mode == SandboxNone {
					// Their host pids: gone too.
					for _, pid := range readPids(t, filepath.Join(dir, "pids")) {
						if procstat.Live(pid) {
							t.Errorf("pid %d still runs after Run returned", pid)
						}
					}
				}
				assertNoneLeft(t, marker)
			})
		}
	}
}

// TestTimeoutFindsProcessesByMarker: without the sandbox and without a
// cgroup, a process that left the session is still found by orch's marker
// in its environment.
func TestTimeoutFindsProcessesByMarker(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	opt := options(t, dir)
	opt.noCgroups = true
	name, value, marker := testMarker(t)
	s := sh("detached", `(setsid sh -c 'echo $$ > pid; exec sleep 300' &) & until [ -s pid ]; do sleep 0.01; done; echo ready; sleep 300`)
	s.Timeout = time.Second
	s.Env = map[string]string{name: value}
	report, info, err := Run(context.Background(), []Suite{s}, opt)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	artifacttest.FindCase(t, report.Suites[0].Cases, caseTimeout)
	if len(info.Limits.Processes) != 0 {
		t.Errorf("without cgroups and sandbox, the process limit is said to be enforced by %v", info.Limits.Processes)
	}
	for _, pid := range readPids(t, filepath.Join(dir, "pid")) {
		if procstat.Live(pid) {
			t.Errorf("detached pid %d outlived the suite", pid)
		}
	}
	assertNoneLeft(t, marker)
}

// processLimitWorks runs a harmless suite with the given sandbox and a
// process limit and reports whether the limit was enforced. The fork bomb
// test runs only then: unbounded, it would take the machine down.
func processLimitWorks(t *testing.T, mode string) (bool, Limits) {
	t.Helper()
	opt := options(t, t.TempDir())
	opt.Sandbox = mode
	opt.MaxProcesses = 64
	report, info, err := Run(context.Background(), []Suite{sh("probe", "true")}, opt)
	if err != nil || !report.OverallPass {
		t.Fatalf("probe run: %+v, %v", report, err)
	}
	return len(info.Limits.Processes) > 0, info.Limits
}

// TestForkBombIsBounded: a fork bomb under a limit of 64 processes never
// has more than that, and nothing of it survives the timeout.
func TestForkBombIsBounded(t *testing.T) {
	const limit = 64
	for _, mode := range sandboxModes() {
		t.Run(mode, func(t *testing.T) {
			requireMode(t, mode)
			if ok, l := processLimitWorks(t, mode); !ok {
				t.Skipf("no process limit can be enforced here (%+v: no writable pids cgroup; RLIMIT_NPROC is used only in bwrap's user namespace and never binds root): a fork bomb would endanger the machine", l)
			}
			dir := t.TempDir()
			opt := options(t, dir)
			opt.Sandbox = mode
			opt.MaxProcesses = limit
			name, value, marker := testMarker(t)
			// Every process forks for ever; a failed fork ends it (dash).
			s := sh("bomb", `bomb() { while :; do bomb | bomb & done; }; echo "up $((40 + 2))"; bomb & exec sleep 300`)
			s.Timeout = 2 * time.Second
			s.Env = map[string]string{name: value}

			var mu sync.Mutex
			most := 0
			done := make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-done:
						return
					case <-time.After(50 * time.Millisecond):
					}
					n := len(procsWithEnv(t, marker))
					mu.Lock()
					most = max(most, n)
					mu.Unlock()
				}
			}()
			report, info, err := Run(context.Background(), []Suite{s}, opt)
			close(done)
			wg.Wait()
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			artifacttest.FindCase(t, report.Suites[0].Cases, caseTimeout)
			// The bwrap process outside the limited sandbox carries the
			// marker too.
			if most > limit+1 {
				t.Errorf("the fork bomb had %d processes at once, limit %d", most, limit)
			}
			log, _ := os.ReadFile(filepath.Join(opt.LogDir, "bomb.log"))
			if !strings.Contains(strings.ToLower(string(log)), "fork") {
				t.Errorf("the log shows no failed fork:\n%.2000s", log)
			}
			if len(info.Limits.Processes) == 0 || info.Limits.MaxProcesses != limit {
				t.Errorf("limits %+v", info.Limits)
			}
			t.Logf("most processes at once: %d (limit %d, enforced by %v)", most, limit, info.Limits.Processes)
			assertNoneLeft(t, marker)
		})
	}
}

// TestMemoryLimit: a suite that holds more memory than MaxMemory fails;
// the same suite passes with room (so the failure is the limit's).
func TestMemoryLimit(t *testing.T) {
	const script = `x=$(head -c 80000000 /dev/zero | tr '\0' a); echo "held ${#x} bytes"`
	for _, mode := range sandboxModes() {
		t.Run(mode, func(t *testing.T) {
			requireMode(t, mode)
			t.Parallel()
			run := func(limit int64) (artifact.Suite, RunInfo, string) {
				opt := options(t, t.TempDir())
				opt.Sandbox = mode
				opt.MaxMemory = limit
				report, info, err := Run(context.Background(), []Suite{sh("mem", script)}, opt)
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
				log, _ := os.ReadFile(filepath.Join(opt.LogDir, "mem.log"))
				return report.Suites[0], info, string(log)
			}
			roomy, _, log := run(1 << 30)
			if !roomy.OverallPass || !strings.Contains(log, "held 80000000 bytes") {
				t.Fatalf("with 1 GiB the suite failed: %+v\n%s", roomy, log)
			}
			tight, info, log := run(32 << 20)
			if tight.OverallPass || strings.Contains(log, "held 80000000 bytes") {
				t.Errorf("with 32 MiB the suite held 80 MB: %+v\n%s", tight, log)
			}
			if len(info.Limits.Memory) == 0 || info.Limits.MaxMemory != 32<<20 {
				t.Errorf("limits %+v", info.Limits)
			}
			t.Logf("over the limit: exit %d, enforced by %v", tight.ExitCode, info.Limits.Memory)
		})
	}
}

// TestLimitsInPlaceBeforeTheCommand: the suite's first process already
// runs with its limits and in its cgroup (orch holds it until they are
// set).
func TestLimitsInPlaceBeforeTheCommand(t *testing.T) {
	for _, mode := range sandboxModes() {
		t.Run(mode, func(t *testing.T) {
			requireMode(t, mode)
			t.Parallel()
			opt := options(t, t.TempDir())
			opt.Sandbox = mode
			opt.MaxMemory = 96 << 20
			opt.MaxProcesses = 100
			suites := []Suite{
				{Name: "limits", Kind: KindTest, Command: []string{"cat", "/proc/self/limits"}},
				{Name: "cgroup", Kind: KindTest, Command: []string{"cat", "/proc/self/cgroup"}},
			}
			report, info, err := Run(context.Background(), suites, opt)
			if err != nil || !report.OverallPass {
				t.Fatalf("Run: %+v, %v", report, err)
			}
			limits := gittest.ReadFile(t, filepath.Join(opt.LogDir, "limits.log"))
			if !regexpLine(`Max data size\s+100663296\s+100663296\s+bytes`).MatchString(limits) {
				t.Errorf("RLIMIT_DATA not in place in the first process:\n%s", limits)
			}
			nproc := regexpLine(`Max processes\s+100\s+100\s+processes`).MatchString(limits)
			if want := slices.ContainsFunc(info.Limits.Processes, func(m string) bool { return strings.HasPrefix(m, "RLIMIT_NPROC") }); nproc != want {
				t.Errorf("RLIMIT_NPROC in place %v, want %v (limits %+v):\n%s", nproc, want, info.Limits, limits)
			}
			cgroup := gittest.ReadFile(t, filepath.Join(opt.LogDir, "cgroup.log"))
			inCgroup := strings.Contains(cgroup, "/orch-")
			if want := slices.ContainsFunc(info.Limits.Processes, func(m string) bool { return strings.HasPrefix(m, "cgroup") }); want && !inCgroup {
				t.Errorf("limits %+v say cgroup, but the first process is not in one:\n%s", info.Limits, cgroup)
			}
		})
	}
}

func regexpLine(expr string) *regexp.Regexp { return regexp.MustCompile(`(?m)^` + expr + `\s*$`) }

// TestSandboxSetupFailure: when bwrap cannot build the sandbox (here: a
// folder to bind vanished after the sandbox was prepared), the suite is a
// runner error naming the sandbox, not a test failure, and bwrap's message
// is in the log.
func TestSandboxSetupFailure(t *testing.T) {
	requireBwrap(t)
	opt := options(t, t.TempDir())
	opt.Sandbox = SandboxBwrap
	gone := filepath.Join(t.TempDir(), "nonexistent-orch-toolchain")
	if err := os.Mkdir(gone, 0o755); err != nil {
		t.Fatal(err)
	}
	opt.ReadOnly = []string{gone}
	r, _, err := newRunner(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.close() })
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	name, value, marker := testMarker(t)
	s := sh("setup", "echo ran")
	s.Env = map[string]string{name: value}
	res := r.runSuite(context.Background(), s)
	if res.problem == "" || !strings.Contains(res.problem, "bwrap could not set up the sandbox") || res.suite.OverallPass {
		t.Errorf("result %+v, want a runner failure about the sandbox", res)
	}
	if c := artifacttest.FindCase(t, res.suite.Cases, caseCommand); c.Status != testreport.StatusError {
		t.Errorf("case %+v, want an error", c)
	}
	log := gittest.ReadFile(t, filepath.Join(opt.LogDir, "setup.log"))
	if !strings.Contains(log, "nonexistent-orch-toolchain") || strings.Contains(log, "\nran\n") {
		t.Errorf("log:\n%s", log)
	}
	assertNoneLeft(t, marker)
}
