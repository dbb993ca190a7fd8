//go:build unix

package landing

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/phasetest"
)

// gatedGit is a git that, when ORCH_TEST_GATE names a folder, holds every
// `git update-ref` until the file go appears there: it says started when
// it is called, and done when the real git has moved the ref.
const gatedGit = `#!/bin/sh
if [ -n "$ORCH_TEST_GATE" ]; then
	case " $* " in
	*" update-ref "*)
		: > "$ORCH_TEST_GATE/started"
		while [ ! -e "$ORCH_TEST_GATE/go" ]; do sleep 0.01; done
		"$ORCH_TEST_REAL_GIT" "$@"
		rc=$?
		: > "$ORCH_TEST_GATE/done"
		exit $rc
		;;
	esac
fi
exec "$ORCH_TEST_REAL_GIT" "$@"
`

// TestKillWhileGitRuns kills `orch accept` (the orch process alone, as
// kill -9 or the OOM killer does) while the git command of its branch
// move still runs: git runs in a process group of its own, so it outlives
// orch and moves the branch later. The next orch command must not settle
// the effect while that git runs (it would record "aborted, nothing
// changed" and the branch would move afterwards, leaving the index and
// files on the old commit: the change staged in reverse); once git is
// gone it finishes the effect (docs/git-effects.md, "Recovery").
func TestKillWhileGitRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds orch and kills it")
	}
	t.Parallel()
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	k := &killRig{t: t, bin: phasetest.BuildOrch(t), env: phasetest.OrchEnv(t.TempDir())}
	dir, base := k.killTemplate()
	logPath := filepath.Join(dir, ".orch", "tasks", "t1", "transcript.jsonl")
	logLen := gittest.Size(t, logPath)

	bin := t.TempDir()
	gittest.Write(t, bin, "git", gatedGit)
	if err := os.Chmod(filepath.Join(bin, "git"), 0o755); err != nil {
		t.Fatal(err)
	}
	gate := t.TempDir()
	for i, kv := range k.env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			k.env[i] = "PATH=" + bin + string(os.PathListSeparator) + v
		}
	}
	k.env = append(k.env, "ORCH_TEST_GATE="+gate, "ORCH_TEST_REAL_GIT="+realGit)
	exists := func(name string) bool {
		_, err := os.Stat(filepath.Join(gate, name))
		return err == nil
	}
	// However the test ends, the held git is let go and waited for.
	t.Cleanup(func() {
		_ = os.WriteFile(filepath.Join(gate, "go"), nil, 0o644)
		for deadline := time.Now().Add(time.Minute); exists("started") && !exists("done") && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
	})

	// orch accept, killed while its update-ref is held at the gate.
	cmd, done := k.startUntil(dir, "it moved the branch", func() bool { return exists("started") },
		"accept", "--verdict", "accepted", "--reason", "tests pass")
	if data, _ := os.ReadFile(logPath); !bytes.Contains(data[logLen:], []byte(`"kind":"git_intent"`)) {
		t.Fatalf("the held update-ref is not the git effect's: no git_intent yet")
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	if err := <-done; err == nil {
		t.Fatal("orch accept was not killed")
	}

	// The next command, while the orphaned git still holds the branch
	// move: the effect is left to settle later, nothing is decided.
	status := k.orch(dir, "status")
	if data, _ := os.ReadFile(logPath); bytes.Contains(data[logLen:], []byte(`"kind":"git_done"`)) {
		t.Fatalf("orch status settled the git effect while its git still ran:\n%s\n%s", status, data[logLen:])
	}
	if _, err := os.Stat(filepath.Join(dir, ".orch", orchestrator.PendingDir, "t1")); err != nil {
		t.Fatalf("the pending marker is gone while the effect's git still runs: %v", err)
	}
	if head := k.git(dir, "rev-parse", "HEAD"); head != base {
		t.Fatalf("HEAD moved before the gate opened: %s", head)
	}

	// The orphaned git moves the branch and exits; the next command
	// finishes the effect: the commit, its files, the user's work kept.
	if err := os.WriteFile(filepath.Join(gate, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for !exists("done") {
		time.Sleep(time.Millisecond)
	}
	k.orch(dir, "status")
	if _, err := os.Stat(filepath.Join(dir, ".orch", orchestrator.PendingDir, "t1")); err == nil {
		t.Fatal("the git effect is still pending after the orphaned git exited")
	}
	k.assertUserWork(dir, "after the orphaned git moved the branch")
	head := k.git(dir, "rev-parse", "HEAD")
	k.assertChangeCommit(dir, head, base)

	// Re-running accept records that commit; the transcript verifies.
	k.orch(dir, "accept", "--verdict", "accepted", "--reason", "tests pass")
	if got := k.git(dir, "rev-parse", "HEAD"); got != head {
		t.Fatalf("the re-run committed again: HEAD %s, want %s", got, head)
	}
	k.assertUserWork(dir, "after the re-run")
	k.orch(dir, "verify")
}

// startUntil starts orch with args in dir, in a process group of its own,
// and returns once reached reports true (checked every millisecond),
// with the running command and where its Wait's result arrives. It fails
// the test, naming what, when orch ends before.
func (k *killRig) startUntil(dir, what string, reached func() bool, args ...string) (*exec.Cmd, <-chan error) {
	k.t.Helper()
	cmd := exec.Command(k.bin, args...)
	cmd.Dir, cmd.Env = dir, k.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		k.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for !reached() {
		select {
		case err := <-done:
			k.t.Fatalf("orch %s ended (%v) before %s:\n%s", args[0], err, what, out.String())
		case <-time.After(time.Millisecond):
		}
	}
	return cmd, done
}
