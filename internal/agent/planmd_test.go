package agent

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/artifact"
)

// updatePlanGolden rewrites the golden files of this file's tests:
// go test ./internal/agent -run TestRenderPlan -update-plan-golden
var updatePlanGolden = flag.Bool("update-plan-golden", false, "rewrite testdata/plan*.golden")

func plGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *updatePlanGolden {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update-plan-golden to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs (run with -update-plan-golden to accept):\n--- got\n%s", path, got)
	}
}

func TestRenderPlanMarkdown(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "plan_full.json"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := artifact.DecodePlan(artifact.PlanFile, data)
	if err != nil {
		t.Fatal(err)
	}
	plGolden(t, "plan_full.md.golden", RenderPlanMarkdown(p))
}

func TestRenderPlanReviewMarkdown(t *testing.T) {
	r := PlanReviewFile{PlanSHA256: strings.Repeat("ab", 32), PlanningRound: 2, Reviewers: []PlanReviewerVerdict{
		{ID: "product", OK: true, Severity: "info", Decision: "approve", Summary: "does what the brief asks"},
		{ID: "risk", OK: false, Severity: "blocking", Decision: "reject", BlockingIssues: []string{"retrying POST | PUT is unsafe"}, Suggestions: []string{"only retry idempotent methods"}, Summary: "unsafe\nas planned"},
	}}
	r.OK, r.Blocked = AggregatePlanReview(r.Reviewers)
	plGolden(t, "plan_review.md.golden", RenderPlanReviewMarkdown("0007-add-retry", "Retry Fetch", r))
}

// FuzzRenderPlanMarkdown: any plan the contract accepts renders, with its
// title as the first line and no raw newline inside a table row.
func FuzzRenderPlanMarkdown(f *testing.F) {
	if data, err := os.ReadFile(filepath.Join("testdata", "plan_full.json")); err == nil {
		f.Add(data)
	}
	f.Add([]byte(`{"id":"a","title":"t\nx","brief":"b","file_plan":[{"path":"a|b","intent":"create","summary":"x\ny|z"}]}`))
	f.Add([]byte(`{"id":"a","title":"t","brief":"b","goals":[1,null,{"a":[]}],"test_plan":{"cases":"x"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := artifact.DecodePlan(artifact.PlanFile, data)
		if err != nil {
			return
		}
		md := RenderPlanMarkdown(p)
		first, _, _ := strings.Cut(md, "\n")
		if first != "# "+pmdLine(p.Title) {
			t.Fatalf("first line %q", first)
		}
		for _, line := range strings.Split(md, "\n") {
			if strings.HasPrefix(line, "| `") && !strings.HasSuffix(line, " |") {
				t.Fatalf("broken table row %q", line)
			}
		}
	})
}
