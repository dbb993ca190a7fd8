package lifecycle

import (
	"testing"

	"github.com/orchdev/orch/internal/artifact"
)

func TestOwner(t *testing.T) {
	for rel, want := range map[string]Phase{
		artifact.PlanFile:                Planning,
		artifact.MeetingFile:             Planning,
		"planning/notes.txt":             Planning,
		artifact.BriefFile:               "",
		artifact.PlanReviewFile:          PlanReview,
		artifact.PlanReviewMarkdownFile:  PlanReview,
		artifact.CodeReviewFile:          Review,
		artifact.CodeReviewMarkdownFile:  Review,
		"review/notes.md":                "",
		"code":                           Codegen,
		artifact.CodeFilesDir + "/a.go":  Codegen,
		artifact.DiffFile:                Codegen,
		artifact.TestReportFile:          Test,
		artifact.TestLogsDir + "/go.log": Test,
		artifact.DecisionFile:            Accept,
		artifact.AcceptSummaryFile:       Accept,
		artifact.AdviceFile:              Accept,
		artifact.RevertRecordFile:        Revert,
		"history/1-codegen/code":         "",
		"state.json":                     "",
	} {
		if got := Owner(rel); got != want {
			t.Errorf("Owner(%q) = %q, want %q", rel, got, want)
		}
	}
	if a, _ := ArtifactOf(artifact.AdviceFile); !a.KeptOnRerun {
		t.Errorf("the advice is not kept when accept runs again")
	}
	if a, _ := ArtifactOf(artifact.DecisionFile); a.KeptOnRerun {
		t.Errorf("the decision is kept when accept runs again")
	}
}

// TestArtifactsCatalogue: every phase with work has its main artifact in
// the catalogue, owned by it.
func TestArtifactsCatalogue(t *testing.T) {
	mains := map[Phase]string{}
	for _, a := range Artifacts() {
		if a.Main != "" {
			mains[a.Phase] = a.Main
			if Owner(a.Main) != a.Phase {
				t.Errorf("%s's main artifact %s is owned by %q", a.Phase, a.Main, Owner(a.Main))
			}
		}
	}
	for _, p := range Phases() {
		if _, ok := mains[p]; !ok && p != Done {
			t.Errorf("phase %s has no main artifact in the catalogue", p)
		}
	}
	if got := ArtifactAreas(); len(got) != 6 || got[0] != "planning" || got[5] != "revert" {
		t.Errorf("areas %v", got)
	}
}
