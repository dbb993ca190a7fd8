package lifecycle

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/patch"
)

// CondName names a transition condition. Names appear in `orch status`,
// the transcript and the docs.
type CondName string

// The named conditions of the table.
const (
	CondPlanReady              CondName = "plan_ready"
	CondRerun                  CondName = "rerun"
	CondPlanReviewBlocked      CondName = "plan_review_blocked"
	CondPlanReviewNeedsChanges CondName = "plan_review_needs_changes"
	CondPlanReviewOK           CondName = "plan_review_ok"
	CondPlanUnclear            CondName = "plan_unclear"
	CondScopeMismatch          CondName = "scope_mismatch"
	CondCodegenCompleted       CondName = "codegen_completed"
	CondPlanFlawed             CondName = "plan_flawed"
	CondNeedsCodeChanges       CondName = "needs_code_changes"
	CondReviewPasses           CondName = "review_passes"
	CondTestsFailed            CondName = "tests_failed"
	CondTestsComplete          CondName = "tests_complete"
	CondRevertRequested        CondName = "revert_requested"
	CondAccepted               CondName = "accepted"
	CondChangesToCodegen       CondName = "changes_requested_codegen"
	CondChangesToReview        CondName = "changes_requested_review"
	CondChangesToPlanning      CondName = "changes_requested_planning"
	CondRevertRecorded         CondName = "revert_recorded"

	// Requirements of forward edges (Edge.Requires).

	// CondNewPlan, CondNewPatch, CondNewReview: after a regression sent
	// the task back to planning, codegen or review, the plan, the patch
	// or the code review differs from the one that was judged.
	CondNewPlan   CondName = "new_plan"
	CondNewPatch  CondName = "new_patch"
	CondNewReview CondName = "new_review"
	// CondCommitted: orch's commit of exactly the judged change is in the
	// branch (found by its trailers).
	CondCommitted CondName = "committed"
)

// Snapshot is everything the orchestrator inspected on disk for one
// decision. Fields a phase does not need may be left zero (not present).
type Snapshot struct {
	Plan       artifact.Loaded[artifact.Plan]
	FilePlan   artifact.Loaded[artifact.FilePlan]
	PlanReview artifact.Loaded[artifact.PlanReview]
	Codegen    artifact.Loaded[artifact.Codegen]
	CodeFiles  artifact.Loaded[[]string]
	Diff       artifact.Loaded[patch.Diff]
	CodeReview artifact.Loaded[artifact.CodeReview]
	TestReport artifact.Loaded[artifact.TestReport]
	Decision   artifact.Loaded[artifact.Decision]
	Revert     artifact.Loaded[artifact.RevertRecord]
	// Evidence holds what the gates recorded and the hashes now
	// (README, "Evidence is bound to the change").
	Evidence Evidence
}

// Verdict is the outcome of one condition.
type Verdict struct {
	Holds  bool
	Reason string
	// Invalid lists the artifacts found present but invalid while
	// evaluating the condition.
	Invalid []error
}

func holds(format string, args ...any) Verdict {
	return Verdict{Holds: true, Reason: fmt.Sprintf(format, args...)}
}

func fails(format string, args ...any) Verdict {
	return Verdict{Reason: fmt.Sprintf(format, args...)}
}

// need reports why a loaded artifact cannot be used, or "" when it is OK.
func need[T any](l artifact.Loaded[T], file string, v *Verdict) bool {
	switch {
	case !l.Present:
		v.Reason = file + " is missing"
		return false
	case l.Err != nil:
		v.Reason = "invalid artifact: " + l.Err.Error()
		v.Invalid = append(v.Invalid, l.Err)
		return false
	}
	return true
}

// Evaluate computes the named condition over the snapshot.
func Evaluate(c CondName, s Snapshot) Verdict {
	switch c {
	case CondPlanReady:
		return planReady(s)
	case CondPlanReviewBlocked:
		return planReviewBlocked(s)
	case CondPlanReviewNeedsChanges:
		return planReviewNeedsChanges(s)
	case CondPlanReviewOK:
		return planReviewOK(s)
	case CondPlanUnclear:
		return planUnclear(s)
	case CondScopeMismatch:
		return scopeMismatch(s)
	case CondCodegenCompleted:
		return codegenCompleted(s)
	case CondPlanFlawed:
		return planFlawed(s)
	case CondNeedsCodeChanges:
		return needsCodeChanges(s)
	case CondReviewPasses:
		return reviewPasses(s)
	case CondTestsFailed:
		return testsFailed(s)
	case CondTestsComplete:
		return testsComplete(s)
	case CondRevertRequested:
		return revertRequested(s)
	case CondAccepted:
		return accepted(s)
	case CondChangesToCodegen:
		return changesRequested(s, Codegen)
	case CondChangesToReview:
		return changesRequested(s, Review)
	case CondChangesToPlanning:
		return changesRequested(s, Planning)
	case CondRevertRecorded:
		return revertRecorded(s)
	case CondNewPlan:
		return newOutput(s, Planning)
	case CondNewPatch:
		return newOutput(s, Codegen)
	case CondNewReview:
		return newOutput(s, Review)
	case CondCommitted:
		return committedChange(s)
	case CondRerun:
		return fails("re-run of the phase: use the phase command or `orch redo`, not `orch next`")
	}
	return fails("unknown condition %q", c)
}

func planReady(s Snapshot) Verdict {
	var v Verdict
	if !need(s.Plan, artifact.PlanFile, &v) {
		return v
	}
	if open := s.Plan.Value.OpenQuestions(); len(open) > 0 {
		ids := make([]string, len(open))
		for i, q := range open {
			ids[i] = q.ID
		}
		return fails("%d open blocking question(s): %s (answer them in %s)", len(open), strings.Join(ids, ", "), artifact.PlanFile)
	}
	if !s.FilePlan.Present && s.FilePlan.Err == nil {
		return fails("no file plan: %s is missing and %s has no file_plan", artifact.FilePlanFile, artifact.PlanFile)
	}
	if !need(s.FilePlan, artifact.FilePlanFile, &v) {
		return v
	}
	if len(s.FilePlan.Value.Files) == 0 {
		return fails("the file plan is empty: list at least one file in %s", filePlanSource(s))
	}
	return holds("plan valid, no open question, file plan lists %d file(s)", len(s.FilePlan.Value.Files))
}

func filePlanSource(s Snapshot) string {
	if s.FilePlan.Value.Inferred {
		return artifact.PlanFile + " file_plan"
	}
	return artifact.FilePlanFile
}

// planStale reports why the plan under review no longer matches the
// reviewed one, or "".
func planStale(s Snapshot) (string, []error) {
	switch {
	case !s.Plan.Present:
		return artifact.PlanFile + " is missing", nil
	case s.Plan.Err != nil:
		return "the plan under review is invalid: " + s.Plan.Err.Error(), []error{s.Plan.Err}
	}
	if open := s.Plan.Value.OpenQuestions(); len(open) > 0 {
		return fmt.Sprintf("the plan under review has %d open blocking question(s)", len(open)), nil
	}
	if s.PlanReview.OK() && s.PlanReview.Value.PlanSHA256 != "" && s.Plan.SHA256 != "" &&
		!strings.EqualFold(s.PlanReview.Value.PlanSHA256, s.Plan.SHA256) {
		return fmt.Sprintf("the plan changed after review (reviewed sha256 %.12s…, now %.12s…)",
			s.PlanReview.Value.PlanSHA256, s.Plan.SHA256), nil
	}
	return "", nil
}

func planReviewBlocked(s Snapshot) Verdict {
	var v Verdict
	if !need(s.PlanReview, artifact.PlanReviewFile, &v) {
		return v
	}
	r := s.PlanReview.Value
	if r.Blocked {
		return holds("plan review is blocked")
	}
	if b := r.BlockingReviewers(); len(b) > 0 {
		return holds("reviewer(s) %s not ok with severity blocking", reviewerIDs(b))
	}
	return fails("plan review not blocked, no blocking reviewer")
}

func planReviewNeedsChanges(s Snapshot) Verdict {
	if s.PlanReview.OK() && !s.PlanReview.Value.OK {
		return holds("plan review says ok: false (changes requested)")
	}
	// A plan that changed, broke or reopened a question since the review
	// goes back to planning, whatever the review says.
	if why, inv := planStale(s); why != "" {
		return Verdict{Holds: true, Reason: why, Invalid: inv}
	}
	var v Verdict
	if !need(s.PlanReview, artifact.PlanReviewFile, &v) {
		return v
	}
	return fails("plan review ok and the plan is unchanged since")
}

func planReviewOK(s Snapshot) Verdict {
	var v Verdict
	if !need(s.PlanReview, artifact.PlanReviewFile, &v) {
		return v
	}
	r := s.PlanReview.Value
	switch {
	case !r.OK:
		return fails("plan review says ok: false")
	case r.Blocked:
		return fails("plan review is blocked")
	case len(r.BlockingReviewers()) > 0:
		return fails("reviewer(s) %s block", reviewerIDs(r.BlockingReviewers()))
	}
	if why, inv := planStale(s); why != "" {
		return Verdict{Reason: why, Invalid: inv}
	}
	return holds("plan review ok, not blocked, no blocking reviewer")
}

func reviewerIDs(rs []artifact.Reviewer) string {
	ids := make([]string, len(rs))
	for i, r := range rs {
		ids[i] = r.ID
	}
	return strings.Join(ids, ", ")
}

func planUnclear(s Snapshot) Verdict {
	if s.Codegen.OK() && s.Codegen.Value.Status == artifact.CodegenPlanUnclear {
		return holds("%s status is plan_unclear", artifact.CodegenFile)
	}
	// Codegen works from exactly the reviewed plan: a plan edited since
	// goes back to plan review.
	var ee *EvidenceError
	if errors.As(s.Evidence.Changed(HashPlan), &ee) {
		return holds("%s changed after the %s gate (recorded sha256 %.12s…, now %s): it goes back to plan review",
			artifact.PlanFile, ee.Bound.Edge(), ee.Bound.SHA256, shortOr(ee.Now, "missing"))
	}
	switch {
	case s.FilePlan.Err != nil:
		return Verdict{Holds: true, Reason: "the file plan is invalid: " + s.FilePlan.Err.Error(), Invalid: []error{s.FilePlan.Err}}
	case !s.FilePlan.Present:
		return holds("the file plan is missing")
	case len(s.FilePlan.Value.Files) == 0:
		return holds("the file plan is empty")
	}
	return fails("file plan present (%d files) and codegen did not report plan_unclear", len(s.FilePlan.Value.Files))
}

func scopeMismatch(s Snapshot) Verdict {
	if !s.FilePlan.OK() {
		return fails("no valid file plan to compare against")
	}
	// The planned paths as a set (FilePlan.Paths' map of whole entries
	// is four times the memory, on every status of a big task).
	planned := make(map[string]struct{}, len(s.FilePlan.Value.Files))
	for _, f := range s.FilePlan.Value.Files {
		planned[f.Path] = struct{}{}
	}
	var outside []string
	var inv []error
	if s.CodeFiles.OK() {
		for _, p := range s.CodeFiles.Value {
			if _, ok := planned[p]; !ok {
				outside = append(outside, p)
			}
		}
	} else if s.CodeFiles.Err != nil {
		inv = append(inv, s.CodeFiles.Err)
	}
	if s.Diff.OK() {
		for _, f := range s.Diff.Value.Files {
			for _, p := range []string{f.OldPath, f.NewPath} {
				if _, ok := planned[p]; p != "" && !ok {
					outside = append(outside, p)
				}
			}
		}
	} else if s.Diff.Err != nil {
		inv = append(inv, s.Diff.Err)
	}
	slices.Sort(outside)
	outside = slices.Compact(outside)
	if len(outside) > 0 {
		return Verdict{Holds: true, Invalid: inv, Reason: fmt.Sprintf("%d path(s) outside the file plan: %s", len(outside), listSome(outside, 5))}
	}
	return Verdict{Invalid: inv, Reason: "every generated path is in the file plan"}
}

func codegenCompleted(s Snapshot) Verdict {
	var v Verdict
	if s.Codegen.Err != nil {
		return Verdict{Reason: "invalid artifact: " + s.Codegen.Err.Error(), Invalid: []error{s.Codegen.Err}}
	}
	if s.Codegen.OK() && s.Codegen.Value.Status != artifact.CodegenCompleted {
		return fails("%s status is %s", artifact.CodegenFile, s.Codegen.Value.Status)
	}
	if !need(s.Diff, artifact.DiffFile, &v) {
		return v
	}
	if len(s.Diff.Value.Files) == 0 {
		return fails("%s is empty", artifact.DiffFile)
	}
	onlyDeletes := s.FilePlan.OK() && s.FilePlan.Value.OnlyDeletes()
	switch {
	case s.CodeFiles.Err != nil:
		return Verdict{Reason: "invalid artifact: " + s.CodeFiles.Err.Error(), Invalid: []error{s.CodeFiles.Err}}
	case (!s.CodeFiles.Present || len(s.CodeFiles.Value) == 0) && !onlyDeletes:
		return fails("%s/ holds no file", artifact.CodeFilesDir)
	}
	if err := s.Evidence.Changed(HashPlan); err != nil {
		return fails("%v", err)
	}
	if v, ok := agreement(s); !ok {
		return v
	}
	return holds("%s parses (%d file(s)) and applied to the base gives exactly %s/ (%d file(s))", artifact.DiffFile, len(s.Diff.Value.Files), artifact.CodeFilesDir, len(s.CodeFiles.Value))
}

// agreement checks the comparison of code/files/ with code/diff.patch
// applied to the base: a disagreement is an invalid artifact naming the
// first path; a comparison that was not or could not be made does not
// hold.
func agreement(s Snapshot) (Verdict, bool) {
	a := s.Evidence.Agreement
	var ae *artifact.Error
	switch {
	case a == nil:
		return fails("%s/ and %s were not compared", artifact.CodeFilesDir, artifact.DiffFile), false
	case a.Err == nil:
		return Verdict{}, true
	case errors.As(a.Err, &ae):
		return Verdict{Reason: "invalid artifact: " + a.Err.Error(), Invalid: []error{a.Err}}, false
	}
	return fails("could not compare %s/ with %s: %v", artifact.CodeFilesDir, artifact.DiffFile, a.Err), false
}

// codeReview is the code review, or, with false, the verdict that does not
// hold saying why there is none to use: it is missing, invalid, or names
// (diff_sha256) another patch than the current one.
func codeReview(s Snapshot) (artifact.CodeReview, Verdict, bool) {
	var v Verdict
	if !need(s.CodeReview, artifact.CodeReviewFile, &v) ||
		!judgedCurrent(s, artifact.CodeReviewFile, s.CodeReview.Value.DiffSHA256,
			"the review judged another patch: review the current one (`orch redo review`, then `orch review code`) or restore code/diff.patch", &v) {
		return artifact.CodeReview{}, v, false
	}
	return s.CodeReview.Value, Verdict{}, true
}

// needTestReport is need for the test report, which is also invalid when it
// names (diff_sha256) another patch than the current one.
func needTestReport(s Snapshot, v *Verdict) bool {
	return need(s.TestReport, artifact.TestReportFile, v) &&
		judgedCurrent(s, artifact.TestReportFile, s.TestReport.Value.DiffSHA256,
			"the tests ran on another patch: run them on the current one (`orch redo test`, then `orch test`) or restore code/diff.patch", v)
}

// judgedCurrent reports whether file, which names (diffSHA) the patch it
// judged, judged the current patch; otherwise v says why not, with file as
// an invalid artifact, and do says what to do.
func judgedCurrent(s Snapshot, file, diffSHA, do string, v *Verdict) bool {
	if err := s.Evidence.judged(file, diffSHA, do); err != nil {
		v.Reason, v.Invalid = "invalid artifact: "+err.Error(), append(v.Invalid, err)
		return false
	}
	return true
}

// completedTestReport is the test report of a run that completed, or, with
// false, the verdict that does not hold saying why there is none.
func completedTestReport(s Snapshot) (artifact.TestReport, Verdict, bool) {
	var v Verdict
	if !needTestReport(s, &v) {
		return artifact.TestReport{}, v, false
	}
	r := s.TestReport.Value
	if r.Status != artifact.TestCompleted {
		return r, fails("test report status is %s%s", r.Status, errSuffix(r.Error)), false
	}
	return r, Verdict{}, true
}

// unchanged is a verdict that does not hold, with the change as an invalid
// artifact, when an artifact differs from what the gates bound.
func unchanged(s Snapshot, keys ...string) (Verdict, bool) {
	if err := s.Evidence.Changed(keys...); err != nil {
		return Verdict{Reason: "evidence changed: " + err.Error(), Invalid: []error{err}}, false
	}
	return Verdict{}, true
}

func shortOr(sum, missing string) string {
	if sum == "" {
		return missing
	}
	if len(sum) > 12 {
		return sum[:12] + "…"
	}
	return sum
}

func planFlawed(s Snapshot) Verdict {
	r, v, ok := codeReview(s)
	if !ok {
		return v
	}
	for _, is := range r.BlockingIssues() {
		if is.Kind == "plan" {
			return holds("blocking issue of kind plan: %s", is.Message)
		}
	}
	return fails("no blocking issue of kind plan")
}

func needsCodeChanges(s Snapshot) Verdict {
	r, v, ok := codeReview(s)
	if !ok {
		return v
	}
	if b := r.BlockingIssues(); len(b) > 0 {
		return holds("%d blocking issue(s), first: %s", len(b), b[0].Message)
	}
	if !r.OK {
		return holds("code review says ok: false")
	}
	return fails("code review ok, no blocking issue")
}

func reviewPasses(s Snapshot) Verdict {
	r, v, ok := codeReview(s)
	if !ok {
		return v
	}
	if !r.OK {
		return fails("code review says ok: false")
	}
	if b := r.BlockingIssues(); len(b) > 0 {
		return fails("%d blocking issue(s)", len(b))
	}
	if v, ok := unchanged(s, HashPlan); !ok {
		return v
	}
	// The change must be the one codegen → review bound. A change made
	// since passes only when the review names it (diff_sha256) and the
	// files agree with it again: then this gate binds it afresh.
	if err := s.Evidence.Changed(HashFiles, HashDiff); err != nil {
		if r.DiffSHA256 == "" {
			return Verdict{Reason: "evidence changed: " + err.Error(), Invalid: []error{err}}
		}
		if v, ok := agreement(s); !ok {
			return v
		}
		return holds("code review ok, no blocking issues; it judged the current patch, which was changed since codegen and agrees with %s/", artifact.CodeFilesDir)
	}
	return holds("code review ok, no blocking issues")
}

func testsFailed(s Snapshot) Verdict {
	r, v, ok := completedTestReport(s)
	if !ok {
		return v
	}
	if !r.OverallPass {
		return holds("tests completed and failed: %s", r.Summary)
	}
	return fails("tests completed and passed")
}

func testsComplete(s Snapshot) Verdict {
	r, v, ok := completedTestReport(s)
	if !ok {
		return v
	}
	// A report without diff_sha256 is judged against the patch review →
	// test bound: the patch must still be that one.
	if v, ok := unchanged(s, HashKeys()...); !ok {
		return v
	}
	if r.OverallPass {
		return holds("tests completed and passed: %d passed", r.Summary.Passed)
	}
	return holds("tests completed (with failures: valid, not suggested)")
}

func errSuffix(e string) string {
	if e == "" {
		return ""
	}
	return ": " + e
}

func revertRequested(s Snapshot) Verdict {
	var v Verdict
	if !need(s.Decision, artifact.DecisionFile, &v) {
		return v
	}
	d := s.Decision.Value
	switch {
	case d.Regression:
		return holds("a regression was found after applying the change")
	case d.Verdict == artifact.VerdictRevert || d.Verdict == artifact.VerdictRejected:
		return holds("decision verdict is %s", d.Verdict)
	}
	return fails("decision verdict is %s, no regression", d.Verdict)
}

func accepted(s Snapshot) Verdict {
	var v Verdict
	if !need(s.Decision, artifact.DecisionFile, &v) {
		return v
	}
	d := s.Decision.Value
	if d.Verdict != artifact.VerdictAccepted {
		return fails("decision verdict is %s", d.Verdict)
	}
	if d.Regression {
		return fails("accepted, but a regression was found")
	}
	if v, ok := unchanged(s, HashKeys()...); !ok {
		return v
	}
	return holds("decision verdict is accepted")
}

func changesRequested(s Snapshot, target Phase) Verdict {
	var v Verdict
	if !need(s.Decision, artifact.DecisionFile, &v) {
		return v
	}
	d := s.Decision.Value
	if d.Verdict != artifact.VerdictChangesRequested {
		return fails("decision verdict is %s", d.Verdict)
	}
	if Phase(d.Target) != target {
		return fails("changes requested with target %s", d.Target)
	}
	return holds("changes requested with target %s", target)
}

func revertRecorded(s Snapshot) Verdict {
	var v Verdict
	if !need(s.Revert, artifact.RevertRecordFile, &v) {
		return v
	}
	return holds("revert recorded: %s", s.Revert.Value.Status)
}

func listSome(xs []string, n int) string {
	if len(xs) <= n {
		return strings.Join(xs, ", ")
	}
	return strings.Join(xs[:n], ", ") + fmt.Sprintf(" and %d more", len(xs)-n)
}

// newOutput holds unless a regression sent the task back to phase p and
// p's output (OutputKey) is still the one that was judged: re-taking the
// forward edge with it would only loop. An override (with its reason) is
// the way past it.
func newOutput(s Snapshot, p Phase) Verdict {
	key := OutputKey(p)
	b, ok := s.Evidence.SentBack[key]
	if !ok {
		return Verdict{Holds: true} // no regression waits for a new one: nothing to say
	}
	now := s.Evidence.Now[key]
	if now == "" || !strings.EqualFold(now, b.SHA256) {
		return holds("%s changed since %s sent it back", HashFile(key), b.Edge())
	}
	return fails("%s is the one %s sent back (sha256 %s, transcript seq %d): change it (`orch %s`), or move on anyway with `orch next --override REASON`",
		HashFile(key), b.Edge(), shortOr(b.SHA256, ""), b.Seq, PhaseCommand(p))
}

// PhaseCommand is the orch command that does phase p's work ("plan",
// "codegen", "review code", …), without the leading "orch".
func PhaseCommand(p Phase) string {
	switch p {
	case Planning:
		return "plan"
	case PlanReview:
		return "review plan"
	case Codegen:
		return "codegen"
	case Review:
		return "review code"
	case Test:
		return "test"
	case Accept:
		return "accept"
	case Revert:
		return "revert"
	}
	return "next"
}

// committedChange holds when orch's commit of the judged change is in the
// branch: a commit carrying the trailer Orch-Task with the task's id (and
// not undone by a revert commit of the task) whose Orch-Diff trailer is
// the sha256 of the patch the gates recorded. A commit without Orch-Diff
// (made before orch wrote it) counts when accept/decision.json names it.
func committedChange(s Snapshot) Verdict {
	l := s.Evidence.Landed
	switch {
	case l == nil:
		return fails("orch's commit of the change was not looked for")
	case l.Err != nil:
		return fails("could not look for orch's commit of the change: %v", l.Err)
	case l.SHA == "":
		return fails("nothing is committed: no commit with the trailer Orch-Task of this task is in the branch; `orch accept` applies %s and commits the change", artifact.DecisionFile)
	}
	want := s.Evidence.Now[HashDiff]
	if b, ok := s.Evidence.Gates[HashDiff]; ok && b.SHA256 != "" {
		want = b.SHA256
	}
	if l.DiffSHA256 == "" {
		if s.Decision.OK() && s.Decision.Value.Commit != "" && strings.HasPrefix(l.SHA, s.Decision.Value.Commit) {
			return holds("orch committed the change as %.12s (%s names it)", l.SHA, artifact.DecisionFile)
		}
		return fails("commit %.12s of this task names no Orch-Diff and %s does not name it: `orch accept` commits the judged change", l.SHA, artifact.DecisionFile)
	}
	if !strings.EqualFold(l.DiffSHA256, want) {
		return fails("commit %.12s is of another change (Orch-Diff %s), not of the judged patch (sha256 %s): `orch accept` commits the judged one",
			l.SHA, shortOr(l.DiffSHA256, ""), shortOr(want, "missing"))
	}
	return holds("orch committed the judged change as %.12s", l.SHA)
}
