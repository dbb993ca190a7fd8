package testphase

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/phasetest"
	"github.com/orchdev/orch/internal/proctest"
	"github.com/orchdev/orch/internal/sandbox"
	"github.com/orchdev/orch/internal/testrun"
)

// The kill test runs the real orch binary, built once, and SIGKILLs
// `orch test` (its process group) at random moments — before its suites,
// while they run, after them — with and without the bwrap sandbox, in a
// repository whose suites take a while and one of which writes a marker
// file into the test worktree while it runs. After each kill, as a user
// would: `orch status` shows the run interrupted and says to run the tests
// again; the next `orch test` kills what the killed run left running
// before its own suites start (and says so), reports the right counts on
// exactly base + patch in the warm worktree, and leaves no cgroup of the
// dead run behind; `orch verify` passes. It reports how many kills landed
// in each window.
//
// Each round runs its orch processes in cgroups of its own (when cgroups
// are writable): orch reaps the stale suite cgroups below its own cgroup,
// so without them the rounds — and any other orch on the machine — would
// reap each other's and the reaping could not be asserted.

// killEnvVar is the variable, passed to the suites by env_allow, that
// marks every process of one orch run: "<mode>-<round>-killed" for the
// run the round kills, "<mode>-<round>-next" for the run after it.
const killEnvVar = "KILLTEST_RUN"

// The repository under test: calc.txt is fixed by the patch; three
// suites, two of which pass.
const (
	killCalcBase  = "a - b\n"
	killCalcFixed = "a + b\n"
	killPatch     = "diff --git a/calc.txt b/calc.txt\n--- a/calc.txt\n+++ b/calc.txt\n@@ -1 +1 @@\n-a - b\n+a + b\n"
	// markerSuite fails when a marker of another run is in the worktree
	// (when it starts and when it ends): the worktree was not reset, or
	// a killed run's suite still writes into it. It writes its own
	// marker for about a second and removes it.
	markerSuite = `for f in marker-*; do
  if [ -e "$f" ]; then echo "foreign marker $f at the start"; exit 1; fi
done
i=0
while [ $i -lt 50 ]; do
  echo "$KILLTEST_RUN" > "marker-$KILLTEST_RUN"
  sleep 0.01
  i=$((i+1))
done
for f in marker-*; do
  if [ "$f" != "marker-$KILLTEST_RUN" ]; then echo "foreign marker $f at the end"; exit 1; fi
done
rm -f "marker-$KILLTEST_RUN"
`
	brokenSuite = "sleep 0.2\necho the broken suite ends\nexit 1\n"
	killConfig  = `[test]
env_allow = ["` + killEnvVar + `"]
[[test.suites]]
name = "marker"
command = "sh suite/marker.sh"
[[test.suites]]
name = "fixed"
command = "grep -q 'a + b' calc.txt"
[[test.suites]]
name = "broken"
command = "sh suite/broken.sh"
`
)

// killWant is the summary of a complete run.
var killWant = artifact.Summary{Passed: 2, Failed: 1}

type killRig struct {
	t    testing.TB
	bin  string
	home string
	env  []string
}

// run runs prog to its end in dir with extra variables: exit code and
// output.
func (k *killRig) run(dir string, extra []string, prog string, args ...string) (int, string) {
	k.t.Helper()
	cmd := exec.Command(prog, args...)
	cmd.Dir, cmd.Env = dir, append(slices.Clip(k.env), extra...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), string(out)
	}
	if err != nil {
		k.t.Fatalf("%s %v: %v", prog, args, err)
	}
	return 0, string(out)
}

func (k *killRig) must(dir, prog string, args ...string) string {
	k.t.Helper()
	code, out := k.run(dir, nil, prog, args...)
	if code != 0 {
		k.t.Fatalf("%s %v: exit %d\n%s", prog, args, code, out)
	}
	return strings.TrimSpace(out)
}

// template makes the repository whose task t1 is in test with the patch,
// and returns it with its base commit.
func (k *killRig) template() (dir, base string) {
	dir = filepath.Join(k.t.TempDir(), "repo")
	k.must(".", "git", "init", "-q", "-b", "main", dir)
	for p, c := range map[string]string{"calc.txt": killCalcBase, "suite/marker.sh": markerSuite, "suite/broken.sh": brokenSuite} {
		gittest.Write(k.t, dir, p, c)
	}
	k.must(dir, k.bin, "init")
	gittest.Write(k.t, dir, ".orch/config.toml", killConfig)
	k.must(dir, "git", "add", "-A")
	k.must(dir, "git", "commit", "-qm", "base")
	base = k.must(dir, "git", "rev-parse", "HEAD")
	k.must(dir, k.bin, "new", "--id", "t1", "make Add add")
	td := filepath.Join(dir, ".orch", "tasks", "t1")
	gittest.Write(k.t, td, "planning/planning.ai.json",
		`{"id":"t1","title":"Make calc add","brief":"make calc add","file_plan":[{"path":"calc.txt","intent":"update"}]}`)
	k.must(dir, k.bin, "next", "--override", "setup", "--to", "codegen")
	gittest.Write(k.t, td, "code/files/calc.txt", killCalcFixed)
	gittest.Write(k.t, td, "code/diff.patch", killPatch)
	gittest.Write(k.t, td, "code/codegen.json", `{"status":"completed","base":"`+base+`"}`)
	k.must(dir, k.bin, "next", "--override", "setup", "--to", "test")
	return dir, base
}

// copyTree copies a repository (with .git and .orch) to a new folder.
func (k *killRig) copyTree(src string) string { return gittest.CopyTree(k.t, src) }

// cgroupBox is a cgroup made for one round in each hierarchy orch uses
// (v2, v1 pids, v1 memory): the round's orch processes run in it, so the
// suite cgroups they make and reap are below it.
type cgroupBox struct{ dirs []string }

// ownCgroups lists this process's cgroup folders in the hierarchies orch
// uses; nil when they cannot be read.
func ownCgroups() []string {
	mi, err1 := os.ReadFile("/proc/self/mountinfo")
	cg, err2 := os.ReadFile("/proc/self/cgroup")
	if err1 != nil || err2 != nil {
		return nil
	}
	type mount struct{ root, point, fstype, opts string }
	var mounts []mount
	for line := range strings.Lines(string(mi)) {
		f := strings.Fields(line)
		sep := slices.Index(f, "-")
		if sep < 6 || len(f) < sep+4 {
			continue
		}
		mounts = append(mounts, mount{f[3], f[4], f[sep+1], f[sep+3]})
	}
	var dirs []string
	for line := range strings.Lines(string(cg)) {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, m := range mounts {
			v2 := parts[0] == "0" && parts[1] == "" && m.fstype == "cgroup2"
			v1 := false
			for _, c := range []string{"pids", "memory"} {
				v1 = v1 || m.fstype == "cgroup" && slices.Contains(strings.Split(parts[1], ","), c) && slices.Contains(strings.Split(m.opts, ","), c)
			}
			if !v2 && !v1 {
				continue
			}
			rel, ok := strings.CutPrefix(parts[2], m.root)
			if m.root == "/" {
				rel, ok = parts[2], true
			}
			if ok {
				dirs = append(dirs, filepath.Join(m.point, rel))
				break
			}
		}
	}
	return dirs
}

// newBox makes the round's cgroups, or says why it cannot.
func newBox(name string) (*cgroupBox, error) {
	own := ownCgroups()
	if len(own) == 0 {
		return nil, errors.New("no cgroup hierarchy found")
	}
	b := &cgroupBox{}
	for _, d := range own {
		dir := filepath.Join(d, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			b.remove()
			return nil, err
		}
		b.dirs = append(b.dirs, dir)
	}
	return b, nil
}

// wrap returns argv run inside the box: a shell moves itself into its
// cgroups and execs argv (same pid).
func (b *cgroupBox) wrap(argv []string) []string {
	if b == nil {
		return argv
	}
	out := []string{"/bin/sh", "-c", `while [ "$1" != -- ]; do echo $$ > "$1/cgroup.procs" || exit 97; shift; done; shift; exec "$@"`, "killtest-box"}
	out = append(out, b.dirs...)
	return append(append(out, "--"), argv...)
}

// suiteCgroups lists the orch suite cgroups ("orch-<pid>-…") in the box.
func (b *cgroupBox) suiteCgroups() []string {
	var out []string
	for _, d := range b.dirs {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			if e.IsDir() && strings.HasPrefix(e.Name(), "orch-") {
				out = append(out, filepath.Join(d, e.Name()))
			}
		}
	}
	return out
}

// remove kills what runs in the box and removes its cgroups.
func (b *cgroupBox) remove() {
	for _, d := range b.dirs {
		for range 50 {
			entries, _ := os.ReadDir(d)
			for _, e := range entries {
				if e.IsDir() {
					killCgroup(filepath.Join(d, e.Name()))
					_ = os.Remove(filepath.Join(d, e.Name()))
				}
			}
			killCgroup(d)
			if err := os.Remove(d); err == nil || os.IsNotExist(err) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func killCgroup(dir string) {
	data, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	for _, f := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 1 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// procsWith lists the live processes (not zombies) whose environment holds
// KILLTEST_RUN=value: an orch run's processes, orch's own included.
func procsWith(value string) []int { return proctest.WithEnv(killEnvVar+"="+value, "") }

// suiteProcs lists those of them that belong to a suite: orch marks every
// process of a suite with a variable ORCH_SUITE_<token>.
func suiteProcs(value string) []int { return proctest.WithEnv(killEnvVar+"="+value, "ORCH_SUITE_") }

// killPlan says when a round kills: delay after the moment after names
// ("start", "phase_started": the transcript gained it, "suite": the first
// suite's log began, "suites done": the last suite's log ended).
type killPlan struct {
	after string
	delay time.Duration
}

func (p killPlan) String() string { return fmt.Sprintf("%v after %s", p.delay, p.after) }

// The windows a kill lands in.
const (
	stageNotLanded  = "finished before the kill"
	stageNotStarted = "before the run started"
	stageBefore     = "before the suites"
	stageDuring     = "during the suites"
	stageAfter      = "after the suites"
	stageRecorded   = "after the run was recorded"
)

// progress reads how far the run in dir got beyond the template's
// transcript (logLen bytes): the last of the stage constants it reached.
func progress(dir string, logLen int) string {
	data, _ := os.ReadFile(filepath.Join(dir, ".orch", "tasks", "t1", "transcript.jsonl"))
	if len(data) > logLen {
		data = data[logLen:]
	} else {
		data = nil
	}
	if bytes.Contains(data, []byte(`"kind":"phase_finished"`)) {
		return stageRecorded
	}
	if !bytes.Contains(data, []byte(`"kind":"phase_started"`)) {
		return stageNotStarted
	}
	logs, _ := filepath.Glob(filepath.Join(dir, ".orch", "tasks", "t1", ".staging", "test-*", "test", "logs", "*.log"))
	stage := stageBefore
	for _, l := range logs {
		data, _ := os.ReadFile(l)
		if bytes.Contains(data, []byte("=== orch: suite")) {
			stage = stageDuring
		}
		if filepath.Base(l) == "broken.log" && bytes.Contains(data, []byte("[orch: suite broken finished")) {
			return stageAfter
		}
	}
	return stage
}

// reached reports whether the run got to the moment a plan names.
func reached(dir string, logLen int, after string) bool {
	p := progress(dir, logLen)
	switch after {
	case "phase_started":
		return p != stageNotStarted
	case "suite":
		return p == stageDuring || p == stageAfter || p == stageRecorded
	case "suites done":
		return p == stageAfter || p == stageRecorded
	}
	return true
}

// start starts orch in dir (in box, in a process group of its own) with
// KILLTEST_RUN=run.
func (k *killRig) start(dir string, box *cgroupBox, run string, args ...string) (*exec.Cmd, *bytes.Buffer, chan error) {
	k.t.Helper()
	argv := box.wrap(append([]string{k.bin}, args...))
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, append(slices.Clip(k.env), killEnvVar+"="+run)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		k.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	return cmd, &out, done
}

// killAt starts `orch test` and SIGKILLs its process group as planned. It
// returns the window the kill landed in and the killed orch's pid.
func (k *killRig) killAt(dir string, box *cgroupBox, run string, logLen int, plan killPlan, args ...string) (stage string, pid int) {
	k.t.Helper()
	cmd, out, done := k.start(dir, box, run, args...)
	finished := func(err error) (string, int) {
		if err != nil {
			k.t.Fatalf("orch %v failed before the kill: %v\n%s", args, err, out)
		}
		return stageNotLanded, cmd.Process.Pid
	}
	// Watch the transcript and the staged logs (polling; no timing is
	// asserted, it only places the kill).
	for !reached(dir, logLen, plan.after) {
		select {
		case err := <-done:
			return finished(err)
		case <-time.After(time.Millisecond):
		}
	}
	select {
	case err := <-done:
		return finished(err)
	case <-time.After(plan.delay):
	}
	// The window is read before the kill: what the run had done when it
	// died (at most a little more).
	stage = progress(dir, logLen)
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	err := <-done
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return stage, cmd.Process.Pid
		}
	}
	return finished(err)
}

// killResult is what one round saw.
type killResult struct {
	stage    string
	orphans  bool // processes of the killed run were alive after the kill
	reapNote bool // the next run's notes say it killed them
}

func TestKillOrchTest(t *testing.T) {
	if testing.Short() {
		t.Skip("builds orch and kills it many times")
	}
	home := t.TempDir()
	k := &killRig{t: t, bin: phasetest.BuildOrch(t), home: home, env: phasetest.OrchEnv(home)}
	tmpl, base := k.template()
	logLen := gittest.Size(t, filepath.Join(tmpl, ".orch", "tasks", "t1", "transcript.jsonl"))
	rounds := phasetest.KillRounds(30, 6)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))

	// Cgroups of its own for each round, when they can be made.
	probe, boxErr := newBox(fmt.Sprintf("killtest-%d-probe", os.Getpid()))
	if probe != nil {
		probe.remove()
	}
	for _, mode := range []string{"none", "bwrap"} {
		t.Run(mode, func(t *testing.T) {
			args := []string{"test"}
			if mode == "none" {
				// Without the sandbox a killed run's suite runs on: only
				// its cgroup lets the next run find and stop it.
				if boxErr != nil {
					if os.Getenv("CI") != "" {
						t.Fatalf("CI is set but cgroups cannot be made: %v", boxErr)
					}
					t.Skipf("cgroups cannot be made here (%v): a suite left running by a killed orch cannot be found", boxErr)
				}
				args = append(args, "--sandbox", "none")
			} else if err := sandbox.Check("bwrap"); err != nil {
				if os.Getenv("CI") != "" || os.Getenv("ORCH_REQUIRE_BWRAP") == "1" {
					t.Fatalf("CI or ORCH_REQUIRE_BWRAP=1 is set, but the bwrap sandbox is unavailable: %v", err)
				}
				t.Skipf("bwrap sandbox unavailable: %v", err)
			}
			// How long an uninterrupted run takes: kills are spread over
			// it.
			start := time.Now()
			code, out := k.run(k.copyTree(tmpl), []string{killEnvVar + "=" + mode + "-span"}, k.bin, args...)
			span := time.Since(start)
			if code != 0 {
				t.Fatalf("an uninterrupted orch test: exit %d\n%s", code, out)
			}
			var mu sync.Mutex
			stages := map[string]int{}
			orphans, reaped := 0, 0
			t.Run("kills", func(t *testing.T) {
				for i := range rounds {
					t.Run(strconv.Itoa(i), func(t *testing.T) {
						t.Parallel()
						mu.Lock()
						// A fifth of the kills come at a random moment of
						// an uninterrupted run's span; the others at
						// random delays after its phase_started event,
						// after its first suite began (a while into the
						// suites, or just as the suite starts) and after
						// its last suite ended.
						var plan killPlan
						switch i % 5 {
						case 0:
							plan = killPlan{"start", time.Duration(rng.Int64N(int64(span)))}
						case 1:
							// (mostly while the worktree is reset and the
							// patch applied)
							plan = killPlan{"phase_started", time.Duration(rng.Int64N(int64(60 * time.Millisecond)))}
						case 2:
							plan = killPlan{"suite", time.Duration(rng.Int64N(int64(span) / 2))}
						case 3:
							plan = killPlan{"suite", time.Duration(rng.Int64N(int64(5 * time.Millisecond)))}
						case 4:
							plan = killPlan{"suites done", time.Duration(rng.Int64N(int64(3 * time.Millisecond)))}
						}
						// In every other round the test stops (SIGSTOP)
						// what the killed run left running: it cannot end
						// on its own, so the next run must kill it and
						// say so. In the others it runs on and writes its
						// marker into the worktree the next run resets.
						freeze := i%2 == 1
						mu.Unlock()
						r := (&killRig{t: t, bin: k.bin, home: k.home, env: k.env}).round(mode, i, tmpl, base, logLen, plan, freeze, args)
						mu.Lock()
						defer mu.Unlock()
						stages[r.stage]++
						if r.orphans {
							orphans++
						}
						if r.reapNote {
							reaped++
						}
					})
				}
			})
			var parts []string
			landed := 0
			for s, n := range stages {
				parts = append(parts, fmt.Sprintf("%s: %d", s, n))
				if s != stageNotLanded {
					landed += n
				}
			}
			slices.Sort(parts)
			t.Logf("orch test --sandbox %s (uninterrupted %v): %d kills, %d landed while it ran; %s; processes of the killed run alive right after the kill in %d rounds; the next run's notes say it killed some in %d",
				mode, span.Round(time.Millisecond), rounds, landed, strings.Join(parts, ", "), orphans, reaped)
			if rounds >= 20 {
				if landed*2 < rounds {
					t.Errorf("only %d of %d kills landed while orch test ran", landed, rounds)
				}
				if stages[stageDuring]*5 < rounds {
					t.Errorf("only %d of %d kills landed while the suites ran", stages[stageDuring], rounds)
				}
				if mode == "none" && orphans == 0 {
					t.Errorf("no kill of orch test --sandbox none left a suite running: the test does not test the reaping")
				}
			}
		})
	}
}

// round kills one orch test and checks its aftermath.
func (k *killRig) round(mode string, i int, tmpl, base string, logLen int, plan killPlan, freeze bool, args []string) killResult {
	t := k.t
	var box *cgroupBox
	if b, err := newBox(fmt.Sprintf("killtest-%d-%s-%d", os.Getpid(), mode, i)); err == nil {
		box = b
		t.Cleanup(b.remove)
	}
	dir := k.copyTree(tmpl)
	killed, next := fmt.Sprintf("%s-%d-killed", mode, i), fmt.Sprintf("%s-%d-next", mode, i)
	stage, pid := k.killAt(dir, box, killed, logLen, plan, args...)
	when := fmt.Sprintf("kill %d, %v (%s)", i, plan, stage)
	res := killResult{stage: stage}

	// What the killed run left running (a suite without the sandbox).
	left := procsWith(killed)
	if freeze && len(left) > 0 {
		// Only the suite's processes: orch's own git commands (in
		// process groups of their own) end on their own.
		for range 2 {
			for _, p := range suiteProcs(killed) {
				_ = syscall.Kill(p, syscall.SIGSTOP)
			}
		}
	}
	// Orphans are the suite's processes left running: orch's own git
	// commands end on their own and are no work for the reaper.
	left = suiteProcs(killed)
	res.orphans = len(left) > 0

	// The next orch command, any: status. A run killed while it worked
	// is shown as interrupted, with the command that runs it again.
	code, status := k.run(dir, nil, k.bin, "status")
	if code != 0 {
		t.Fatalf("%s: orch status: exit %d\n%s", when, code, status)
	}
	if stage != stageNotLanded && stage != stageNotStarted && stage != stageRecorded {
		// (Killed between the phase_started append and the state.json
		// rename, status first names the roll-forward.)
		if !strings.Contains(status, "interrupted") || !strings.Contains(status, "run: orch test") && !strings.Contains(status, "run: orch next --from test") || strings.Contains(status, "status=running") {
			t.Fatalf("%s: orch status does not show the run interrupted (and not running) with orch test to run it again:\n%s", when, status)
		}
	}

	// The next orch test: before its suites start, nothing of the killed
	// run's suites runs any more.
	cmd, out, done := k.start(dir, box, next, args...)
	var seenNext bool
	var aliveAtNext []int
	for running := true; running; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("%s: the next orch test: %v\n%s", when, err, out)
			}
			running = false
		case <-time.After(5 * time.Millisecond):
			if !seenNext && len(suiteProcs(next)) > 0 {
				seenNext = true
				aliveAtNext = suiteProcs(killed)
			}
		}
	}
	_ = cmd
	if !seenNext {
		t.Fatalf("%s: never saw a suite process of the next run (KILLTEST_RUN=%s)\n%s", when, next, out)
	}
	if len(aliveAtNext) > 0 {
		t.Fatalf("%s: processes of the killed run still ran when the next run's suites started:\n%s\n%s", when, describeProcs(aliveAtNext), out)
	}
	if after := suiteProcs(killed); len(after) > 0 {
		t.Fatalf("%s: processes of the killed run's suites still run after the next run:\n%s", when, describeProcs(after))
	}
	// orch's own git commands of the killed run (process groups of their
	// own, never killed, so that no git lock is left behind) end on their
	// own: give them time on a loaded machine, but they must end.
	after := procsWith(killed)
	for deadline := time.Now().Add(10 * time.Second); len(after) > 0 && time.Now().Before(deadline); after = procsWith(killed) {
		time.Sleep(20 * time.Millisecond)
	}
	if len(after) > 0 {
		t.Fatalf("%s: processes of the killed run still run 10 s after the next run:\n%s", when, describeProcs(after))
	}

	// Its report: the right counts, on exactly base + patch in the warm
	// worktree, and what it did about the killed run.
	var rep Report
	data, err := os.ReadFile(filepath.Join(dir, ".orch", "tasks", "t1", filepath.FromSlash(artifact.TestReportFile)))
	if err != nil {
		t.Fatalf("%s: %v", when, err)
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatalf("%s: report.json: %v", when, err)
	}
	wantSandbox := map[string]string{"none": "none", "bwrap": "bwrap"}[mode]
	if rep.Status != artifact.TestCompleted || rep.Summary != killWant || rep.OverallPass || rep.Sandbox != wantSandbox {
		t.Fatalf("%s: the next run's report: status %s, summary %+v, sandbox %s, want completed, %+v, %s\n%s", when, rep.Status, rep.Summary, rep.Sandbox, killWant, wantSandbox, out)
	}
	notes := strings.Join(rep.Notes, "\n")
	reapNote := fmt.Sprintf("left running by orch process %d, which was killed", pid)
	res.reapNote = strings.Contains(notes, reapNote)
	if freeze && res.orphans && mode == "none" && box != nil && !res.reapNote {
		t.Fatalf("%s: processes %v of the killed run were left running, but the next run's notes do not say it killed them:\n%s", when, left, notes)
	}
	if strings.Contains(notes, "could not be used") {
		t.Fatalf("%s: the next run did not use the warm worktree:\n%s", when, notes)
	}
	wt := filepath.Join(k.home, ".cache", "orch", "build", testrun.RepoKey(dir), WarmWorktree)
	if head := k.must(wt, "git", "rev-parse", "HEAD"); head != base {
		t.Fatalf("%s: the warm worktree is at %s, want the base %s", when, head, base)
	}
	if st := k.must(wt, "git", "status", "--porcelain=v1", "--untracked-files=all", "--ignored"); st != "M calc.txt" {
		t.Fatalf("%s: the warm worktree is not exactly base + patch; git status:\n%s", when, st)
	}
	if got, _ := os.ReadFile(filepath.Join(wt, "calc.txt")); string(got) != killCalcFixed {
		t.Fatalf("%s: calc.txt in the warm worktree = %q", when, got)
	}

	// The transcript and state.json agree.
	if code, v := k.run(dir, nil, k.bin, "verify"); code != 0 {
		t.Fatalf("%s: orch verify: exit %d\n%s", when, code, v)
	}
	// No cgroup of the killed run (or of the next one) is left.
	if box != nil {
		if stale := box.suiteCgroups(); len(stale) > 0 {
			t.Fatalf("%s: suite cgroups left after the next run: %v", when, stale)
		}
	}
	_ = os.RemoveAll(dir)
	return res
}

// describeProcs says what each process is: its command line and cgroups.
func describeProcs(pids []int) string {
	var b strings.Builder
	for _, p := range pids {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p))
		cg, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", p))
		fmt.Fprintf(&b, "  pid %d: %q\n    cgroups %q\n", p, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}), cg)
	}
	return b.String()
}
