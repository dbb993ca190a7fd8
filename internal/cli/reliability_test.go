package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/proctest"
)

// The test binary doubles as orch: with reexecEnv set, TestMain runs
// reexecMain instead of the tests. ORCH_TEST_CRASH names a crash point at
// which the process kills itself with SIGKILL.
const reexecEnv = "ORCH_TEST_REEXEC"

func reexecMain() int {
	dir, _ := os.Getwd()
	env := Env{Args: os.Args[1:], Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Dir: dir, Getenv: os.Getenv, Now: time.Now}
	die := func() { _ = syscall.Kill(os.Getpid(), syscall.SIGKILL) }
	switch os.Getenv("ORCH_TEST_CRASH") {
	case "after-append":
		env.Hooks.AfterAppend = die
	case "after-moves":
		env.Hooks.AfterMoves = die
	}
	return Run(context.Background(), env)
}

// orchCmd prepares the test binary as an orch process in dir.
func orchCmd(dir string, extraEnv []string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = dir
	// A race-instrumented binary sleeps a second at exit unless told not
	// to; the test starts hundreds of them.
	cmd.Env = append(append(os.Environ(), reexecEnv+"=1", "GORACE=atexit_sleep_ms=0"), extraEnv...)
	return cmd
}

// runOrch runs orch to completion and returns its exit code and output.
func runOrch(t *testing.T, dir string, extraEnv []string, args ...string) (int, string) {
	t.Helper()
	return proctest.Run(t, orchCmd(dir, extraEnv, args...))
}

// newProject makes a git repository with orch initialised and one task
// whose plan is ready for review.
func newProject(t *testing.T) (dir, taskDir string) {
	t.Helper()
	dir = t.TempDir()
	gittest.Git(t, dir, "init", "-q")
	if code, out := runOrch(t, dir, nil, "init"); code != 0 {
		t.Fatalf("orch init: %d %s", code, out)
	}
	if code, out := runOrch(t, dir, nil, "new", "--id", "t1", "add a feature"); code != 0 {
		t.Fatalf("orch new: %d %s", code, out)
	}
	taskDir = filepath.Join(dir, ".orch", "tasks", "t1")
	revisePlan(t, taskDir, 0)
	return dir, taskDir
}

// revisePlan writes round n of the task's plan: a plan that a regression
// sent back must change before it goes to review again.
func revisePlan(t *testing.T, taskDir string, n int) {
	t.Helper()
	writeFile(t, filepath.Join(taskDir, "planning", "planning.ai.json"),
		fmt.Sprintf(`{"id":"t1","title":"Add a feature, round %d","brief":"add a feature","file_plan":[{"path":"a.go","intent":"update"}]}`, n))
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	gittest.Write(t, filepath.Dir(path), filepath.Base(path), content)
}

func readPhase(t *testing.T, taskDir string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(taskDir, "state.json"))
	if err != nil {
		t.Fatalf("read state.json: %v", err)
	}
	var st struct {
		Phase    string `json:"phase"`
		Revision int64  `json:"revision"`
	}
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatalf("state.json does not parse: %v\n%s", err, data)
	}
	if st.Phase == "" || st.Revision < 1 {
		t.Fatalf("state.json is incomplete: %s", data)
	}
	return st.Phase
}

func countKind(t *testing.T, taskDir, kind string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(taskDir, "transcript.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(data), `"kind":"`+kind+`"`)
}

// TestConcurrentNext: 20 processes race `orch next --from planning` on one
// task. Exactly one moves it; the others exit 3 (the task already moved) or
// 5 (busy); the transcript holds one transition and verifies.
func TestConcurrentNext(t *testing.T) {
	dir, taskDir := newProject(t)
	moved, codes := proctest.Race(t, 20, func() (int, string) {
		return runOrch(t, dir, nil, "next", "--from", "planning", "--wait", "20s")
	}, nil)
	if moved != 1 {
		t.Errorf("%d processes moved the task, want exactly 1; exit codes %v", moved, codes)
	}
	if got := readPhase(t, taskDir); got != "plan_review" {
		t.Errorf("phase = %s, want plan_review", got)
	}
	if got := countKind(t, taskDir, "transition"); got != 1 {
		t.Errorf("transcript holds %d transition events, want 1", got)
	}
	if code, out := runOrch(t, dir, nil, "verify"); code != 0 {
		t.Errorf("verify after the race: exit %d\n%s", code, out)
	}
}

// TestCrashRecovery kills `orch next` at random points — at the crash
// hooks between the log append, the archive moves and the state write, and
// by an outside SIGKILL after a random delay — and checks after every kill
// that state.json parses, and that after the next command the transcript
// verifies (state and log agree).
func TestCrashRecovery(t *testing.T) {
	// 200 kills, or as many as two minutes allow but never fewer than 40:
	// under -race on a loaded machine each iteration's three processes
	// can take a second, and the package's other tests share its timeout.
	iterations, least := 200, 40
	if testing.Short() {
		iterations = least
	}
	budget := time.Now().Add(2 * time.Minute)
	dir, taskDir := newProject(t)
	review := filepath.Join(taskDir, "review", "plan-review.json")
	rng := rand.New(rand.NewPCG(1, 2))
	kills := map[string]int{}
	for i := range iterations {
		if i >= least && time.Now().After(budget) {
			t.Logf("stopped after %d iterations: the two minutes are spent", i)
			break
		}
		// In planning the plan is ready (revised since the review sent it
		// back); in plan_review the review blocks, which sends the task
		// back to planning and archives the review.
		if _, err := os.Stat(review); err != nil {
			writeFile(t, review, `{"ok":false,"blocked":true,"reviewers":[{"id":"risk","ok":false,"severity":"blocking"}]}`)
		}
		revisePlan(t, taskDir, 2*i+1)
		mode := []string{"after-append", "after-moves", "outside"}[rng.IntN(3)]
		var code int
		if mode == "outside" {
			cmd := orchCmd(dir, nil, "next")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Duration(rng.IntN(15000)) * time.Microsecond)
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			code = cmd.ProcessState.ExitCode()
		} else {
			code, _ = runOrch(t, dir, []string{"ORCH_TEST_CRASH=" + mode}, "next")
		}
		if code == -1 || code < 0 {
			kills[mode]++
		}
		readPhase(t, taskDir) // state.json always parses
		mid := logAhead(t, taskDir)
		if mid {
			kills[mode+" mid-commit"]++
		}
		if mode != "outside" && (code != -int(syscall.SIGKILL) || !mid) {
			// A crash hook kills the command between its log append
			// and its state write: the log must be one state ahead.
			t.Fatalf("iteration %d (%s): exit %d, transcript ahead of state.json: %v; the kill did not land mid-command", i, mode, code, mid)
		}
		if _, err := os.Stat(review); err != nil {
			writeFile(t, review, `{"ok":false,"blocked":true,"reviewers":[{"id":"risk","ok":false,"severity":"blocking"}]}`)
		}
		revisePlan(t, taskDir, 2*i+2)
		if code, out := runOrch(t, dir, nil, "next"); code != 0 {
			t.Fatalf("iteration %d (%s): next after the crash exited %d\n%s", i, mode, code, out)
		}
		if code, out := runOrch(t, dir, nil, "verify"); code != 0 {
			t.Fatalf("iteration %d (%s): verify after the next command exited %d\n%s", i, mode, code, out)
		}
	}
	t.Logf("kills by mode: %v", kills)
	if kills["after-append"] == 0 || kills["after-moves"] == 0 {
		t.Errorf("the crash hooks never fired: %v", kills)
	}
	if kills["outside"] == 0 {
		t.Errorf("no outside SIGKILL landed while orch next ran: %v", kills)
	}
}

// logAhead reports whether the transcript's last state-carrying event is
// one revision ahead of state.json: a commit interrupted between its log
// append and its state write.
func logAhead(t *testing.T, taskDir string) bool {
	t.Helper()
	var st struct {
		Revision int64 `json:"revision"`
	}
	data, err := os.ReadFile(filepath.Join(taskDir, "state.json"))
	if err != nil || json.Unmarshal(data, &st) != nil {
		t.Fatalf("state.json: %v\n%s", err, data)
	}
	log, err := os.ReadFile(filepath.Join(taskDir, "transcript.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(log), "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		var ev struct {
			State *struct {
				Revision int64 `json:"revision"`
			} `json:"state"`
		}
		if json.Unmarshal([]byte(lines[i]), &ev) != nil || ev.State == nil {
			continue
		}
		return ev.State.Revision == st.Revision+1
	}
	return false
}
