package landing

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
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/phasetest"
)

// The kill test runs the real orch binary, built once, and SIGKILLs
// `orch accept` and `orch revert` at random moments in a repository where
// the user has staged, unstaged and untracked work of their own. After the
// kill the next orch command (`orch status`) must leave the repository with
// either no effect or exactly the commit made, the user's work untouched;
// re-running the command then records the real commit and `orch verify`
// passes. It reports how many kills landed while the command ran and what
// state each one left.

type killRig struct {
	t   *testing.T
	bin string
	env []string
}

// run runs a program to completion in dir: exit code and combined output.
func (k *killRig) run(dir, prog string, args ...string) (int, string) {
	k.t.Helper()
	cmd := exec.Command(prog, args...)
	cmd.Dir, cmd.Env = dir, k.env
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

func (k *killRig) git(dir string, args ...string) string {
	k.t.Helper()
	code, out := k.run(dir, "git", args...)
	if code != 0 {
		k.t.Fatalf("git %v: exit %d\n%s", args, code, out)
	}
	return strings.TrimSpace(out)
}

func (k *killRig) orch(dir string, args ...string) string {
	k.t.Helper()
	code, out := k.run(dir, k.bin, args...)
	if code != 0 {
		k.t.Fatalf("orch %v: exit %d\n%s", args, code, out)
	}
	return out
}

// killPlan says when a round kills: delay after the transcript gains an
// event of kind after (immediately when after is ""). logLen is the
// transcript's length before the run.
type killPlan struct {
	after  string
	delay  time.Duration
	logLen int
}

func (p killPlan) String() string {
	if p.after == "" {
		return fmt.Sprintf("%v after the start", p.delay)
	}
	return fmt.Sprintf("%v after its %s event", p.delay, p.after)
}

// killAt starts orch and SIGKILLs it as planned. landed is true when the
// kill found it still running.
func (k *killRig) killAt(dir string, plan killPlan, args ...string) (landed bool) {
	k.t.Helper()
	cmd := exec.Command(k.bin, args...)
	cmd.Dir, cmd.Env = dir, k.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		k.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	finished := func(err error) bool {
		if err != nil {
			k.t.Fatalf("orch %v failed before the kill: %v\n%s", args, err, out.String())
		}
		return false
	}
	if plan.after != "" {
		// Watch the transcript for the event (polling; no timing is
		// asserted, it only places the kill).
		log := filepath.Join(dir, ".orch", "tasks", "t1", "transcript.jsonl")
		for seen := false; !seen; {
			select {
			case err := <-done:
				return finished(err)
			case <-time.After(200 * time.Microsecond):
			}
			data, _ := os.ReadFile(log)
			seen = len(data) > plan.logLen && bytes.Contains(data[plan.logLen:], []byte(`"kind":"`+plan.after+`"`))
		}
	}
	select {
	case err := <-done:
		return finished(err)
	case <-time.After(plan.delay):
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	err := <-done
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return true
		}
		k.t.Fatalf("orch %v failed: %v\n%s", args, err, out.String())
	}
	return false
}

// timed runs orch to completion and returns how long it took.
func (k *killRig) timed(dir string, args ...string) time.Duration {
	start := time.Now()
	k.orch(dir, args...)
	return time.Since(start)
}

const (
	killCalcBase = "package calc\n\n// Add returns the sum of a and b.\nfunc Add(a, b int) int { return a - b }\n"
	killCalcFix  = "package calc\n\n// Add returns the sum of a and b.\nfunc Add(a, b int) int { return a + b }\n"
	killHelp     = "package calc\n\n// Help helps.\nfunc Help() {}\n"
	// The user's own status, which must survive everything.
	killUserStatus = "M  staged.txt\n M unstaged.txt\n?? untracked.txt"
)

const killPatch = `diff --git a/calc.go b/calc.go
--- a/calc.go
+++ b/calc.go
@@ -1,4 +1,4 @@
 package calc
 
 // Add returns the sum of a and b.
-func Add(a, b int) int { return a - b }
+func Add(a, b int) int { return a + b }
diff --git a/lib/help.go b/lib/help.go
new file mode 100644
--- /dev/null
+++ b/lib/help.go
@@ -0,0 +1,4 @@
+package calc
+
+// Help helps.
+func Help() {}
diff --git a/old.go b/old.go
deleted file mode 100644
--- a/old.go
+++ /dev/null
@@ -1 +0,0 @@
-package calc
`

// killTemplate builds a project whose task t1 is in accept with passing
// tests, plus the user's own work, and returns it with the base commit.
func (k *killRig) killTemplate() (dir, base string) {
	dir = filepath.Join(k.t.TempDir(), "repo")
	k.git(".", "init", "-q", "-b", "main", dir)
	files := map[string]string{
		"calc.go": killCalcBase, "old.go": "package calc\n", "staged.txt": "s\n", "unstaged.txt": "u\n",
	}
	for p, c := range files {
		gittest.Write(k.t, dir, p, c)
	}
	k.git(dir, "add", "-A")
	k.git(dir, "commit", "-qm", "base")
	base = k.git(dir, "rev-parse", "HEAD")
	k.orch(dir, "init")
	gittest.Write(k.t, dir, ".orch/config.toml", "[test]\nsandbox = \"none\"\n[[test.suites]]\nname = \"adds\"\ncommand = \"grep -q 'a + b' calc.go\"\n")
	k.git(dir, "add", ".orch")
	k.git(dir, "commit", "-qm", "orch init")
	base = k.git(dir, "rev-parse", "HEAD")
	k.orch(dir, "new", "--id", "t1", "make Add add")
	td := filepath.Join(dir, ".orch", "tasks", "t1")
	gittest.Write(k.t, td, "planning/planning.ai.json",
		`{"id":"t1","title":"Make Add add","brief":"make Add add","file_plan":[{"path":"calc.go","intent":"update"},{"path":"lib/help.go","intent":"create"},{"path":"old.go","intent":"delete"}]}`)
	k.orch(dir, "next", "--override", "setup", "--to", "codegen")
	gittest.Write(k.t, td, "code/files/calc.go", killCalcFix)
	gittest.Write(k.t, td, "code/files/lib/help.go", killHelp)
	gittest.Write(k.t, td, "code/diff.patch", killPatch)
	gittest.Write(k.t, td, "code/codegen.json", `{"status":"completed","base":"`+base+`"}`)
	k.orch(dir, "next", "--override", "setup", "--to", "test")
	k.orch(dir, "test")
	k.orch(dir, "next", "--to", "accept")
	// The user's own work, staged and not.
	gittest.Write(k.t, dir, "staged.txt", "s, staged by the user\n")
	k.git(dir, "add", "staged.txt")
	gittest.Write(k.t, dir, "unstaged.txt", "u, edited by the user\n")
	gittest.Write(k.t, dir, "untracked.txt", "mine\n")
	return dir, base
}

// copyTree copies a repository (with .git and .orch) to a new folder.
func (k *killRig) copyTree(src string) string { return gittest.CopyTree(k.t, src) }

// assertUserWork checks the user's own staged, unstaged and untracked work
// and that git status shows nothing else.
func (k *killRig) assertUserWork(dir, when string) {
	k.t.Helper()
	if st := k.git(dir, "status", "--porcelain=v1", "--untracked-files=all", "--", ".", ":!.orch"); st != killUserStatus {
		k.t.Fatalf("%s: git status:\n%s\nwant only the user's own work:\n%s", when, st, killUserStatus)
	}
	if got := k.git(dir, "show", ":staged.txt"); got != "s, staged by the user" {
		k.t.Fatalf("%s: staged.txt in the index = %q", when, got)
	}
	for p, want := range map[string]string{"unstaged.txt": "u, edited by the user\n", "untracked.txt": "mine\n"} {
		if data, err := os.ReadFile(filepath.Join(dir, p)); err != nil || string(data) != want {
			k.t.Fatalf("%s: %s = %q (%v)", when, p, data, err)
		}
	}
}

// assertChangeCommit checks that c is one commit on parent with exactly
// the change's files and the task's trailer, and that the work tree
// holds the change.
func (k *killRig) assertChangeCommit(dir, c, parent string) {
	k.t.Helper()
	if p := k.git(dir, "rev-parse", c+"^"); p != parent {
		k.t.Fatalf("commit %s has parent %s, want %s", c, p, parent)
	}
	if files := k.git(dir, "diff-tree", "--no-commit-id", "--name-only", "-r", c); files != "calc.go\nlib/help.go\nold.go" {
		k.t.Fatalf("commit %s changes:\n%s\nwant exactly the change's files", c, files)
	}
	if msg := k.git(dir, "log", "-1", "--format=%B", c); !strings.Contains(msg, "Orch-Task: t1") {
		k.t.Fatalf("commit %s lacks its trailer:\n%s", c, msg)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "calc.go"))
	help, _ := os.ReadFile(filepath.Join(dir, "lib", "help.go"))
	if string(data) != killCalcFix || string(help) != killHelp {
		k.t.Fatalf("the work tree does not hold the change: calc.go %q, lib/help.go %q", data, help)
	}
	if _, err := os.Lstat(filepath.Join(dir, "old.go")); !os.IsNotExist(err) {
		k.t.Fatalf("old.go still exists (%v)", err)
	}
}

// killStage names how far a killed run got, from what its task's
// transcript gained beyond the template's first skip bytes.
func killStage(dir string, skip int) string {
	data, _ := os.ReadFile(filepath.Join(dir, ".orch", "tasks", "t1", "transcript.jsonl"))
	s := ""
	if len(data) > skip {
		s = string(data[skip:])
	}
	has := func(kind string) bool { return strings.Contains(s, `"kind":"`+kind+`"`) }
	switch {
	case !has("phase_started"):
		return "before the run started"
	case has("phase_finished"):
		return "after the run finished"
	case has("git_done"):
		return "after the git effect"
	case has("git_intent"):
		return "during the git effect"
	default:
		return "before the git effect"
	}
}

func countLines(s string) int {
	if s == "" {
		return 0
	}
	return strings.Count(s, "\n") + 1
}

func TestKillAcceptAndRevert(t *testing.T) {
	if testing.Short() {
		t.Skip("builds orch and kills it many times")
	}
	t.Parallel()
	k := &killRig{t: t, bin: phasetest.BuildOrch(t), env: phasetest.OrchEnv(t.TempDir())}
	tmpl, base := k.killTemplate()
	rounds := phasetest.KillRounds(100, 25)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	accept := []string{"accept", "--verdict", "accepted", "--reason", "tests pass"}

	// The revert template: the change accepted, the decision changed to
	// revert, the task in revert.
	rtmpl := k.copyTree(tmpl)
	k.orch(rtmpl, accept...)
	change := k.git(rtmpl, "rev-parse", "HEAD")
	k.orch(rtmpl, "accept", "--verdict", "revert", "--reason", "breaks the API")
	k.orch(rtmpl, "next")
	revert := []string{"revert", "--reason", "breaks the API"}

	// How long an uninterrupted run takes (the shortest of three): kills
	// are spread over it.
	span := map[string]time.Duration{}
	for range 3 {
		for op, args := range map[string][]string{"accept": accept, "revert": revert} {
			src := tmpl
			if op == "revert" {
				src = rtmpl
			}
			d := k.timed(k.copyTree(src), args...)
			if span[op] == 0 || d < span[op] {
				span[op] = d
			}
		}
	}

	type tally struct {
		tried, landed, committed int
		stages                   map[string]int
	}
	results := map[string]*tally{"accept": {stages: map[string]int{}}, "revert": {stages: map[string]int{}}}
	var mu sync.Mutex
	t.Run("kills", func(t *testing.T) {
		for _, op := range []string{"accept", "revert"} {
			src, args := tmpl, accept
			if op == "revert" {
				src, args = rtmpl, revert
			}
			logLen := gittest.Size(t, filepath.Join(src, ".orch", "tasks", "t1", "transcript.jsonl"))
			for i := range rounds {
				t.Run(fmt.Sprintf("%s-%d", op, i), func(t *testing.T) {
					t.Parallel()
					// A fifth of the kills come at a random moment of the
					// run; the others at a random moment after the run
					// started, right after its git_intent (in the
					// repository change itself), or after its git_done
					// (before the record is written).
					mu.Lock()
					plan := killPlan{logLen: logLen}
					switch i % 5 {
					case 0:
						plan.delay = time.Duration(rng.Int64N(int64(span[op]) + 1))
					case 1:
						plan.after, plan.delay = "phase_started", time.Duration(rng.Int64N(int64(span[op])/2+1))
					case 2:
						plan.after, plan.delay = "git_intent", time.Duration(rng.Int64N(int64(20*time.Millisecond)))
					case 3:
						plan.after, plan.delay = "git_intent", time.Duration(rng.Int64N(int64(4*time.Millisecond)))
					case 4:
						plan.after, plan.delay = "git_done", time.Duration(rng.Int64N(int64(10*time.Millisecond)))
					}
					mu.Unlock()
					k := &killRig{t: t, bin: k.bin, env: k.env}
					dir := k.copyTree(src)
					landed := k.killAt(dir, plan, args...)
					stage := "finished before the kill"
					if landed {
						stage = killStage(dir, logLen)
					}
					committed := k.afterKill(op, stage, dir, base, change, args, fmt.Sprintf("%s kill %d, %v (%s)", op, i, plan, stage))
					mu.Lock()
					defer mu.Unlock()
					tl := results[op]
					tl.tried++
					if landed {
						tl.landed++
					}
					if committed {
						tl.committed++
					}
					tl.stages[stage]++
				})
			}
		}
	})
	for _, op := range []string{"accept", "revert"} {
		tl := results[op]
		var stages []string
		for s, n := range tl.stages {
			stages = append(stages, fmt.Sprintf("%s: %d", s, n))
		}
		slices.Sort(stages)
		t.Logf("orch %s (uninterrupted %v): %d kills tried, %d landed while it ran, %d left the commit made after the next command; %s",
			op, span[op].Round(time.Millisecond), tl.tried, tl.landed, tl.committed, strings.Join(stages, ", "))
		if tl.tried >= 20 && tl.landed*2 < tl.tried {
			t.Errorf("orch %s: only %d of %d kills landed while it ran", op, tl.landed, tl.tried)
		}
		if mid := tl.stages["during the git effect"]; tl.tried >= 20 && mid*5 < tl.tried {
			t.Errorf("orch %s: only %d of %d kills landed during the repository change", op, mid, tl.tried)
		}
	}
}

// afterKill runs the next orch command and the re-run after a kill and
// checks everything; it reports whether the next command found the commit
// made.
func (k *killRig) afterKill(op, stage, dir, base, change string, args []string, when string) (committed bool) {
	t := k.t
	// The next orch command, any: status. A run killed while it worked
	// is shown as interrupted, by status and verify, with the command
	// that resumes it.
	status := k.orch(dir, "status")
	if strings.Contains(stage, "git effect") {
		// (Killed between the phase_started append and the state.json
		// rename, status first names the roll-forward.)
		if !strings.Contains(status, "interrupted") || !strings.Contains(status, "orch "+op) && !strings.Contains(status, "orch next --from "+op) {
			t.Fatalf("%s: orch status does not show the interrupted run and how to resume it:\n%s", when, status)
		}
		if v := k.orch(dir, "verify"); !strings.Contains(v, "interrupted: the last "+op+" run") || !strings.Contains(v, "run orch "+op) {
			t.Fatalf("%s: orch verify does not show the interrupted run:\n%s", when, v)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".orch", orchestrator.PendingDir, "t1")); err == nil {
		t.Fatalf("%s: the git effect is still pending after orch status", when)
	}
	k.assertUserWork(dir, when+", after orch status")
	head := k.git(dir, "rev-parse", "HEAD")
	if op == "accept" {
		if head == base {
			if data, _ := os.ReadFile(filepath.Join(dir, "calc.go")); string(data) != killCalcBase {
				t.Fatalf("%s: HEAD is the base but calc.go changed: %q", when, data)
			}
		} else {
			k.assertChangeCommit(dir, head, base)
			committed = true
		}
	} else if head != change {
		if p := k.git(dir, "rev-parse", head+"^"); p != change {
			t.Fatalf("%s: HEAD %s is not a revert on %s", when, head, change)
		}
		committed = true
	}

	// Re-running the command finishes the job exactly once.
	code, out := k.run(dir, k.bin, args...)
	if code != 0 && !(op == "revert" && code == 3 && strings.Contains(out, "done")) {
		t.Fatalf("%s: re-run: exit %d\n%s", when, code, out)
	}
	k.assertUserWork(dir, when+", after the re-run")
	commits := k.git(dir, "log", "--format=%H", base+"..HEAD")
	head = k.git(dir, "rev-parse", "HEAD")
	if op == "accept" {
		if countLines(commits) != 1 {
			t.Fatalf("%s: %d commits on the base, want exactly one:\n%s", when, countLines(commits), commits)
		}
		k.assertChangeCommit(dir, head, base)
		var d struct{ Commit, Verdict string }
		readJSONT(t, filepath.Join(dir, ".orch", "tasks", "t1", "accept", "decision.json"), &d)
		if d.Commit != head || d.Verdict != "accepted" {
			t.Fatalf("%s: decision.json names %q (%s), HEAD is %s", when, d.Commit, d.Verdict, head)
		}
	} else {
		if countLines(commits) != 2 || k.git(dir, "rev-parse", "HEAD^") != change {
			t.Fatalf("%s: want the change and exactly one revert on the base:\n%s", when, commits)
		}
		if msg := k.git(dir, "log", "-1", "--format=%B"); !strings.Contains(msg, "Orch-Revert: "+change) || !strings.Contains(msg, "breaks the API") {
			t.Fatalf("%s: the revert commit lacks its trailers or reason:\n%s", when, msg)
		}
		if files := k.git(dir, "diff", "--name-only", base, "HEAD", "--", ".", ":!.orch"); files != "" {
			t.Fatalf("%s: after the revert the tree differs from the base in %s", when, files)
		}
		var r struct {
			Status         string `json:"status"`
			RevertedCommit string `json:"reverted_commit"`
			RevertCommit   string `json:"revert_commit"`
		}
		readJSONT(t, filepath.Join(dir, ".orch", "tasks", "t1", "revert", "record.json"), &r)
		if r.Status != "reverted" || r.RevertCommit != head || r.RevertedCommit != change {
			t.Fatalf("%s: revert/record.json %+v, want reverted %s by %s", when, r, change, head)
		}
	}
	k.orch(dir, "verify")
	_ = os.RemoveAll(dir)
	return committed
}

func readJSONT(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
