package lifecycle

import (
	"errors"
	"testing"

	"github.com/orchdev/orch/internal/artifact"
)

func TestPlanningStatus(t *testing.T) {
	answer := "yes"
	plan := func(qs []artifact.Question, files ...artifact.FileEntry) artifact.Loaded[artifact.Plan] {
		return artifact.Loaded[artifact.Plan]{Present: true, Value: artifact.Plan{ID: "t", Title: "x", Brief: "b", Questions: qs, FilePlan: files}}
	}
	fp := func(files ...artifact.FileEntry) artifact.Loaded[artifact.FilePlan] {
		return artifact.Loaded[artifact.FilePlan]{Present: true, Value: artifact.FilePlan{Files: files}}
	}
	f := artifact.FileEntry{Path: "a.go", Intent: "update"}
	open := artifact.Question{ID: "q1", Text: "?", Blocking: true}
	answered := artifact.Question{ID: "q1", Text: "?", Blocking: true, Answer: &answer}
	nonBlocking := artifact.Question{ID: "q2", Text: "?"}
	tests := []struct {
		name string
		plan artifact.Loaded[artifact.Plan]
		fp   artifact.Loaded[artifact.FilePlan]
		want Status
	}{
		{"no plan", artifact.Loaded[artifact.Plan]{}, artifact.Loaded[artifact.FilePlan]{}, PlanDraft},
		{"invalid plan", artifact.Loaded[artifact.Plan]{Present: true, Err: errors.New("bad")}, artifact.Loaded[artifact.FilePlan]{}, PlanWorkshop},
		{"open question with files", plan([]artifact.Question{open}, f), fp(f), PlanClarifying},
		{"open question without files", plan([]artifact.Question{open}), artifact.Loaded[artifact.FilePlan]{}, PlanClarifying},
		{"answered, files", plan([]artifact.Question{answered}, f), fp(f), PlanReviewReady},
		{"non-blocking unanswered, files", plan([]artifact.Question{nonBlocking}, f), fp(f), PlanReviewReady},
		{"no file plan", plan(nil), artifact.Loaded[artifact.FilePlan]{}, PlanFormalizing},
		{"empty file plan", plan(nil), fp(), PlanFormalizing},
		{"invalid file plan", plan(nil, f), artifact.Loaded[artifact.FilePlan]{Present: true, Err: errors.New("bad")}, PlanFormalizing},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := Snapshot{Plan: tc.plan, FilePlan: tc.fp}
			got := PlanningStatus(s)
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			// review_ready is exactly the planning → plan_review edge.
			if holds := Evaluate(CondPlanReady, s).Holds; holds != (got == PlanReviewReady) {
				t.Errorf("plan_ready holds=%v but status %q", holds, got)
			}
		})
	}
}

func TestPlanReviewVerdict(t *testing.T) {
	v := func(ok bool, severity string) artifact.Reviewer {
		return artifact.Reviewer{ID: "r", OK: ok, Severity: severity}
	}
	tests := []struct {
		name        string
		reviewers   []artifact.Reviewer
		ok, blocked bool
	}{
		{"all ok", []artifact.Reviewer{v(true, "info"), v(true, "minor"), v(true, "info")}, true, false},
		{"one not ok, minor", []artifact.Reviewer{v(true, "info"), v(false, "minor"), v(true, "info")}, false, false},
		{"one not ok, major", []artifact.Reviewer{v(true, "info"), v(false, "major")}, false, false},
		{"one blocking", []artifact.Reviewer{v(true, "info"), v(false, "blocking"), v(true, "info")}, false, true},
		{"blocking and minor", []artifact.Reviewer{v(false, "minor"), v(false, "blocking")}, false, true},
		{"ok with a minor remark", []artifact.Reviewer{v(true, "minor")}, true, false},
		{"ok but blocking severity", []artifact.Reviewer{v(true, "blocking")}, true, false},
		{"no reviewers", nil, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ok, blocked := PlanReviewVerdict(tc.reviewers)
			if ok != tc.ok || blocked != tc.blocked {
				t.Errorf("got ok=%v blocked=%v, want ok=%v blocked=%v", ok, blocked, tc.ok, tc.blocked)
			}
			// The recorded verdict sends the task where the table says.
			snap := Snapshot{PlanReview: artifact.Loaded[artifact.PlanReview]{Present: true, Value: artifact.PlanReview{OK: ok, Blocked: blocked, Reviewers: tc.reviewers}}}
			if got := Evaluate(CondPlanReviewBlocked, snap).Holds; got != blocked {
				t.Errorf("plan review blocked condition holds=%v, verdict blocked=%v", got, blocked)
			}
		})
	}
}

// TestCodeReviewVerdict: the aggregate is ok only with every reviewer ok
// and no blocking issue; and a review recorded with that verdict takes the
// edge the table says (review → test only when ok).
func TestCodeReviewVerdict(t *testing.T) {
	is := func(severity string) artifact.Issue {
		return artifact.Issue{Severity: severity, Kind: "code", Message: "m"}
	}
	tests := []struct {
		name   string
		oks    []bool
		issues []artifact.Issue
		ok     bool
	}{
		{"all ok, no issues", []bool{true, true}, nil, true},
		{"all ok, minor and major issues", []bool{true, true}, []artifact.Issue{is("minor"), is("major")}, true},
		{"one not ok", []bool{true, false}, nil, false},
		{"all ok but a blocking issue", []bool{true, true}, []artifact.Issue{is("info"), is("blocking")}, false},
		{"no reviewers", nil, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ok := CodeReviewVerdict(tc.oks, tc.issues)
			if ok != tc.ok {
				t.Fatalf("CodeReviewVerdict = %v, want %v", ok, tc.ok)
			}
			snap := Snapshot{CodeReview: artifact.Loaded[artifact.CodeReview]{Present: true, Value: artifact.CodeReview{OK: ok, Issues: tc.issues}}}
			if got := Evaluate(CondNeedsCodeChanges, snap).Holds; got == ok {
				t.Errorf("needs code changes holds=%v for a review recorded ok=%v", got, ok)
			}
		})
	}
}
