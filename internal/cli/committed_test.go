package cli

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// loggedState returns the phase and revision of the transcript's last
// complete state-carrying line: what is committed.
func loggedState(t *testing.T, taskDir string) (string, int64) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(taskDir, "transcript.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
		data = data[:i] // a torn tail is not committed
	}
	lines := bytes.Split(data, []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		var ev struct {
			State *struct {
				Phase    string `json:"phase"`
				Revision int64  `json:"revision"`
			} `json:"state"`
		}
		if err := json.Unmarshal(lines[i], &ev); err != nil {
			t.Fatalf("transcript line %d: %v", i+1, err)
		}
		if ev.State != nil {
			return ev.State.Phase, ev.State.Revision
		}
	}
	t.Fatal("no state in the transcript")
	return "", 0
}

func stateRevision(t *testing.T, taskDir string) int64 {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(taskDir, "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Revision int64 `json:"revision"`
	}
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	return st.Revision
}

// TestKillReadersSeeCommitted kills `orch next` between its transcript
// append and its state.json rename — deterministically at the crash hook,
// and with an outside SIGKILL at random moments — and checks after every
// kill, before anything repairs it, that status, list and log report the
// state of the last durable event and that verify exits 0 (saying, when
// state.json is behind, that the commit will be rolled forward).
func TestKillReadersSeeCommitted(t *testing.T) {
	iterations := 30
	if os.Getenv("CI") != "" {
		iterations = 100
	}
	dir, taskDir := newProject(t)
	review := filepath.Join(taskDir, "review", "plan-review.json")
	blocking := `{"ok":false,"blocked":true,"reviewers":[{"id":"risk","ok":false,"severity":"blocking"}]}`
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 3))
	behind := map[string]int{}
	for i := range iterations {
		// planning → plan_review; the blocking review sends it back and
		// archives itself, so every iteration has an edge to take.
		if _, err := os.Stat(review); err != nil {
			writeFile(t, review, blocking)
		}
		revisePlan(t, taskDir, 2*i+1) // a plan sent back must change
		mode := []string{"after-append", "outside"}[i%2]
		if mode == "outside" {
			cmd := orchCmd(dir, nil, "next")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Duration(rng.IntN(15000)) * time.Microsecond) // a random moment, not a wait for anything
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		} else if code, out := runOrch(t, dir, []string{"ORCH_TEST_CRASH=" + mode}, "next"); code >= 0 {
			t.Fatalf("iteration %d: orch next was not killed at the crash hook: exit %d\n%s", i, code, out)
		}
		phase, rev := loggedState(t, taskDir)
		if stateRevision(t, taskDir) == rev-1 {
			behind[mode]++
		}

		code, out := runOrch(t, dir, nil, "status", "--json")
		var sv struct {
			Phase    string `json:"phase"`
			Revision int64  `json:"revision"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &sv) != nil || sv.Phase != phase || sv.Revision != rev {
			t.Fatalf("iteration %d (%s): status exited %d with %s; the log committed %s at revision %d", i, mode, code, out, phase, rev)
		}
		code, out = runOrch(t, dir, nil, "list", "--json")
		var ls struct {
			Tasks []struct {
				Phase    string `json:"phase"`
				Revision int64  `json:"revision"`
			} `json:"tasks"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &ls) != nil || len(ls.Tasks) != 1 || ls.Tasks[0].Phase != phase || ls.Tasks[0].Revision != rev {
			t.Fatalf("iteration %d (%s): list exited %d with %s; the log committed %s at revision %d", i, mode, code, out, phase, rev)
		}
		if code, out := runOrch(t, dir, nil, "log"); code != 0 {
			t.Fatalf("iteration %d (%s): log exited %d\n%s", i, mode, code, out)
		}
		if code, out := runOrch(t, dir, nil, "verify"); code != 0 {
			t.Fatalf("iteration %d (%s): verify exited %d after a kill\n%s", i, mode, code, out)
		}
		// The next command repairs and moves on.
		if _, err := os.Stat(review); err != nil {
			writeFile(t, review, blocking)
		}
		revisePlan(t, taskDir, 2*i+2)
		if code, out := runOrch(t, dir, nil, "next"); code != 0 {
			t.Fatalf("iteration %d (%s): next after the kill exited %d\n%s", i, mode, code, out)
		}
	}
	t.Logf("kills that left state.json one step behind, by mode: %v", behind)
	if behind["after-append"] == 0 {
		t.Errorf("the crash hook never left state.json behind: %v", behind)
	}
}
