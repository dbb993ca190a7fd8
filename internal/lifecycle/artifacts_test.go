package lifecycle

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/docblock"
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

// TestDocsLayoutTable keeps the artifacts table in docs/artifacts.md equal
// to the catalogue. Run `go test ./internal/lifecycle -update` to
// regenerate it.
func TestDocsLayoutTable(t *testing.T) {
	docblock.Check(t, filepath.Join("..", "..", "docs", "artifacts.md"),
		"<!-- BEGIN GENERATED: artifacts (go test ./internal/lifecycle -update) -->",
		"<!-- END GENERATED: artifacts -->",
		LayoutTable(), *update, "go test ./internal/lifecycle -update")
}

// TestDecisionInputs: the decision out of a phase reads its own main
// artifact, every documented file is owned as the catalogue says, and the
// plan is read before the file plan that depends on it.
func TestDecisionInputs(t *testing.T) {
	for _, a := range Artifacts() {
		if a.Main != "" && !slices.Contains(DecisionInputs(a.Phase), a.Main) {
			t.Errorf("the decision out of %s does not read its main artifact %s", a.Phase, a.Main)
		}
		if a.Meaning != "" && Owner(a.Path) != a.Phase {
			t.Errorf("%s: documented as %q's, owned by %q", a.Path, a.Phase, Owner(a.Path))
		}
		if a.Meaning != "" && a.Writer == "" {
			t.Errorf("%s: no writer", a.Path)
		}
	}
	for _, p := range Phases() {
		in := DecisionInputs(p)
		if i, j := slices.Index(in, artifact.PlanFile), slices.Index(in, artifact.FilePlanFile); j >= 0 && (i < 0 || i > j) {
			t.Errorf("%s: the file plan is read before the plan: %v", p, in)
		}
	}
	if got := DecisionInputs(Done); len(got) != 0 {
		t.Errorf("done reads %v", got)
	}
}
