package orchestrator

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/lifecycle"
)

// TestObserveReadsTheCatalogue: the decision out of each phase loads
// exactly the artifacts the catalogue names for it (lifecycle.DecisionInputs)
// and no others, even when every artifact is there.
func TestObserveReadsTheCatalogue(t *testing.T) {
	dir := t.TempDir()
	for _, rel := range []string{artifact.PlanFile, artifact.FilePlanFile, artifact.PlanReviewFile, artifact.CodegenFile,
		artifact.CodeFilesDir + "/a.go", artifact.DiffFile, artifact.CodeReviewFile, artifact.TestReportFile,
		artifact.DecisionFile, artifact.RevertRecordFile} {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range lifecycle.Phases() {
		s := Observe(dir, p)
		var got []string
		for rel, present := range map[string]bool{
			artifact.PlanFile:         s.Plan.Present,
			artifact.FilePlanFile:     s.FilePlan.Present,
			artifact.PlanReviewFile:   s.PlanReview.Present,
			artifact.CodegenFile:      s.Codegen.Present,
			artifact.CodeFilesDir:     s.CodeFiles.Present,
			artifact.DiffFile:         s.Diff.Present,
			artifact.CodeReviewFile:   s.CodeReview.Present,
			artifact.TestReportFile:   s.TestReport.Present,
			artifact.DecisionFile:     s.Decision.Present,
			artifact.RevertRecordFile: s.Revert.Present,
		} {
			if present {
				got = append(got, rel)
			}
		}
		want := lifecycle.DecisionInputs(p)
		sort.Strings(got)
		want = slices.Sorted(slices.Values(want))
		if !slices.Equal(got, want) {
			t.Errorf("Observe(%s) read %v, the catalogue says %v", p, got, want)
		}
	}
}
