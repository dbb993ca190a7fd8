package landing

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/gitx"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/work"
)

// Record is revert/record.json as orch writes it.
type Record struct {
	artifact.RevertRecord
	Notes []string `json:"notes,omitempty"`
}

// RevertResult is what `orch revert` reports.
type RevertResult struct {
	Record Record
}

// Reverter is the revert phase's worker: it undoes the task's commit
// with a new commit (never reset or force), built like `git revert` but in
// a temporary index and landed with the engine's crash-safe git effect (Engine);
// it records revert/record.json (the engine then moves the task to done).
// On a conflict nothing changes and the record says partial with the
// conflicting files. A revert commit of the task already on the branch
// (Orch-Revert trailer) is reused, never repeated.
type Reverter struct {
	Reason string
	Engine Engine
}

// Phase returns lifecycle.Revert.
func (Reverter) Phase() lifecycle.Phase { return lifecycle.Revert }

// Check refuses a blank reason, settles an earlier run killed in its git
// effect, and refuses a task already reverted.
func (r Reverter) Check(ctx context.Context, in work.Input) error {
	if err := CheckRevertReason(r.Reason); err != nil {
		return err
	}
	if err := r.Engine.SettleGit(ctx, in.Task); err != nil {
		return err
	}
	if rec := artifact.LoadRevertRecord(in.Dir); rec.OK() && rec.Value.Status == artifact.RevertReverted {
		return exit.New(exit.ErrRefused, "task %s is already reverted (%s): `orch next` moves it to done", in.Task, rec.Value.RevertCommit)
	}
	return nil
}

// Work reverts the change.
func (r Reverter) Work(ctx context.Context, in work.Input) (work.Result[RevertResult], error) {
	var res work.Result[RevertResult]
	rec, err := r.revertWork(ctx, in, strings.TrimSpace(r.Reason))
	res.Value.Record = rec
	if err != nil {
		return res, err
	}
	if err := in.Out.WriteJSON(artifact.RevertRecordFile, rec); err != nil {
		return res, err
	}
	res.Output = work.Output{Status: lifecycle.Status(rec.Status), Summary: &event.PhaseSummary{Status: rec.Status, RevertedCommit: rec.RevertedCommit, RevertCommit: rec.RevertCommit}}
	return res, nil
}

func (r Reverter) revertWork(ctx context.Context, run work.Input, reason string) (Record, error) {
	rec := Record{RevertRecord: artifact.RevertRecord{Reason: reason}}
	repo, err := openRepo(ctx, run.Root)
	if err != nil {
		return rec, err
	}
	change, reverts, err := taskCommits(ctx, repo, run.Task)
	if err != nil {
		return rec, err
	}
	commit := ""
	if d := artifact.LoadDecision(run.Dir); d.OK() {
		commit = d.Value.Commit
	}
	if commit == "" {
		commit = change
	}
	if commit == "" {
		rec.Status = artifact.RevertNothingToRevert
		rec.Notes = append(rec.Notes, "the change was never applied: no commit is recorded and none carries "+TrailerTask+": "+run.Task)
		return rec, nil
	}
	if full, err := repo.ResolveCommit(ctx, commit); err == nil {
		commit = full
	}
	rec.RevertedCommit = commit
	// A revert commit of this task already on the branch (an earlier run,
	// perhaps killed before it wrote its record) is the revert.
	for _, r := range reverts {
		if rc, err := repo.ResolveCommit(ctx, r.Trailer(TrailerRevert)); err == nil && rc == commit {
			rec.Status, rec.RevertCommit = artifact.RevertReverted, r.SHA
			rec.Notes = append(rec.Notes, fmt.Sprintf("%.12s was already reverted by %.12s (%s: %s): not reverted again", commit, r.SHA, TrailerRevert, commit))
			return rec, nil
		}
	}
	head, err := repo.Head(ctx)
	if err != nil {
		return rec, err
	}
	if ok, err := repo.IsAncestor(ctx, commit, head); err != nil {
		return rec, err
	} else if !ok {
		rec.Status = artifact.RevertNothingToRevert
		rec.Notes = append(rec.Notes, fmt.Sprintf("commit %.12s is not on the current branch (HEAD %.12s): nothing reverted", commit, head))
		return rec, nil
	}
	if op, err := repo.InProgress(ctx); err != nil {
		return rec, err
	} else if op != "" {
		return rec, exit.New(exit.ErrRefused, "a %s is in progress in %s: finish or abort it, then run orch revert again; nothing was changed", op, repo.Dir)
	}
	ref, err := repo.HeadRef(ctx)
	if errors.Is(err, gitx.ErrDetached) {
		return rec, exit.New(exit.ErrRefused, "HEAD is detached: check out the branch holding %.12s, then run orch revert again; nothing was changed", commit)
	} else if err != nil {
		return rec, err
	}
	subject, err := repo.Subject(ctx, commit)
	if err != nil {
		return rec, err
	}
	built, err := repo.BuildRevert(ctx, head, commit, revertMessage(run.Task, subject, commit, reason))
	switch {
	case err == nil:
	case errors.Is(err, gitx.ErrRevertConflict):
		var rc *gitx.RevertConflictError
		errors.As(err, &rc)
		rec.Status, rec.Conflicts = artifact.RevertPartial, rc.Files
		rec.Notes = append(rec.Notes, "the revert conflicts with later changes: nothing was changed; revert by hand (git revert "+commit+") and resolve the conflicts")
		return rec, nil
	case errors.Is(err, gitx.ErrNothingToRevert):
		rec.Status = artifact.RevertNothingToRevert
		rec.Notes = append(rec.Notes, fmt.Sprintf("reverting %.12s would change nothing (already reverted by hand?)", commit))
		return rec, nil
	default:
		return rec, err
	}
	dirty, err := repo.DirtyPaths(ctx, built.Paths)
	if err != nil {
		return rec, err
	}
	if len(dirty) > 0 {
		return rec, exit.New(exit.ErrRefused, "uncommitted changes in file(s) the revert touches: %s: commit, stash or unstage them, then run orch revert again; nothing was changed", strings.Join(dirty, ", "))
	}
	done, err := r.Engine.GitEffect(ctx, run.Task, repo, event.GitIntent{
		Op: OpRevert, Run: run.Run, Ref: ref, Old: head, New: built.Commit, Paths: built.Paths, Reverts: commit,
	})
	if err != nil {
		return rec, fmt.Errorf("revert %.12s: %w", commit, err)
	}
	if done.Outcome != OutcomeCommitted {
		return rec, exit.New(exit.ErrRefused, "%s; nothing was reverted: run orch revert again", done.Note)
	}
	if len(done.Left) > 0 {
		rec.Notes = append(rec.Notes, "reverted; "+done.Note)
	}
	rec.Status, rec.RevertCommit = artifact.RevertReverted, built.Commit
	return rec, nil
}

// CheckRevertReason refuses a blank revert reason, as the revert worker
// does (the fleet's revert gate validates with it).
func CheckRevertReason(reason string) error {
	if strings.TrimSpace(reason) == "" {
		return exit.New(exit.ErrUsage, "revert needs a non-blank reason: --reason \"why\"")
	}
	return nil
}
