package orchestrator

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/task"
)

// HistoryDir holds archived attempts: history/<n>-<phase>/.
const HistoryDir = "history"

// phaseArtifacts returns the task-relative files and folders each phase
// owns. planning/brief.md is the user's input and belongs to no phase.
func phaseArtifacts(taskDir string, p lifecycle.Phase) []string {
	switch p {
	case lifecycle.Planning:
		entries, _ := os.ReadDir(filepath.Join(taskDir, "planning"))
		var out []string
		for _, e := range entries {
			rel := path.Join("planning", e.Name())
			if rel != artifact.BriefFile {
				out = append(out, rel)
			}
		}
		return out
	case lifecycle.PlanReview:
		return matching(taskDir, "review", "plan-review")
	case lifecycle.Codegen:
		return []string{"code"}
	case lifecycle.Review:
		return matching(taskDir, "review", "code-review")
	case lifecycle.Test:
		return []string{"test"}
	case lifecycle.Accept:
		return matching(taskDir, "accept", "")
	case lifecycle.Revert:
		return []string{"revert"}
	}
	return nil
}

// matching lists dir/prefix* entries.
func matching(taskDir, dir, prefix string) []string {
	entries, _ := os.ReadDir(filepath.Join(taskDir, dir))
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			out = append(out, path.Join(dir, e.Name()))
		}
	}
	return out
}

// archiveMoves plans moving the artifacts of phases from `first` on into a
// new history folder named after `name`. keepPlan leaves planning's own
// files in place (a regression to planning revises the plan in place).
func archiveMoves(taskDir string, first lifecycle.Phase, keepPlan bool, name lifecycle.Phase) ([]task.Move, string, error) {
	var rels []string
	for _, p := range lifecycle.Phases() {
		if p.Index() < first.Index() || (p == lifecycle.Planning && keepPlan) {
			continue
		}
		for _, rel := range phaseArtifacts(taskDir, p) {
			if _, err := os.Lstat(filepath.Join(taskDir, filepath.FromSlash(rel))); err == nil {
				rels = append(rels, rel)
			}
		}
	}
	if len(rels) == 0 {
		return nil, "", nil
	}
	n, err := nextHistoryNumber(taskDir)
	if err != nil {
		return nil, "", err
	}
	dest := path.Join(HistoryDir, fmt.Sprintf("%d-%s", n, name))
	sort.Strings(rels)
	moves := make([]task.Move, len(rels))
	for i, rel := range rels {
		moves[i] = task.Move{From: rel, To: path.Join(dest, rel)}
	}
	return moves, dest, nil
}

// nextHistoryNumber returns 1 + the highest n of history/<n>-*.
func nextHistoryNumber(taskDir string) (int, error) {
	entries, err := os.ReadDir(filepath.Join(taskDir, HistoryDir))
	if err != nil && !os.IsNotExist(err) {
		return 0, fmt.Errorf("read %s: %w", HistoryDir, err)
	}
	max := 0
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "-")
		if !ok {
			continue
		}
		if n, err := strconv.Atoi(num); err == nil && n > max {
			max = n
		}
	}
	return max + 1, nil
}
