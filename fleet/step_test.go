package fleet

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/phasetest"
)

// TestStepRetry is a step that finds the task's ref elsewhere than its
// workflow left it: moved by an earlier attempt of the same activity (its
// worker pushed, then died before reporting) the step returns that commit
// and does nothing again; moved by anything else it is a conflict, not
// retried. Outside an activity the step's key is "local".
func TestStepRetry(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name     string
		pushedBy string // the Orch-Activity of a commit on top ("" for none)
		reused   bool
		conflict bool
	}{
		{name: "the ref is where the workflow left it"},
		{name: "an earlier attempt of this activity pushed", pushedBy: "local", reused: true},
		{name: "another activity pushed", pushedBy: "orch-task-t/run/17", conflict: true},
		{name: "a key that only starts like this one's", pushedBy: "local/17", conflict: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := phasetest.New(t, lifecycle.Codegen)
			remote := filepath.Join(t.TempDir(), "shared.git")
			gittest.Git(t, "", "init", "--quiet", "--bare", remote)
			gittest.Git(t, f.Dir, "remote", "add", "origin", remote)
			base, err := CommitFolder(ctx, f.Dir, "t", "", "submit t\n")
			if err != nil {
				t.Fatal(err)
			}
			gittest.Git(t, f.Dir, "push", "--quiet", "origin", base+":"+TaskRef("t"))
			head := base
			if c.pushedBy != "" {
				// The earlier attempt's work: a file of the folder
				// changed, committed with its trailers and pushed.
				gittest.Write(t, f.Task.Dir, "notes.txt", "from the attempt that died\n")
				head, err = CommitFolder(ctx, f.Dir, "t", base, stepMessage(Step{Kind: StepWork, Task: "t", Phase: lifecycle.Codegen}, c.pushedBy))
				if err != nil {
					t.Fatal(err)
				}
				gittest.Git(t, f.Dir, "push", "--quiet", "origin", head+":"+TaskRef("t"))
				if err := os.Remove(filepath.Join(f.Task.Dir, "notes.txt")); err != nil {
					t.Fatal(err)
				}
			}

			s := &Steps{Root: f.Dir, Remote: "origin", Identity: "w2"}
			res, err := s.Step(ctx, Step{Kind: StepObserve, Task: "t", Head: base})
			if c.conflict {
				var ae *temporal.ApplicationError
				if !errors.As(err, &ae) || ae.Type() != ErrConflict || !ae.NonRetryable() {
					t.Fatalf("step: %v, want a conflict that is not retried", err)
				}
				return
			}
			if c.pushedBy == "" {
				// The ref was where the workflow knew it: the step ran
				// there (an observation changes nothing: no commit).
				if err != nil || res.Reused || res.Commit != "" || res.Head != base {
					t.Fatalf("step: reused %v, commit %.12s, head %.12s, %v; want it run at %.12s", res.Reused, res.Commit, res.Head, err, base)
				}
				return
			}
			if err != nil {
				t.Fatalf("step: %v", err)
			}
			if !res.Reused || res.Commit != head || res.Head != head {
				t.Fatalf("step: reused %v, commit %.12s, head %.12s; want the earlier attempt's %.12s", res.Reused, res.Commit, res.Head, head)
			}
			if got := gittest.ReadFile(t, filepath.Join(f.Task.Dir, "notes.txt")); got != "from the attempt that died\n" {
				t.Fatalf("the folder is not the earlier attempt's: notes.txt %q", got)
			}
			if _, ok := res.Artifacts["notes.txt"]; !ok {
				t.Fatalf("the observation's artifacts miss the earlier attempt's file: %v", res.Artifacts)
			}
		})
	}
}
