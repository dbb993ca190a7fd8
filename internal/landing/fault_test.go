package landing

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/gitx"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/phasetest"
)

// TestGitEffectFaults fails each git command of `orch accept` and then of
// `orch revert` in turn (in process; the kill test does the same with
// SIGKILL). Whatever fails, after the next command's recovery the branch
// holds either no change or exactly the commit, the user's own staged and
// unstaged work is untouched, and a re-run finishes with exactly one
// commit that the record names.
func TestGitEffectFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("many repositories")
	}
	t.Parallel() // alongside the kill test; nothing else here swaps openRepo
	for _, op := range []string{OpAccept, OpRevert} {
		for step := 0; ; step++ {
			f := phasetest.New(t, lifecycle.Accept)
			f.Cfg.Test.Sandbox = "none"
			gittest.Write(t, f.Dir, "a.txt", "a, staged by the user\n")
			gittest.Git(t, f.Dir, "add", "a.txt")
			gittest.Write(t, f.Dir, "mine.txt", "untracked\n")
			acceptOpt := AcceptOptions{Verdict: artifact.VerdictAccepted, Reasons: []string{"ok"}, AllowIncomplete: true,
				Decider: artifact.Decider{Kind: "human", Name: "t"}}
			change := ""
			if op == OpRevert {
				if _, err := phasetest.Run(context.Background(), f.O, "t", &Acceptor{Options: acceptOpt, Engine: f.O}); err != nil {
					t.Fatal(err)
				}
				change = gittest.Git(t, f.Dir, "rev-parse", "HEAD")
				revOpt := acceptOpt
				revOpt.Verdict, revOpt.Reasons = artifact.VerdictRevert, []string{"undo"}
				if _, err := phasetest.Run(context.Background(), f.O, "t", &Acceptor{Options: revOpt, Engine: f.O}); err != nil {
					t.Fatal(err)
				}
				if _, err := f.O.Next(context.Background(), "t", orchestrator.NextRequest{To: lifecycle.Revert}); err != nil {
					t.Fatal(err)
				}
			}
			n := 0
			var hit string
			openRepo = func(ctx context.Context, dir string) (*gitx.Repo, error) {
				r, err := gitx.Open(ctx, dir)
				if r != nil {
					r.Fault = func(sub string, _ []string) error {
						n++
						if n == step+1 {
							hit = sub
							return fmt.Errorf("injected fault in git %s", sub)
						}
						return nil
					}
				}
				return r, err
			}
			run := func() error {
				if op == OpAccept {
					_, err := phasetest.Run(context.Background(), f.O, "t", &Acceptor{Options: acceptOpt, Engine: f.O})
					return err
				}
				_, err := revertTask(context.Background(), f.O, "t", "undo")
				return err
			}
			err := run()
			openRepo = gitx.Open
			if hit == "" {
				if err != nil {
					t.Fatalf("%s without a fault: %v", op, err)
				}
				if step < 10 {
					t.Fatalf("%s ran only %d git commands", op, n)
				}
				t.Logf("%s: each of its %d git commands failed once", op, step)
				break
			}
			when := fmt.Sprintf("%s, fault in git command %d (%s)", op, step+1, hit)
			if err == nil && hit != "" {
				// Some failures are absorbed (a lookup retried, a cleanup):
				// the outcome is checked all the same.
				t.Logf("%s: absorbed", when)
			}
			// The next command settles what the fault left.
			if _, err := orchestrator.RecoverGit(context.Background(), f.O.Project, f.O.Wait); err != nil {
				t.Fatalf("%s: recovery: %v", when, err)
			}
			if _, err := os.Stat(filepath.Join(f.O.Project.Dir, orchestrator.PendingDir, "t")); err == nil {
				t.Fatalf("%s: still pending after recovery", when)
			}
			assertFaultUserWork(t, f.Dir, when)
			head := gittest.Git(t, f.Dir, "rev-parse", "HEAD")
			switch {
			case op == OpAccept && head == f.Base:
				if _, err := os.Stat(filepath.Join(f.Dir, "notes", "readme.txt")); err == nil {
					t.Fatalf("%s: no commit, yet the change is in the work tree", when)
				}
			case op == OpRevert && head == change:
			default:
				parent := f.Base
				if op == OpRevert {
					parent = change
				}
				if p := gittest.Git(t, f.Dir, "rev-parse", head+"^"); p != parent {
					t.Fatalf("%s: HEAD %s is not one commit on %s", when, head, parent)
				}
			}
			// Re-running finishes exactly once.
			if err := run(); err != nil && !errors.Is(err, errAlreadyDone) && !strings.Contains(err.Error(), "already reverted") {
				t.Fatalf("%s: re-run: %v", when, err)
			}
			assertFaultUserWork(t, f.Dir, when+", after the re-run")
			head = gittest.Git(t, f.Dir, "rev-parse", "HEAD")
			if op == OpAccept {
				if got := gittest.Git(t, f.Dir, "rev-list", "--count", f.Base+"..HEAD"); got != "1" {
					t.Fatalf("%s: %s commits, want 1", when, got)
				}
				if files := gittest.Git(t, f.Dir, "diff-tree", "--no-commit-id", "--name-only", "-r", "HEAD"); files != "notes/readme.txt" {
					t.Fatalf("%s: the commit changes %q", when, files)
				}
				d := artifact.LoadDecision(f.Task.Dir)
				if !d.OK() || d.Value.Commit != head {
					t.Fatalf("%s: decision %+v names %q, HEAD %s", when, d.Value, d.Value.Commit, head)
				}
			} else {
				if got := gittest.Git(t, f.Dir, "rev-list", "--count", change+"..HEAD"); got != "1" {
					t.Fatalf("%s: %s commits on the change, want 1 revert", when, got)
				}
				r := artifact.LoadRevertRecord(f.Task.Dir)
				if !r.OK() || r.Value.Status != artifact.RevertReverted || r.Value.RevertCommit != head {
					t.Fatalf("%s: record %+v, HEAD %s", when, r.Value, head)
				}
			}
			if rep, err := f.Task.Verify(); err != nil || !rep.OK {
				t.Fatalf("%s: verify: %+v %v", when, rep, err)
			}
		}
	}
}

var errAlreadyDone = errors.New("already done")

func assertFaultUserWork(t *testing.T, dir, when string) {
	t.Helper()
	st := gittest.Git(t, dir, "status", "--porcelain=v1", "--untracked-files=all", "--", ".", ":!.orch")
	if st != "M  a.txt\n?? mine.txt" {
		t.Fatalf("%s: git status:\n%s", when, st)
	}
	if got := gittest.Git(t, dir, "show", ":a.txt"); got != "a, staged by the user" {
		t.Fatalf("%s: staged a.txt = %q", when, got)
	}
}

// revertTask runs the revert worker for task id and then moves the task
// on to done, as the registry's revert does (internal/worker).
func revertTask(ctx context.Context, o *orchestrator.Orchestrator, id, reason string) (RevertResult, error) {
	res, err := phasetest.Run(ctx, o, id, Reverter{Reason: reason, Engine: o})
	if err != nil {
		return res, err
	}
	_, err = o.Next(ctx, id, orchestrator.NextRequest{From: lifecycle.Revert})
	return res, err
}
