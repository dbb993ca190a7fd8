package review

import (
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/agent/agenttest"
)

func TestRenderPlanReviewMarkdown(t *testing.T) {
	r := PlanFile{PlanSHA256: strings.Repeat("ab", 32), PlanningRound: 2, Reviewers: []PlanVerdict{
		{ID: "product", OK: true, Severity: "info", Decision: "approve", Summary: "does what the brief asks"},
		{ID: "risk", OK: false, Severity: "blocking", Decision: "reject", BlockingIssues: []string{"retrying POST | PUT is unsafe"}, Suggestions: []string{"only retry idempotent methods"}, Summary: "unsafe\nas planned"},
	}}
	r.OK, r.Blocked = AggregatePlan(r.Reviewers)
	agenttest.Golden(t, "plan_review.md.golden", PlanMarkdown("0007-add-retry", "Retry Fetch", r))
}

// TestReviewMarkdownSpellsVerdictsAlike: plan-review.md and
// code-review.md (and the CLI and the board) spell a reviewer's verdict
// the same way, "ok" or "not ok", in a column named "verdict".
func TestReviewMarkdownSpellsVerdictsAlike(t *testing.T) {
	plan := PlanMarkdown("t", "T", PlanFile{Reviewers: []PlanVerdict{
		{ID: "product", OK: true, Severity: "info", Decision: "approve", Summary: "fine"},
		{ID: "risk", OK: false, Severity: "major", Decision: "revise", Summary: "unsafe"},
	}})
	code := CodeMarkdown(CodeRecord{Reviewers: []CodeVerdict{
		{ID: "correctness", OK: true, Summary: "fine"},
		{ID: "tests", OK: false, Issues: 1, Summary: "untested"},
	}})
	for name, md := range map[string]string{"plan-review.md": plan, "code-review.md": code} {
		for _, want := range []string{"| reviewer | verdict |", " | ok | ", " | not ok | "} {
			if !strings.Contains(md, want) {
				t.Errorf("%s lacks %q:\n%s", name, want, md)
			}
		}
		for _, other := range []string{"| yes |", "| no |", "| true |", "| false |"} {
			if strings.Contains(md, other) {
				t.Errorf("%s spells a verdict %q:\n%s", name, other, md)
			}
		}
	}
}
