//go:build unix

package landing

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/phasetest"
)

// TestKillDuringRegressionCheck kills the real `orch accept` (its process
// group, as a terminal's ^\ or kill -9 -PGID does) after it committed the
// change on a HEAD that moved since the base, while the suites run again
// on the commit. On that HEAD the change breaks the suite. The next
// command leaves the commit in place; re-running accept must still run the
// suites on it and record the regression, so that `orch next` routes to
// revert (docs/git-effects.md, "Idempotence"). Before, the re-run recorded
// "already committed" with no check and the task went on to done.
func TestKillDuringRegressionCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("builds orch and kills it")
	}
	t.Parallel()
	k := &killRig{t: t, bin: phasetest.BuildOrch(t), env: phasetest.OrchEnv(t.TempDir())}
	dir, base := k.killTemplate()
	gate := t.TempDir()
	// The suite passes on the base; where broken.flag exists it says it
	// started, waits for the gate and fails.
	suite := "if [ -e broken.flag ]; then : > " + gate + "/started; while [ ! -e " + gate + "/go ]; do sleep 0.01; done; exit 1; fi; grep -q 'a + b' calc.go"
	gittest.Write(t, dir, ".orch/config.toml", "[test]\nsandbox = \"none\"\n[[test.suites]]\nname = \"adds\"\ncommand = \""+strings.ReplaceAll(suite, `"`, `\"`)+"\"\n")
	t.Cleanup(func() { _ = os.WriteFile(filepath.Join(gate, "go"), nil, 0o644) })
	// Someone moves HEAD: a commit of broken.flag alone (the user's
	// staged work stays staged).
	gittest.Write(t, dir, "broken.flag", "x\n")
	k.git(dir, "add", "broken.flag")
	k.git(dir, "commit", "-qm", "a flag that breaks the suite", "--", "broken.flag")
	moved := k.git(dir, "rev-parse", "HEAD")

	started := func() bool {
		_, err := os.Stat(filepath.Join(gate, "started"))
		return err == nil
	}
	cmd, done := k.startUntil(dir, "its regression check ran", started, "accept", "--verdict", "accepted", "--reason", "tests pass")
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if err := <-done; err == nil {
		t.Fatal("orch accept was not killed")
	}
	// The suite, in a process group of its own, is let go; it fails.
	if err := os.WriteFile(filepath.Join(gate, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}

	k.orch(dir, "status")
	k.assertUserWork(dir, "after the kill")
	change := k.git(dir, "rev-parse", "HEAD")
	if p := k.git(dir, "rev-parse", change+"^"); p != moved {
		t.Fatalf("HEAD %s is not the change on the moved HEAD %s (parent %s)", change, moved, p)
	}
	if data, err := os.ReadFile(filepath.Join(dir, ".orch", "tasks", "t1", "accept", "decision.json")); err == nil {
		t.Fatalf("the killed run recorded a decision:\n%s", data)
	}

	res := k.orch(dir, "accept", "--verdict", "accepted", "--reason", "tests pass")
	if got := k.git(dir, "rev-parse", "HEAD"); got != change {
		t.Fatalf("the re-run moved HEAD to %s; want the change %s kept", got, change)
	}
	var d struct {
		Commit     string   `json:"commit"`
		Base       string   `json:"base"`
		Regression bool     `json:"regression"`
		Notes      []string `json:"notes"`
	}
	readJSONT(t, filepath.Join(dir, ".orch", "tasks", "t1", "accept", "decision.json"), &d)
	if d.Commit != change || d.Base != base || !d.Regression || !strings.Contains(strings.Join(d.Notes, "\n"), "FAILED: regression") {
		t.Fatalf("decision after the re-run: %+v; want a regression of %s on base %s\n%s", d, change, base, res)
	}
	if next := k.orch(dir, "next"); !strings.Contains(next, "accept → revert") {
		t.Fatalf("orch next after the regression:\n%s", next)
	}
	k.assertUserWork(dir, "after the re-run")
	k.orch(dir, "verify")
}
