package lifecycle

import (
	"errors"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/artifact"
)

// The gates of a task that went plan_review → codegen (plan P) → review
// (diff D, files F) → test (review R) → accept (report T).
func boundGates() Gates {
	return Gates{
		HashPlan:   {SHA256: h("p"), Seq: 9, From: Test, To: Accept},
		HashFiles:  {SHA256: h("f"), Seq: 9, From: Test, To: Accept},
		HashDiff:   {SHA256: h("d"), Seq: 9, From: Test, To: Accept},
		HashReview: {SHA256: h("r"), Seq: 9, From: Test, To: Accept},
		HashReport: {SHA256: h("t"), Seq: 9, From: Test, To: Accept},
	}
}

// gatesUpTo keeps the records a task in phase p has: those of the gates
// before it, each bound by the gate that leads into p.
func gatesUpTo(p Phase) Gates {
	keys := map[Phase][]string{
		Codegen: {HashPlan},
		Review:  {HashPlan, HashFiles, HashDiff},
		Test:    {HashPlan, HashFiles, HashDiff, HashReview},
		Accept:  HashKeys(),
	}[p]
	prev := map[Phase]Phase{Codegen: PlanReview, Review: Codegen, Test: Review, Accept: Test}[p]
	g := Gates{}
	for _, k := range keys {
		b := boundGates()[k]
		b.From, b.To, b.Seq = prev, p, 5
		g[k] = b
	}
	return g
}

func nowAll() map[string]string {
	return map[string]string{HashPlan: h("p"), HashFiles: h("f"), HashDiff: h("d"), HashReview: h("r"), HashReport: h("t")}
}

func with(m map[string]string, k, v string) map[string]string {
	out := map[string]string{}
	for kk, vv := range m {
		out[kk] = vv
	}
	if v == "" {
		delete(out, k)
	} else {
		out[k] = v
	}
	return out
}

var disagree = &artifact.Error{File: "code/files/calc.go", Expected: "the content code/diff.patch applied to the base gives", Got: "different content", Err: errors.New("disagree")}

// TestEvidenceConditions: each condition of README's "Evidence is bound to the change", holding
// and not, invalid (exit 4) where the contract says so.
func TestEvidenceConditions(t *testing.T) {
	review := func(diffSHA string) artifact.Loaded[artifact.CodeReview] {
		return withSHA(ok(artifact.CodeReview{OK: true, DiffSHA256: diffSHA}), h("r"))
	}
	report := func(pass bool, diffSHA string) artifact.Loaded[artifact.TestReport] {
		return withSHA(ok(artifact.TestReport{Status: artifact.TestCompleted, OverallPass: pass, DiffSHA256: diffSHA}), h("t"))
	}
	codegen := func(ev Evidence) Snapshot { s := codegenSnap(); s.Evidence = ev; return s }
	inReview := func(r artifact.Loaded[artifact.CodeReview], ev Evidence) Snapshot {
		return Snapshot{CodeReview: r, Evidence: ev}
	}
	inTest := func(r artifact.Loaded[artifact.TestReport], now map[string]string) Snapshot {
		return Snapshot{TestReport: r, Evidence: Evidence{Gates: gatesUpTo(Test), Now: now}}
	}
	accepted := func(now map[string]string) Snapshot {
		return Snapshot{Decision: ok(artifact.Decision{Verdict: artifact.VerdictAccepted}), Evidence: Evidence{Gates: gatesUpTo(Accept), Now: now}}
	}
	agreeing := &Agreement{}
	for _, tc := range []struct {
		name    string
		cond    CondName
		snap    Snapshot
		holds   bool
		invalid bool   // the verdict carries an invalid artifact
		reason  string // substring of the reason
	}{
		// codegen: the plan codegen works from is the reviewed one.
		{name: "plan unchanged since plan review", cond: CondPlanUnclear,
			snap: codegen(Evidence{Gates: gatesUpTo(Codegen), Now: nowAll(), Agreement: agreeing}), reason: "did not report plan_unclear"},
		{name: "plan edited after plan review goes back", cond: CondPlanUnclear, holds: true,
			snap:   codegen(Evidence{Gates: gatesUpTo(Codegen), Now: with(nowAll(), HashPlan, h("q")), Agreement: agreeing}),
			reason: "planning/planning.ai.json changed after the plan_review → codegen gate (recorded sha256 pppppppppppp…, now qqqqqqqqqqqq…): it goes back to plan review"},
		{name: "plan removed after plan review goes back", cond: CondPlanUnclear, holds: true,
			snap: codegen(Evidence{Gates: gatesUpTo(Codegen), Now: with(nowAll(), HashPlan, ""), Agreement: agreeing}), reason: "now missing"},
		{name: "codegen completed: files agree", cond: CondCodegenCompleted, holds: true,
			snap: codegen(Evidence{Gates: gatesUpTo(Codegen), Now: nowAll(), Agreement: agreeing}), reason: "gives exactly code/files/"},
		{name: "codegen completed: files disagree", cond: CondCodegenCompleted, invalid: true,
			snap: codegen(Evidence{Agreement: &Agreement{Err: disagree}}), reason: "invalid artifact: code/files/calc.go"},
		{name: "codegen completed: not compared", cond: CondCodegenCompleted,
			snap: codegen(Evidence{}), reason: "were not compared"},
		{name: "codegen completed: git failed", cond: CondCodegenCompleted,
			snap: codegen(Evidence{Agreement: &Agreement{Err: errors.New("git: signal: killed")}}), reason: "could not compare code/files/ with code/diff.patch: git: signal: killed"},
		{name: "codegen completed: plan edited", cond: CondCodegenCompleted,
			snap: codegen(Evidence{Gates: gatesUpTo(Codegen), Now: with(nowAll(), HashPlan, h("q")), Agreement: agreeing}), reason: "planning/planning.ai.json changed after"},

		// review: the review judged the current patch.
		{name: "review passes, unchanged", cond: CondReviewPasses, holds: true,
			snap: inReview(review(""), Evidence{Gates: gatesUpTo(Review), Now: nowAll()}), reason: "code review ok, no blocking issues"},
		{name: "review names the current patch", cond: CondReviewPasses, holds: true,
			snap: inReview(review(h("d")), Evidence{Gates: gatesUpTo(Review), Now: nowAll()})},
		{name: "review names another patch", cond: CondReviewPasses, invalid: true,
			snap:   inReview(review(h("0")), Evidence{Gates: gatesUpTo(Review), Now: nowAll()}),
			reason: "review/code-review.json: $.diff_sha256: expected the sha256 of code/diff.patch now, " + h("d") + ", got " + h("0") + ", the sha256 of another patch"},
		{name: "review of another patch is invalid going back too", cond: CondNeedsCodeChanges, invalid: true,
			snap: inReview(withSHA(ok(artifact.CodeReview{OK: false, DiffSHA256: h("0")}), h("r")), Evidence{Now: nowAll()}), reason: "another patch"},
		{name: "plan flawed reads the same check", cond: CondPlanFlawed, invalid: true,
			snap: inReview(review(h("0")), Evidence{Now: nowAll()}), reason: "another patch"},
		{name: "review names a patch that is gone", cond: CondReviewPasses, invalid: true,
			snap: inReview(review(h("0")), Evidence{Gates: gatesUpTo(Review), Now: with(nowAll(), HashDiff, "")}), reason: "which is missing"},
		{name: "review names the bound patch, which was then removed", cond: CondReviewPasses, invalid: true,
			snap: inReview(review(h("d")), Evidence{Gates: gatesUpTo(Review), Now: with(nowAll(), HashDiff, "")}), reason: "code/diff.patch changed after the codegen → review gate (transcript seq 5) recorded it: recorded sha256 " + h("d") + ", it is missing now"},
		{name: "patch edited after codegen, review silent", cond: CondReviewPasses, invalid: true,
			snap:   inReview(review(""), Evidence{Gates: gatesUpTo(Review), Now: with(nowAll(), HashDiff, h("e"))}),
			reason: "code/diff.patch changed after the codegen → review gate"},
		{name: "files edited after codegen, review silent", cond: CondReviewPasses, invalid: true,
			snap: inReview(review(""), Evidence{Gates: gatesUpTo(Review), Now: with(nowAll(), HashFiles, h("g"))}), reason: "code/files/ changed after the codegen → review gate"},
		{name: "patch changed and re-reviewed, files agree: bound afresh", cond: CondReviewPasses, holds: true,
			snap:   inReview(review(h("e")), Evidence{Gates: gatesUpTo(Review), Now: with(nowAll(), HashDiff, h("e")), Agreement: agreeing}),
			reason: "judged the current patch, which was changed since codegen"},
		{name: "patch changed and re-reviewed, files disagree", cond: CondReviewPasses, invalid: true,
			snap: inReview(review(h("e")), Evidence{Gates: gatesUpTo(Review), Now: with(nowAll(), HashDiff, h("e")), Agreement: &Agreement{Err: disagree}}), reason: "code/files/calc.go"},
		{name: "plan edited after plan review", cond: CondReviewPasses, invalid: true,
			snap: inReview(review(""), Evidence{Gates: gatesUpTo(Review), Now: with(nowAll(), HashPlan, h("q"))}), reason: "orch redo plan_review"},

		// test: the report is of the patch review → test bound.
		{name: "tests complete, report silent, patch unchanged", cond: CondTestsComplete, holds: true,
			snap: inTest(report(true, ""), with(nowAll(), HashReport, h("t"))), reason: "tests completed and passed"},
		{name: "tests complete, report names the patch", cond: CondTestsComplete, holds: true,
			snap: inTest(report(true, h("d")), nowAll())},
		{name: "report of another patch", cond: CondTestsComplete, invalid: true,
			snap: inTest(report(true, h("e")), nowAll()), reason: "test/report.json: $.diff_sha256"},
		{name: "report of the bound patch, then the patch edited", cond: CondTestsComplete, invalid: true,
			snap: inTest(report(true, h("d")), with(nowAll(), HashDiff, h("e"))), reason: "code/diff.patch changed after the review → test gate"},
		{name: "failing report of another patch", cond: CondTestsFailed, invalid: true,
			snap: inTest(report(false, h("e")), nowAll()), reason: "orch redo test"},
		{name: "patch edited after review → test, report silent", cond: CondTestsComplete, invalid: true,
			snap:   inTest(report(true, ""), with(nowAll(), HashDiff, h("e"))),
			reason: "evidence changed: code/diff.patch changed after the review → test gate (transcript seq 5) recorded it: recorded sha256 " + h("d") + ", now sha256 " + h("e")},
		{name: "patch edited and re-tested, not re-reviewed", cond: CondTestsComplete, invalid: true,
			snap: inTest(report(true, h("e")), with(nowAll(), HashDiff, h("e"))), reason: "orch redo review"},
		{name: "review edited after its gate", cond: CondTestsComplete, invalid: true,
			snap: inTest(report(true, ""), with(nowAll(), HashReview, h("s"))), reason: "review/code-review.json changed after the review → test gate"},
		{name: "a failing report going back needs no binding", cond: CondTestsFailed, holds: true,
			snap: inTest(report(false, ""), with(nowAll(), HashDiff, h("e")))},

		// accept: done only with the bytes the gates recorded.
		{name: "accepted, unchanged", cond: CondAccepted, holds: true, snap: accepted(nowAll())},
		{name: "accepted, patch edited", cond: CondAccepted, invalid: true, snap: accepted(with(nowAll(), HashDiff, h("e"))),
			reason: "code/diff.patch changed after the test → accept gate"},
		{name: "accepted, report edited", cond: CondAccepted, invalid: true, snap: accepted(with(nowAll(), HashReport, h("u"))),
			reason: "test/report.json changed after"},
		{name: "revert needs no binding", cond: CondRevertRequested, holds: true,
			snap: Snapshot{Decision: ok(artifact.Decision{Verdict: artifact.VerdictRevert}), Evidence: Evidence{Gates: gatesUpTo(Accept), Now: with(nowAll(), HashDiff, h("e"))}}},
		{name: "going back needs no binding", cond: CondChangesToReview, holds: true,
			snap: Snapshot{Decision: ok(artifact.Decision{Verdict: artifact.VerdictChangesRequested, Target: "review"}), Evidence: Evidence{Gates: gatesUpTo(Accept), Now: with(nowAll(), HashDiff, h("e"))}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Evaluate(tc.cond, tc.snap)
			if v.Holds != tc.holds {
				t.Errorf("holds = %v, want %v (reason %q)", v.Holds, tc.holds, v.Reason)
			}
			if (len(v.Invalid) > 0) != tc.invalid {
				t.Errorf("invalid = %v, want %v (reason %q)", v.Invalid, tc.invalid, v.Reason)
			}
			if !strings.Contains(v.Reason, tc.reason) {
				t.Errorf("reason %q\ndoes not say %q", v.Reason, tc.reason)
			}
		})
	}
}

func TestCheckCommit(t *testing.T) {
	snap := func(now map[string]string, r artifact.Loaded[artifact.CodeReview], rep artifact.Loaded[artifact.TestReport]) Snapshot {
		return Snapshot{CodeReview: r, TestReport: rep, Evidence: Evidence{Gates: gatesUpTo(Accept), Now: now}}
	}
	goodReview := ok(artifact.CodeReview{OK: true})
	goodReport := ok(artifact.TestReport{Status: artifact.TestCompleted, OverallPass: true})
	for _, tc := range []struct {
		name   string
		s      Snapshot
		patch  string
		wantIn string // "" means the commit may go ahead
		is     error
	}{
		{name: "the recorded bytes", s: snap(nowAll(), goodReview, goodReport), patch: h("d")},
		{name: "the file on disk does not matter, the bytes do", s: snap(with(nowAll(), HashDiff, h("x")), goodReview, goodReport), patch: h("d")},
		{name: "edited patch", s: snap(nowAll(), goodReview, goodReport), patch: h("e"),
			wantIn: "code/diff.patch changed after the test → accept gate (transcript seq 5) recorded it: recorded sha256 " + h("d") + ", now sha256 " + h("e")},
		{name: "edited files", s: snap(with(nowAll(), HashFiles, h("g")), goodReview, goodReport), patch: h("d"), wantIn: "code/files/ changed"},
		{name: "edited plan", s: snap(with(nowAll(), HashPlan, h("q")), goodReview, goodReport), patch: h("d"), wantIn: "planning/planning.ai.json changed"},
		{name: "review of another patch", s: snap(nowAll(), ok(artifact.CodeReview{OK: true, DiffSHA256: h("e")}), goodReport), patch: h("d"),
			wantIn: "review/code-review.json: $.diff_sha256"},
		{name: "report of another patch", s: snap(nowAll(), goodReview, ok(artifact.TestReport{Status: artifact.TestCompleted, DiffSHA256: h("e")})), patch: h("d"),
			wantIn: "test/report.json: $.diff_sha256"},
		{name: "no gate recorded a patch", s: Snapshot{Evidence: Evidence{Gates: Gates{}, Now: nowAll()}}, patch: h("d"),
			wantIn: "no such record in the transcript", is: ErrUnbound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckCommit(tc.s, tc.patch)
			if tc.wantIn == "" {
				if err != nil {
					t.Fatalf("got %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantIn) {
				t.Fatalf("got %v, want an error saying %q", err, tc.wantIn)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("%v is not %v", err, tc.is)
			}
		})
	}
}
