package lifecycle

import (
	"errors"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/patch"
)

func ok[T any](v T) artifact.Loaded[T] { return artifact.Loaded[T]{Present: true, Value: v} }

func bad[T any](msg string) artifact.Loaded[T] {
	return artifact.Loaded[T]{Present: true, Err: errors.New(msg)}
}

func withSHA[T any](l artifact.Loaded[T], sum string) artifact.Loaded[T] { l.SHA256 = sum; return l }

func str(s string) *string { return &s }

var (
	goodPlan = artifact.Plan{ID: "p", Title: "t", Brief: "b"}
	onePlan  = artifact.FilePlan{Files: []artifact.FileEntry{{Path: "a.go", Intent: "update"}}}
	delPlan  = artifact.FilePlan{Files: []artifact.FileEntry{{Path: "old.go", Intent: "delete"}}}
	diffA    = patch.Diff{Files: []patch.Entry{{OldPath: "a.go", NewPath: "a.go", Op: "update"}}, Bytes: 100}
)

func planWithQuestion(answer *string, blocking bool) artifact.Plan {
	p := goodPlan
	p.Questions = []artifact.Question{{ID: "q1", Text: "which?", Blocking: blocking, Answer: answer}}
	return p
}

func planningSnap() Snapshot {
	return Snapshot{Plan: ok(goodPlan), FilePlan: ok(onePlan)}
}

func planReviewSnap(r artifact.PlanReview) Snapshot {
	s := planningSnap()
	s.Plan = withSHA(s.Plan, strings.Repeat("a", 64))
	s.PlanReview = ok(r)
	return s
}

func codegenSnap() Snapshot {
	return Snapshot{Plan: ok(goodPlan), FilePlan: ok(onePlan),
		Codegen:   ok(artifact.Codegen{Status: "completed", Base: strings.Repeat("0", 40)}),
		CodeFiles: ok([]string{"a.go"}), Diff: ok(diffA),
		Evidence: Evidence{Agreement: &Agreement{}}}
}

// TestConditions checks every decided edge both when it holds and when it
// does not, with the reason a user reads in `orch status`.
func TestConditions(t *testing.T) {
	type tc struct {
		name   string
		cond   CondName
		snap   Snapshot
		holds  bool
		reason string // substring of the verdict's reason
	}
	okReview := artifact.PlanReview{OK: true, Reviewers: []artifact.Reviewer{{ID: "arch", OK: true}}}
	blockedReviewer := artifact.PlanReview{OK: true, Reviewers: []artifact.Reviewer{{ID: "risk", OK: false, Severity: "blocking"}}}
	minorReviewer := artifact.PlanReview{OK: true, Reviewers: []artifact.Reviewer{{ID: "risk", OK: false, Severity: "minor"}}}
	snapWith := func(mod func(*Snapshot)) Snapshot { s := codegenSnap(); mod(&s); return s }
	tests := []tc{
		// planning → plan_review
		{"plan ready", CondPlanReady, planningSnap(), true, "file plan lists 1 file"},
		{"plan missing", CondPlanReady, Snapshot{}, false, "planning/planning.ai.json is missing"},
		{"plan invalid", CondPlanReady, Snapshot{Plan: bad[artifact.Plan]("planning/planning.ai.json: $.title: expected a string")}, false, "$.title"},
		{"open blocking question", CondPlanReady, Snapshot{Plan: ok(planWithQuestion(nil, true)), FilePlan: ok(onePlan)}, false, "open blocking question(s): q1"},
		{"blank answer is open", CondPlanReady, Snapshot{Plan: ok(planWithQuestion(str("  "), true)), FilePlan: ok(onePlan)}, false, "q1"},
		{"answered question", CondPlanReady, Snapshot{Plan: ok(planWithQuestion(str("yes"), true)), FilePlan: ok(onePlan)}, true, ""},
		{"non-blocking question", CondPlanReady, Snapshot{Plan: ok(planWithQuestion(nil, false)), FilePlan: ok(onePlan)}, true, ""},
		{"no file plan", CondPlanReady, Snapshot{Plan: ok(goodPlan)}, false, "no file plan"},
		{"file plan invalid", CondPlanReady, Snapshot{Plan: ok(goodPlan), FilePlan: bad[artifact.FilePlan]("planning/plan.files.json: $.files[1].path: duplicate")}, false, "duplicate"},
		{"file plan empty", CondPlanReady, Snapshot{Plan: ok(goodPlan), FilePlan: ok(artifact.FilePlan{})}, false, "file plan is empty"},

		// plan_review → planning (blocked)
		{"review blocked flag", CondPlanReviewBlocked, planReviewSnap(artifact.PlanReview{OK: false, Blocked: true}), true, "blocked"},
		{"blocking reviewer", CondPlanReviewBlocked, planReviewSnap(blockedReviewer), true, "risk"},
		{"minor reviewer does not block", CondPlanReviewBlocked, planReviewSnap(minorReviewer), false, "not blocked"},
		{"no review yet", CondPlanReviewBlocked, planningSnap(), false, "review/plan-review.json is missing"},
		{"review invalid", CondPlanReviewBlocked, Snapshot{Plan: ok(goodPlan), PlanReview: bad[artifact.PlanReview]("review/plan-review.json: $.ok: expected a boolean")}, false, "$.ok"},
		// plan_review → planning (needs changes)
		{"review not ok", CondPlanReviewNeedsChanges, planReviewSnap(artifact.PlanReview{OK: false}), true, "ok: false"},
		{"plan changed since review", CondPlanReviewNeedsChanges, planReviewSnap(artifact.PlanReview{OK: true, PlanSHA256: strings.Repeat("b", 64)}), true, "plan changed after review"},
		{"plan now invalid", CondPlanReviewNeedsChanges, Snapshot{Plan: bad[artifact.Plan]("bad plan"), PlanReview: ok(okReview)}, true, "invalid"},
		{"plan has open question", CondPlanReviewNeedsChanges, Snapshot{Plan: ok(planWithQuestion(nil, true)), PlanReview: ok(okReview)}, true, "open blocking question"},
		{"plan stale without review", CondPlanReviewNeedsChanges, Snapshot{Plan: ok(planWithQuestion(nil, true))}, true, "open blocking"},
		{"review ok plan same sha", CondPlanReviewNeedsChanges, planReviewSnap(artifact.PlanReview{OK: true, PlanSHA256: strings.Repeat("a", 64)}), false, "unchanged"},
		{"review ok without sha", CondPlanReviewNeedsChanges, planReviewSnap(okReview), false, "unchanged"},
		// plan_review → codegen
		{"review ok", CondPlanReviewOK, planReviewSnap(okReview), true, "plan review ok"},
		{"review ok matching sha (case)", CondPlanReviewOK, planReviewSnap(artifact.PlanReview{OK: true, PlanSHA256: strings.Repeat("A", 64)}), true, ""},
		{"review ok but blocked", CondPlanReviewOK, planReviewSnap(artifact.PlanReview{OK: true, Blocked: true}), false, "blocked"},
		{"review ok but blocking reviewer", CondPlanReviewOK, planReviewSnap(blockedReviewer), false, "risk"},
		{"review not ok", CondPlanReviewOK, planReviewSnap(artifact.PlanReview{OK: false}), false, "ok: false"},
		{"review ok plan stale", CondPlanReviewOK, planReviewSnap(artifact.PlanReview{OK: true, PlanSHA256: strings.Repeat("c", 64)}), false, "plan changed"},
		{"review missing", CondPlanReviewOK, planningSnap(), false, "missing"},

		// codegen → plan_review
		{"codegen says plan unclear", CondPlanUnclear, snapWith(func(s *Snapshot) { s.Codegen = ok(artifact.Codegen{Status: "plan_unclear"}) }), true, "plan_unclear"},
		{"file plan missing", CondPlanUnclear, snapWith(func(s *Snapshot) { s.FilePlan = artifact.Loaded[artifact.FilePlan]{} }), true, "file plan is missing"},
		{"file plan empty in codegen", CondPlanUnclear, snapWith(func(s *Snapshot) { s.FilePlan = ok(artifact.FilePlan{}) }), true, "file plan is empty"},
		{"file plan invalid in codegen", CondPlanUnclear, snapWith(func(s *Snapshot) { s.FilePlan = bad[artifact.FilePlan]("dup path") }), true, "dup path"},
		{"plan clear", CondPlanUnclear, codegenSnap(), false, "did not report plan_unclear"},
		// codegen → planning
		{"unplanned code file", CondScopeMismatch, snapWith(func(s *Snapshot) { s.CodeFiles = ok([]string{"a.go", "b.go"}) }), true, "b.go"},
		{"unplanned diff path", CondScopeMismatch, snapWith(func(s *Snapshot) {
			s.Diff = ok(patch.Diff{Files: []patch.Entry{{OldPath: "a.go", NewPath: "c.go", Op: "rename"}}})
		}), true, "c.go"},
		{"in scope", CondScopeMismatch, codegenSnap(), false, "every generated path is in the file plan"},
		{"no file plan to compare", CondScopeMismatch, snapWith(func(s *Snapshot) { s.FilePlan = artifact.Loaded[artifact.FilePlan]{} }), false, "no valid file plan"},
		// codegen → review
		{"codegen completed", CondCodegenCompleted, codegenSnap(), true, "parses"},
		{"codegen.json optional", CondCodegenCompleted, snapWith(func(s *Snapshot) { s.Codegen = artifact.Loaded[artifact.Codegen]{} }), true, ""},
		{"diff missing", CondCodegenCompleted, snapWith(func(s *Snapshot) { s.Diff = artifact.Loaded[patch.Diff]{} }), false, "code/diff.patch is missing"},
		{"diff empty", CondCodegenCompleted, snapWith(func(s *Snapshot) { s.Diff = ok(patch.Diff{}) }), false, "empty"},
		{"diff invalid", CondCodegenCompleted, snapWith(func(s *Snapshot) { s.Diff = bad[patch.Diff]("code/diff.patch: line 3: malformed hunk header") }), false, "malformed hunk"},
		{"no code files", CondCodegenCompleted, snapWith(func(s *Snapshot) { s.CodeFiles = artifact.Loaded[[]string]{} }), false, "holds no file"},
		{"only deletes needs no files", CondCodegenCompleted, snapWith(func(s *Snapshot) {
			s.FilePlan = ok(delPlan)
			s.CodeFiles = artifact.Loaded[[]string]{}
			s.Diff = ok(patch.Diff{Files: []patch.Entry{{OldPath: "old.go", Op: "delete"}}})
		}), true, ""},
		{"code files invalid", CondCodegenCompleted, snapWith(func(s *Snapshot) { s.CodeFiles = bad[[]string]("code/files/x: symlink") }), false, "symlink"},
		{"codegen failed", CondCodegenCompleted, snapWith(func(s *Snapshot) { s.Codegen = ok(artifact.Codegen{Status: "failed"}) }), false, "status is failed"},

		// review
		{"plan flawed", CondPlanFlawed, Snapshot{CodeReview: ok(artifact.CodeReview{Issues: []artifact.Issue{{Severity: "blocking", Kind: "plan", Message: "plan misses auth"}}})}, true, "plan misses auth"},
		{"non-blocking plan issue", CondPlanFlawed, Snapshot{CodeReview: ok(artifact.CodeReview{OK: true, Issues: []artifact.Issue{{Severity: "major", Kind: "plan", Message: "m"}}})}, false, "no blocking issue of kind plan"},
		{"code review missing", CondPlanFlawed, Snapshot{}, false, "review/code-review.json is missing"},
		{"blocking code issue", CondNeedsCodeChanges, Snapshot{CodeReview: ok(artifact.CodeReview{OK: true, Issues: []artifact.Issue{{Severity: "blocking", Kind: "code", Message: "nil deref"}}})}, true, "nil deref"},
		{"review not ok", CondNeedsCodeChanges, Snapshot{CodeReview: ok(artifact.CodeReview{OK: false})}, true, "ok: false"},
		{"review fine", CondNeedsCodeChanges, Snapshot{CodeReview: ok(artifact.CodeReview{OK: true, Issues: []artifact.Issue{{Severity: "minor", Message: "naming"}}})}, false, "no blocking issue"},
		{"review passes", CondReviewPasses, Snapshot{CodeReview: ok(artifact.CodeReview{OK: true})}, true, "no blocking issues"},
		{"review passes not with blocking", CondReviewPasses, Snapshot{CodeReview: ok(artifact.CodeReview{OK: true, Issues: []artifact.Issue{{Severity: "blocking", Message: "x"}}})}, false, "1 blocking"},
		{"review passes not when not ok", CondReviewPasses, Snapshot{CodeReview: ok(artifact.CodeReview{OK: false})}, false, "ok: false"},
		{"review invalid", CondReviewPasses, Snapshot{CodeReview: bad[artifact.CodeReview]("review/code-review.json: $.issues[0].severity: expected one of")}, false, "severity"},

		// test
		{"tests failed", CondTestsFailed, Snapshot{TestReport: ok(artifact.TestReport{Status: "completed", Summary: artifact.Summary{Passed: 3, Failed: 1}})}, true, "1 failed"},
		{"tests passed, no failure edge", CondTestsFailed, Snapshot{TestReport: ok(artifact.TestReport{Status: "completed", OverallPass: true})}, false, "passed"},
		{"tests running", CondTestsFailed, Snapshot{TestReport: ok(artifact.TestReport{Status: "running"})}, false, "running"},
		{"runner error is not a failure", CondTestsFailed, Snapshot{TestReport: ok(artifact.TestReport{Status: "error", Error: "patch does not apply"})}, false, "patch does not apply"},
		{"no tests is not a failure", CondTestsFailed, Snapshot{TestReport: ok(artifact.TestReport{Status: artifact.TestNoTests, Error: "no tests configured"})}, false, "no_tests: no tests configured"},
		{"no tests is not complete", CondTestsComplete, Snapshot{TestReport: ok(artifact.TestReport{Status: artifact.TestNoTests})}, false, "no_tests"},
		{"tests complete", CondTestsComplete, Snapshot{TestReport: ok(artifact.TestReport{Status: "completed", OverallPass: true, Summary: artifact.Summary{Passed: 4}})}, true, "4 passed"},
		{"tests complete with failures", CondTestsComplete, Snapshot{TestReport: ok(artifact.TestReport{Status: "completed"})}, true, "not suggested"},
		{"tests not complete", CondTestsComplete, Snapshot{TestReport: ok(artifact.TestReport{Status: "running"})}, false, "running"},
		{"no report", CondTestsComplete, Snapshot{}, false, "test/report.json is missing"},

		// accept
		{"revert verdict", CondRevertRequested, decision("revert", "", false), true, "revert"},
		{"rejected verdict", CondRevertRequested, decision("rejected", "", false), true, "rejected"},
		{"regression", CondRevertRequested, decision("accepted", "", true), true, "regression"},
		{"accepted is no revert", CondRevertRequested, decision("accepted", "", false), false, "no regression"},
		{"no decision", CondRevertRequested, Snapshot{}, false, "accept/decision.json is missing"},
		{"accepted", CondAccepted, decision("accepted", "", false), true, "accepted"},
		{"accepted with regression", CondAccepted, decision("accepted", "", true), false, "regression"},
		{"not accepted", CondAccepted, decision("rejected", "", false), false, "rejected"},
		{"changes to codegen", CondChangesToCodegen, decision("changes_requested", "codegen", false), true, "codegen"},
		{"changes to review, not codegen", CondChangesToCodegen, decision("changes_requested", "review", false), false, "target review"},
		{"changes to review", CondChangesToReview, decision("changes_requested", "review", false), true, "review"},
		{"accepted is not changes", CondChangesToReview, decision("accepted", "", false), false, "accepted"},
		{"changes to planning", CondChangesToPlanning, decision("changes_requested", "planning", false), true, "planning"},
		{"changes to codegen, not planning", CondChangesToPlanning, decision("changes_requested", "codegen", false), false, "target codegen"},

		// revert
		{"revert recorded", CondRevertRecorded, Snapshot{Revert: ok(artifact.RevertRecord{Reason: "r", Status: "reverted"})}, true, "reverted"},
		{"revert missing", CondRevertRecorded, Snapshot{}, false, "revert/record.json is missing"},
		{"revert invalid", CondRevertRecorded, Snapshot{Revert: bad[artifact.RevertRecord]("revert/record.json: $.reason: expected a non-blank string")}, false, "$.reason"},

		{"rerun is never decided", CondRerun, planningSnap(), false, "orch redo"},

		// Requirements of forward edges: orch's commit of the judged change.
		{"committed", CondCommitted, landed(&Landed{SHA: sha("c"), DiffSHA256: h("d")}, ""), true, "orch committed the judged change as cccccccccccc"},
		{"nothing committed", CondCommitted, landed(&Landed{}, ""), false, "nothing is committed"},
		{"commit not looked for", CondCommitted, landed(nil, ""), false, "not looked for"},
		{"commit lookup failed", CondCommitted, landed(&Landed{Err: errors.New("git log: boom")}, ""), false, "boom"},
		{"commit of another change", CondCommitted, landed(&Landed{SHA: sha("c"), DiffSHA256: h("e")}, ""), false, "of another change"},
		{"commit of the bound patch although the file changed since", CondCommitted, func() Snapshot {
			s := landed(&Landed{SHA: sha("c"), DiffSHA256: h("d")}, "")
			s.Evidence.Now[HashDiff] = h("x")
			s.Evidence.Gates = Gates{HashDiff: {SHA256: h("d"), From: Test, To: Accept}}
			return s
		}(), true, "judged change"},
		{"commit without Orch-Diff named by the decision", CondCommitted, landed(&Landed{SHA: sha("c")}, sha("c")[:12]), true, "names it"},
		{"commit without Orch-Diff not named", CondCommitted, landed(&Landed{SHA: sha("c")}, ""), false, "names no Orch-Diff"},

		// Requirements after a regression: a changed plan, patch, review.
		{"no regression pending", CondNewPlan, planningSnap(), true, ""},
		{"plan sent back unchanged", CondNewPlan, sentBack(HashPlan, PlanReview, Planning, h("p"), h("p")), false,
			"planning/planning.ai.json is the one plan_review → planning sent back (sha256 pppppppppppp…, transcript seq 7): change it (`orch plan`)"},
		{"plan changed since", CondNewPlan, sentBack(HashPlan, PlanReview, Planning, h("p"), h("q")), true, "changed since plan_review → planning sent it back"},
		{"patch sent back unchanged", CondNewPatch, sentBack(HashDiff, Test, Codegen, h("d"), h("d")), false, "`orch codegen`"},
		{"patch changed since", CondNewPatch, sentBack(HashDiff, Review, Codegen, h("d"), h("e")), true, "changed since"},
		{"no patch pending", CondNewPatch, codegenSnap(), true, ""},
		{"review sent back unchanged", CondNewReview, sentBack(HashReview, Accept, Review, h("r"), h("r")), false, "`orch review code`"},
		{"review changed since", CondNewReview, sentBack(HashReview, Accept, Review, h("r"), h("s")), true, "changed since"},
	}
	for _, tt := range tests {
		t.Run(string(tt.cond)+"/"+tt.name, func(t *testing.T) {
			v := Evaluate(tt.cond, tt.snap)
			if v.Holds != tt.holds {
				t.Errorf("holds = %v, want %v (reason %q)", v.Holds, tt.holds, v.Reason)
			}
			if !strings.Contains(v.Reason, tt.reason) {
				t.Errorf("reason %q does not mention %q", v.Reason, tt.reason)
			}
		})
	}
	// Every decided condition of the table has at least one holding and one
	// failing case above.
	seen := map[CondName][2]bool{}
	for _, tt := range tests {
		s := seen[tt.cond]
		if tt.holds {
			s[0] = true
		} else {
			s[1] = true
		}
		seen[tt.cond] = s
	}
	for _, e := range Lifecycle().Edges {
		if e.Kind == Decided && (!seen[e.Cond][0] || !seen[e.Cond][1]) {
			t.Errorf("condition %s lacks a holding or a failing case", e.Cond)
		}
		for _, c := range e.Requires {
			if !seen[c][0] || !seen[c][1] {
				t.Errorf("requirement %s lacks a holding or a failing case", c)
			}
		}
	}
}

func sha(c string) string { return strings.Repeat(c, 40) }

// landed is an accepted decision (naming commit, may be "") with the
// patch h("d") and what the repository holds of the change.
func landed(l *Landed, commit string) Snapshot {
	s := decision("accepted", "", false)
	s.Decision.Value.Commit = commit
	s.Evidence.Landed = l
	return s
}

// sentBack is a snapshot where the edge from → to sent key's artifact
// back with hash judged (transcript seq 7) and that artifact is now now.
func sentBack(key string, from, to Phase, judged, now string) Snapshot {
	return Snapshot{Evidence: Evidence{Now: map[string]string{key: now}, SentBack: Gates{key: {SHA256: judged, Seq: 7, From: from, To: to}}}}
}

func decision(verdict, target string, regression bool) Snapshot {
	return Snapshot{Decision: ok(artifact.Decision{Verdict: verdict, Target: target, Reasons: []string{"r"}, Decider: artifact.Decider{Kind: "human"}, Regression: regression}),
		Evidence: Evidence{Now: map[string]string{HashDiff: h("d")}, Landed: &Landed{SHA: strings.Repeat("c", 40), DiffSHA256: h("d")}}}
}

// TestDecide checks the decision order of docs/lifecycle.md: the edge
// taken when several hold, and the outcome when none does.
func TestDecide(t *testing.T) {
	tab := Lifecycle()
	tests := []struct {
		name    string
		phase   Phase
		snap    Snapshot
		want    Phase // "" = none
		invalid bool
	}{
		{"planning ready", Planning, planningSnap(), PlanReview, false},
		{"planning not ready", Planning, Snapshot{}, "", false},
		{"planning invalid plan", Planning, Snapshot{Plan: bad[artifact.Plan]("x")}, "", true},
		{"blocked wins over ok", PlanReview, planReviewSnap(blockedReviewerReview()), Planning, false},
		{"plan review ok", PlanReview, planReviewSnap(artifact.PlanReview{OK: true}), Codegen, false},
		{"plan review missing", PlanReview, planningSnap(), "", false},
		{"plan unclear wins over scope", Codegen, func() Snapshot {
			s := codegenSnap()
			s.Codegen = ok(artifact.Codegen{Status: "plan_unclear"})
			s.CodeFiles = ok([]string{"zzz.go"})
			return s
		}(), PlanReview, false},
		{"scope mismatch wins over completed", Codegen, func() Snapshot { s := codegenSnap(); s.CodeFiles = ok([]string{"a.go", "zzz.go"}); return s }(), Planning, false},
		{"codegen completed", Codegen, codegenSnap(), Review, false},
		{"codegen diff invalid", Codegen, func() Snapshot { s := codegenSnap(); s.Diff = bad[patch.Diff]("bad diff"); return s }(), "", true},
		{"plan issue wins over code", Review, Snapshot{CodeReview: ok(artifact.CodeReview{Issues: []artifact.Issue{{Severity: "blocking", Kind: "code", Message: "a"}, {Severity: "blocking", Kind: "plan", Message: "b"}}})}, Planning, false},
		{"code changes", Review, Snapshot{CodeReview: ok(artifact.CodeReview{OK: false})}, Codegen, false},
		{"review passes", Review, Snapshot{CodeReview: ok(artifact.CodeReview{OK: true})}, Test, false},
		{"review invalid", Review, Snapshot{CodeReview: bad[artifact.CodeReview]("x")}, "", true},
		{"failure goes to codegen, not accept", Test, Snapshot{TestReport: ok(artifact.TestReport{Status: "completed"})}, Codegen, false},
		{"pass goes to accept", Test, Snapshot{TestReport: ok(artifact.TestReport{Status: "completed", OverallPass: true})}, Accept, false},
		{"runner error stays", Test, Snapshot{TestReport: ok(artifact.TestReport{Status: "error"})}, "", false},
		{"no tests stays", Test, Snapshot{TestReport: ok(artifact.TestReport{Status: artifact.TestNoTests, Summary: artifact.Summary{Failed: 3}})}, "", false},
		{"regression wins over accepted", Accept, decision("accepted", "", true), Revert, false},
		{"accepted", Accept, decision("accepted", "", false), Done, false},
		{"accepted, nothing committed", Accept, func() Snapshot { s := decision("accepted", "", false); s.Evidence.Landed = &Landed{}; return s }(), "", false},
		{"planning: the plan sent back", Planning, func() Snapshot {
			s := planningSnap()
			s.Evidence = Evidence{Now: map[string]string{HashPlan: h("p")}, SentBack: Gates{HashPlan: {SHA256: h("p"), From: PlanReview, To: Planning}}}
			return s
		}(), "", false},
		{"changes to review", Accept, decision("changes_requested", "review", false), Review, false},
		{"changes to planning", Accept, decision("changes_requested", "planning", false), Planning, false},
		{"rejected", Accept, decision("rejected", "", false), Revert, false},
		{"revert recorded", Revert, Snapshot{Revert: ok(artifact.RevertRecord{Reason: "r", Status: "nothing_to_revert"})}, Done, false},
		{"done is terminal", Done, Snapshot{}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := tab.Decide(tt.phase, tt.snap)
			got := Phase("")
			if e, ok := d.Next(); ok {
				got = e.Edge.To
			}
			if got != tt.want {
				t.Errorf("Decide(%s) suggests %q, want %q (reason %q)", tt.phase, got, tt.want, d.Reason)
			}
			if (len(d.Invalid()) > 0) != tt.invalid {
				t.Errorf("invalid = %v, want %v", d.Invalid(), tt.invalid)
			}
			if d.Reason == "" {
				t.Errorf("decision has no reason")
			}
			if len(d.Edges) != len(tab.Decided(tt.phase)) {
				t.Errorf("decision lists %d edges, table has %d", len(d.Edges), len(tab.Decided(tt.phase)))
			}
		})
	}
}

func blockedReviewerReview() artifact.PlanReview {
	return artifact.PlanReview{OK: true, Reviewers: []artifact.Reviewer{{ID: "risk", OK: false, Severity: "blocking"}}}
}
