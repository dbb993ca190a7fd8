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
const HistoryDir = artifact.HistoryDir

// phaseArtifacts returns the task-relative files and folders present in
// the task folder that phase p owns by the catalogue (lifecycle.Artifacts):
// an area folder as a whole when all of it is p's, else its entries one by
// one (planning/brief.md is the user's input and belongs to no phase).
func phaseArtifacts(taskDir string, p lifecycle.Phase) []string {
	var out []string
	for _, area := range lifecycle.ArtifactAreas() {
		if wholeArea(area) {
			if lifecycle.Owner(area) == p {
				out = append(out, area)
			}
			continue
		}
		entries, _ := os.ReadDir(filepath.Join(taskDir, area))
		for _, e := range entries {
			if rel := path.Join(area, e.Name()); lifecycle.Owner(rel) == p {
				out = append(out, rel)
			}
		}
	}
	return out
}

// wholeArea reports whether one phase owns all of area and its own re-run
// archives all of it.
func wholeArea(area string) bool {
	owner, whole := lifecycle.Phase(""), false
	for _, a := range lifecycle.Artifacts() {
		if a.Path == area && a.Dir {
			owner, whole = a.Phase, true
		}
	}
	for _, a := range lifecycle.Artifacts() {
		if strings.HasPrefix(a.Path, area+"/") && (a.Phase != owner || a.KeptOnRerun) {
			return false
		}
	}
	return whole
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
