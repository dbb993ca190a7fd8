package lifecycle

import (
	"path"
	"slices"
	"strings"

	"github.com/orchdev/orch/internal/artifact"
)

// Artifact is one entry of the catalogue of a task folder's artifacts: a
// task-relative path and the phase whose work produces it.
type Artifact struct {
	// Path is a file, a folder (Dir: everything below it) or, with
	// Prefix, the start of file names ("review/plan-review" covers
	// plan-review.json and plan-review.md).
	Path   string
	Dir    bool
	Prefix bool
	// Phase owns the artifact: its artifacts go to history when the
	// phase starts a fresh attempt. "" is the user's input (the brief),
	// which no phase owns.
	Phase Phase
	// KeptOnRerun: the phase's own re-run leaves the artifact in place
	// (it is input to the phase's decision, like the accept advisor's
	// advice); a regression or a redo still archives it.
	KeptOnRerun bool
	// Main is the phase's main artifact, the one `orch next` reads
	// ("" for a folder or a companion file).
	Main string
}

// Artifacts is the catalogue: where each phase's artifacts live. Ownership
// of a path is decided by the most specific entry that covers it.
func Artifacts() []Artifact {
	return []Artifact{
		{Path: "planning", Dir: true, Phase: Planning, Main: artifact.PlanFile},
		{Path: artifact.BriefFile},
		{Path: strings.TrimSuffix(artifact.PlanReviewFile, ".json"), Prefix: true, Phase: PlanReview, Main: artifact.PlanReviewFile},
		{Path: "code", Dir: true, Phase: Codegen, Main: artifact.DiffFile},
		{Path: strings.TrimSuffix(artifact.CodeReviewFile, ".json"), Prefix: true, Phase: Review, Main: artifact.CodeReviewFile},
		{Path: "test", Dir: true, Phase: Test, Main: artifact.TestReportFile},
		{Path: "accept", Dir: true, Phase: Accept, Main: artifact.DecisionFile},
		{Path: "accept/advice.", Prefix: true, Phase: Accept, KeptOnRerun: true},
		{Path: "revert", Dir: true, Phase: Revert, Main: artifact.RevertRecordFile},
	}
}

// covers reports whether entry a covers task-relative path rel, and how
// specific the match is (the length of the matched path).
func (a Artifact) covers(rel string) (int, bool) {
	switch {
	case rel == a.Path:
		return len(a.Path), true
	case a.Dir && strings.HasPrefix(rel, a.Path+"/"):
		return len(a.Path), true
	case a.Prefix && strings.HasPrefix(rel, a.Path):
		return len(a.Path), true
	}
	return 0, false
}

// ArtifactOf returns the catalogue entry that covers task-relative path
// rel: the most specific one.
func ArtifactOf(rel string) (Artifact, bool) {
	rel = path.Clean(rel)
	var best Artifact
	bestLen := -1
	for _, a := range Artifacts() {
		if n, ok := a.covers(rel); ok && n > bestLen {
			best, bestLen = a, n
		}
	}
	return best, bestLen >= 0
}

// Owner returns the phase that owns task-relative path rel ("" when none
// does: the brief, or a file no phase writes).
func Owner(rel string) Phase {
	a, _ := ArtifactOf(rel)
	return a.Phase
}

// ArtifactAreas are the top-level folders of a task that hold artifacts,
// in lifecycle order.
func ArtifactAreas() []string {
	var out []string
	for _, a := range Artifacts() {
		top, _, _ := strings.Cut(a.Path, "/")
		if !slices.Contains(out, top) {
			out = append(out, top)
		}
	}
	return out
}
