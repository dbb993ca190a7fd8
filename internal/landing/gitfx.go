package landing

import (
	"context"

	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/gitx"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/work"
)

// openRepo opens the user's repository for accept and revert; tests wrap
// it to inject faults into the git commands.
var openRepo = gitx.Open

// Git effect operations.
const (
	OpAccept = "accept"
	OpRevert = "revert"
)

// Outcomes of a git effect.
const (
	OutcomeCommitted = event.GitCommitted
	OutcomeAborted   = event.GitAborted
)

// Engine is what accept and revert are given of the engine (an
// *orchestrator.Orchestrator): its journal of git effects, which carries
// out an effect crash-safely under the task's lock (docs/git-effects.md:
// the branch moves by compare-and-swap between a git_intent and a
// git_done event, and a process killed in between is settled by the next
// orch command), and its account of what changed since a revision a
// person saw.
type Engine interface {
	// GitEffect carries out in for task id.
	GitEffect(ctx context.Context, id string, repo *gitx.Repo, in event.GitIntent) (event.GitDone, error)
	// SettleGit settles task id's interrupted effect, if any.
	SettleGit(ctx context.Context, id string) error
	// Stale is the refusal of an action on task id that named revision
	// seen (the task is at now) or evidence whose bytes differ (hashes).
	Stale(id string, seen, now int64, hashes []string) error
	// Input is phase p's input on task id as committed.
	Input(ctx context.Context, id string, p lifecycle.Phase) (work.Input, error)
}

// taskCommits finds, among the commits reachable from HEAD, the task's
// change (Orch-Task without Orch-Revert) and the revert commits of the
// task (Orch-Task with Orch-Revert), newest first. Only trailer blocks
// orch writes count (orchTrailers).
func taskCommits(ctx context.Context, repo *gitx.Repo, id string) (change string, reverts []gitx.TrailerCommit, err error) {
	found, err := repo.FindCommitsWithTrailer(ctx, TrailerTask, id, 1000)
	if err != nil {
		return "", nil, err
	}
	for _, c := range found {
		if !orchTrailers(c) {
			continue
		}
		if c.Trailer(TrailerRevert) != "" {
			reverts = append(reverts, c)
		} else if change == "" {
			change = c.SHA
		}
	}
	return change, reverts, nil
}
