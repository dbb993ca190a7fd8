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
