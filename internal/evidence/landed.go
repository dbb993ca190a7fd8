package evidence

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/orchdev/orch/internal/gitx"
	"github.com/orchdev/orch/internal/lifecycle"
)

// Trailers orch writes on the commits it makes (`orch accept`, `orch
// revert`), by which it finds them again.
const (
	// TrailerTask names the task on every commit orch makes for it.
	TrailerTask = "Orch-Task"
	// TrailerPlan is the sha256 of the plan the change implements.
	TrailerPlan = "Orch-Plan"
	// TrailerDiff is the sha256 of code/diff.patch, the very bytes the
	// commit applied: the change every gate judged.
	TrailerDiff = "Orch-Diff"
	// TrailerRevert names, on a revert commit, the commit it undoes.
	TrailerRevert = "Orch-Revert"
)

// FindLanded looks in the repository at repoDir, from HEAD, for orch's
// commit of task id's change: the newest commit with the trailer
// Orch-Task naming the task that is not itself a revert (Orch-Revert) and
// that no revert commit of the task undoes. It returns the commit with its
// Orch-Diff trailer, an empty SHA when there is none, or Err when the
// repository could not be searched. It changes nothing.
func FindLanded(ctx context.Context, repoDir, id string) *lifecycle.Landed {
	repo, err := gitx.Open(ctx, repoDir)
	if err != nil {
		return &lifecycle.Landed{Err: fmt.Errorf("open the repository: %w", err)}
	}
	found, err := repo.FindCommitsWithTrailer(ctx, TrailerTask, id, 0)
	if err != nil {
		return &lifecycle.Landed{Err: err}
	}
	return Landed(found)
}

// Landed picks orch's commit of the change out of the commits carrying
// the task's Orch-Task trailer, newest first (FindLanded). Only trailer
// blocks orch writes count (OrchTrailers).
func Landed(found []gitx.TrailerCommit) *lifecycle.Landed {
	found = slices.DeleteFunc(slices.Clone(found), func(c gitx.TrailerCommit) bool { return !OrchTrailers(c) })
	var reverted []string
	for _, c := range found {
		if r := c.Trailer(TrailerRevert); r != "" {
			reverted = append(reverted, r)
		}
	}
	for _, c := range found {
		if c.Trailer(TrailerRevert) != "" || slices.ContainsFunc(reverted, func(r string) bool { return r == c.SHA || (len(r) >= 7 && len(r) < len(c.SHA) && c.SHA[:len(r)] == r) }) {
			continue
		}
		return &lifecycle.Landed{SHA: c.SHA, DiffSHA256: c.Trailer(TrailerDiff)}
	}
	return &lifecycle.Landed{}
}

// OrchTrailers reports whether c's trailer block is one orch writes: one
// Orch-Task and either one Orch-Plan (with at most one Orch-Diff) or one
// Orch-Revert (a commit id). A message with a second Orch-Task, Orch-Plan
// or Orch-Diff line in its last paragraph is not orch's: commit messages
// carry text a model or a person wrote (docs/git-effects.md).
func OrchTrailers(c gitx.TrailerCommit) bool {
	count := func(key string) (n int, value string) {
		for k, vs := range c.Trailers {
			if strings.EqualFold(k, key) {
				n += len(vs)
				if len(vs) > 0 {
					value = vs[0]
				}
			}
		}
		return n, value
	}
	nTask, _ := count(TrailerTask)
	nPlan, _ := count(TrailerPlan)
	nDiff, _ := count(TrailerDiff)
	nRevert, revert := count(TrailerRevert)
	switch {
	case nTask != 1:
		return false
	case nPlan == 1 && nRevert == 0 && nDiff <= 1:
		return true
	case nRevert == 1 && nPlan == 0 && nDiff == 0:
		return len(revert) >= 40 && isLowerHex(revert)
	}
	return false
}

func isLowerHex(s string) bool {
	for _, c := range []byte(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return s != ""
}
