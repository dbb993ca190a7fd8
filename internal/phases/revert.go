package phases

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/gitx"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/orchestrator"
)

// Record is revert/record.json as orch writes it.
type Record struct {
	artifact.RevertRecord
	Notes []string `json:"notes,omitempty"`
}

// RevertResult is what `orch revert` reports.
type RevertResult struct {
	Phase  orchestrator.PhaseResult
	Record Record
	Done   *orchestrator.NextResult
}

// Revert undoes the task's commit with `git revert --no-edit` (never
// reset or force), records revert/record.json, and moves the task to done.
// On a conflict the revert is aborted, the repository is left as it was,
// and the record says partial with the conflicting files.
func Revert(ctx context.Context, o *orchestrator.Orchestrator, id, reason string) (RevertResult, error) {
	var res RevertResult
	reason = strings.TrimSpace(reason)
	if reason == "" {
		return res, &orchestrator.Error{Kind: orchestrator.ErrUsage, Msg: "orch: revert needs a non-blank reason: --reason \"why\""}
	}
	t, err := o.Project.Open(id)
	if err != nil {
		return res, err
	}
	if r := artifact.LoadRevertRecord(t.Dir); r.OK() && r.Value.Status == artifact.RevertReverted {
		return res, refuse("orch: task %s is already reverted (%s): `orch next` moves it to done", id, r.Value.RevertCommit)
	}
	pr, err := o.RunPhase(ctx, id, lifecycle.Revert, func(ctx context.Context, run *orchestrator.Run) (orchestrator.Outcome, error) {
		rec, err := revertWork(ctx, o, run, reason)
		res.Record = rec
		if err != nil {
			return orchestrator.Outcome{}, err
		}
		path, err := run.Stage(artifact.RevertRecordFile)
		if err != nil {
			return orchestrator.Outcome{}, err
		}
		if err := writeJSON(path, rec); err != nil {
			return orchestrator.Outcome{}, err
		}
		return orchestrator.Outcome{Status: rec.Status, Summary: map[string]any{"status": rec.Status, "reverted_commit": rec.RevertedCommit, "revert_commit": rec.RevertCommit}}, nil
	})
	res.Phase = pr
	if err != nil {
		return res, err
	}
	nr, err := o.Next(ctx, id, orchestrator.NextRequest{From: lifecycle.Revert})
	if err != nil {
		return res, err
	}
	res.Done = &nr
	return res, nil
}

func revertWork(ctx context.Context, o *orchestrator.Orchestrator, run *orchestrator.Run, reason string) (Record, error) {
	rec := Record{RevertRecord: artifact.RevertRecord{Reason: reason}}
	repo, err := gitx.Open(ctx, o.Project.Root)
	if err != nil {
		return rec, err
	}
	commit := ""
	if d := artifact.LoadDecision(run.Task.Dir); d.OK() {
		commit = d.Value.Commit
	}
	if commit == "" {
		if commit, err = repo.FindCommitWithTrailer(ctx, TrailerTask, run.Task.ID, 1000); err != nil {
			return rec, err
		}
	}
	if commit == "" {
		rec.Status = artifact.RevertNothingToRevert
		rec.Notes = append(rec.Notes, "the change was never applied: no commit is recorded and none carries "+TrailerTask+": "+run.Task.ID)
		return rec, nil
	}
	rec.RevertedCommit = commit
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
	sha, conflicts, err := repo.Revert(ctx, commit)
	switch {
	case err == nil:
		rec.Status, rec.RevertCommit = artifact.RevertReverted, sha
	case errors.Is(err, gitx.ErrRevertConflict):
		rec.Status, rec.Conflicts = artifact.RevertPartial, conflicts
		rec.Notes = append(rec.Notes, "the revert conflicts with later changes: it was aborted and the repository left as it was; revert by hand (git revert "+commit+") and resolve the conflicts")
	case errors.Is(err, gitx.ErrNothingToRevert):
		rec.Status = artifact.RevertNothingToRevert
		rec.Notes = append(rec.Notes, fmt.Sprintf("reverting %.12s would change nothing (already reverted?)", commit))
	default:
		return rec, &orchestrator.Error{Kind: orchestrator.ErrRefused, Err: err,
			Msg: fmt.Sprintf("orch: git refused to revert %.12s, nothing was changed: %v\ncommit, stash or unstage your changes, then run orch revert again", commit, err)}
	}
	return rec, nil
}
