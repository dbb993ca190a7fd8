package artifact

import (
	"slices"
	"strconv"

	"github.com/orchdev/orch/internal/safepath"
	"github.com/orchdev/orch/internal/strictjson"
)

// Allowed values of the enumerated fields.
var (
	intents         = []string{"create", "update", "delete"}
	severities      = []string{SeverityInfo, SeverityMinor, SeverityMajor, SeverityBlocking}
	issueKinds      = []string{"code", "plan", "test", "security", "style"}
	codegenStatuses = []string{CodegenCompleted, CodegenPlanUnclear, CodegenFailed}
	reportStatuses  = []string{TestRunning, TestCompleted, TestError, TestNoTests}
	suiteKinds      = []string{"test", "lint"}
	verdicts        = []string{VerdictAccepted, VerdictChangesRequested, VerdictRejected, VerdictRevert}
	targets         = []string{"codegen", "review", "planning"}
	deciderKinds    = []string{"human", "agent"}
	revertStatuses  = []string{RevertReverted, RevertNothingToRevert, RevertPartial}
)

// Verdicts are the verdicts of accept/decision.json, in the order the
// docs list them (accepted, changes_requested, rejected, revert).
func Verdicts() []string { return slices.Clone(verdicts) }

// Targets are the phases a changes_requested decision may send the task
// back to (codegen, review, planning).
func Targets() []string { return slices.Clone(targets) }

// begin parses data and returns the checker and the root object.
func begin(file string, data []byte) (*checker, val, error) {
	root, err := parseDocument(file, data)
	if err != nil {
		return nil, val{}, err
	}
	return &checker{file: file}, val{n: root}, nil
}

// DecodePlan validates and decodes planning/planning.ai.json. file is the
// task-relative name used in errors.
func DecodePlan(file string, data []byte) (Plan, error) {
	c, root, err := begin(file, data)
	if err != nil {
		return Plan{}, err
	}
	var p Plan
	p.ID = c.str(root.field("id"), true)
	p.Title = c.str(root.field("title"), true)
	p.Brief = c.str(root.field("brief"), true)
	p.Goals = c.rawArray(root.field("goals"), false)
	if s := root.field("scope"); c.object(s, false) {
		p.Scope = &Scope{
			InScope:    c.stringArray(s.field("in_scope"), false),
			OutOfScope: c.stringArray(s.field("out_of_scope"), false),
		}
	}
	if w := root.field("work"); c.object(w, false) {
		p.Work = &Work{Tasks: c.rawArray(w.field("tasks"), false)}
	}
	p.Risks = c.rawArray(root.field("risks"), false)
	p.Assumptions = c.rawArray(root.field("assumptions"), false)
	p.AcceptanceCriteria = c.rawArray(root.field("acceptance_criteria"), false)
	p.TestPlan = c.rawObject(root.field("test_plan"))
	p.FilePlan = c.fileEntries(root.field("file_plan"), false)
	for _, q := range c.array(root.field("questions"), false) {
		if !c.object(q, true) {
			break
		}
		p.Questions = append(p.Questions, Question{
			ID:       c.str(q.field("id"), true),
			Text:     c.str(q.field("text"), true),
			Blocking: c.boolean(q.field("blocking"), true),
			Answer:   c.nullableStr(q.field("answer")),
		})
	}
	if c.err != nil {
		return Plan{}, c.err
	}
	return p, nil
}

// fileEntries validates a file plan list: each entry an object with a safe
// path, unique even ignoring case (codegen cannot write both "a.go" and
// "A.go": a case-insensitive file system holds one file for both), and a
// known intent.
func (c *checker) fileEntries(v val, required bool) []FileEntry {
	elems := c.array(v, required)
	var out []FileEntry
	seen := make(map[string]int, len(elems))
	folded := make(map[string]int, len(elems))
	for i, e := range elems {
		if !c.object(e, true) {
			return nil
		}
		pv := e.field("path")
		f := FileEntry{
			Path:    c.safePath(pv),
			Intent:  c.enum(e.field("intent"), true, intents...),
			Summary: c.str(e.field("summary"), false),
		}
		if c.err != nil {
			return nil
		}
		if j, dup := seen[f.Path]; dup {
			c.fail(pv, "unique paths", strconv.Quote(f.Path)+" at indexes "+strconv.Itoa(j)+" and "+strconv.Itoa(i)+
				" (also "+strictjson.FormatPath(v.index(j).field("path").path)+")")
			return nil
		}
		if j, dup := folded[safepath.FoldCase(f.Path)]; dup {
			c.fail(pv, "paths that differ in more than case", caseCollision(f.Path, out[j].Path, i, j, strictjson.FormatPath(v.index(j).field("path").path)))
			return nil
		}
		seen[f.Path] = i
		folded[safepath.FoldCase(f.Path)] = i
		out = append(out, f)
	}
	return out
}

// DecodeFilePlan validates and decodes planning/plan.files.json.
func DecodeFilePlan(file string, data []byte) (FilePlan, error) {
	c, root, err := begin(file, data)
	if err != nil {
		return FilePlan{}, err
	}
	fp := FilePlan{Files: c.fileEntries(root.field("files"), true)}
	if c.err != nil {
		return FilePlan{}, c.err
	}
	if fp.Files == nil {
		fp.Files = []FileEntry{}
	}
	return fp, nil
}

// DecodePlanReview validates and decodes review/plan-review.json.
func DecodePlanReview(file string, data []byte) (PlanReview, error) {
	c, root, err := begin(file, data)
	if err != nil {
		return PlanReview{}, err
	}
	r := PlanReview{
		OK:      c.boolean(root.field("ok"), true),
		Blocked: c.boolean(root.field("blocked"), true),
	}
	reviewers := c.array(root.field("reviewers"), true)
	r.Reviewers = make([]Reviewer, 0, len(reviewers))
	for _, rv := range reviewers {
		if !c.object(rv, true) {
			break
		}
		r.Reviewers = append(r.Reviewers, Reviewer{
			ID:             c.str(rv.field("id"), true),
			OK:             c.boolean(rv.field("ok"), true),
			Severity:       c.enum(rv.field("severity"), false, severities...),
			Decision:       c.raw(rv.field("decision")),
			BlockingIssues: c.rawArray(rv.field("blocking_issues"), false),
			Suggestions:    c.rawArray(rv.field("suggestions"), false),
		})
	}
	r.PlanSHA256 = c.hexString(root.field("plan_sha256"), false, "a sha256", 64)
	if c.err != nil {
		return PlanReview{}, c.err
	}
	return r, nil
}

// DecodeCodegen validates and decodes code/codegen.json. Base is returned
// lower-cased.
func DecodeCodegen(file string, data []byte) (Codegen, error) {
	c, root, err := begin(file, data)
	if err != nil {
		return Codegen{}, err
	}
	g := Codegen{
		Status:    c.enum(root.field("status"), true, codegenStatuses...),
		Base:      c.hexString(root.field("base"), true, "a git commit id", 40, 64),
		Questions: c.rawArray(root.field("questions"), false),
	}
	if c.err != nil {
		return Codegen{}, c.err
	}
	return g, nil
}

// DecodeCodeReview validates and decodes review/code-review.json.
func DecodeCodeReview(file string, data []byte) (CodeReview, error) {
	c, root, err := begin(file, data)
	if err != nil {
		return CodeReview{}, err
	}
	r := CodeReview{OK: c.boolean(root.field("ok"), true)}
	issues := c.array(root.field("issues"), true)
	r.Issues = make([]Issue, 0, len(issues))
	for _, is := range issues {
		if !c.object(is, true) {
			break
		}
		r.Issues = append(r.Issues, Issue{
			Severity: c.enum(is.field("severity"), true, severities...),
			Kind:     c.enum(is.field("kind"), false, issueKinds...),
			File:     c.str(is.field("file"), false),
			Line:     c.integer(is.field("line"), false, 0),
			Message:  c.str(is.field("message"), true),
		})
	}
	r.Reviewers = c.rawArray(root.field("reviewers"), false)
	r.DiffSHA256 = c.hexString(root.field("diff_sha256"), false, "a sha256", 64)
	if c.err != nil {
		return CodeReview{}, c.err
	}
	return r, nil
}

// summary validates a {passed, failed, skipped, error} object of
// non-negative integer counts.
func (c *checker) summary(v val) Summary {
	if !c.object(v, true) {
		return Summary{}
	}
	return Summary{
		Passed:  c.integer(v.field("passed"), true, 0),
		Failed:  c.integer(v.field("failed"), true, 0),
		Skipped: c.integer(v.field("skipped"), true, 0),
		Error:   c.integer(v.field("error"), true, 0),
	}
}

// DecodeTestReport validates and decodes test/report.json. Test cases are
// optional; when present each must be an object whose known fields have
// the types of Case.
func DecodeTestReport(file string, data []byte) (TestReport, error) {
	c, root, err := begin(file, data)
	if err != nil {
		return TestReport{}, err
	}
	r := TestReport{
		Status:      c.enum(root.field("status"), true, reportStatuses...),
		OverallPass: c.boolean(root.field("overall_pass"), true),
		Summary:     c.summary(root.field("summary")),
	}
	suites := c.array(root.field("suites"), true)
	r.Suites = make([]Suite, 0, len(suites))
	for _, sv := range suites {
		if !c.object(sv, true) {
			break
		}
		s := Suite{
			ID:          c.str(sv.field("id"), true),
			Kind:        c.enum(sv.field("kind"), true, suiteKinds...),
			Command:     c.str(sv.field("command"), true),
			ExitCode:    c.integer(sv.field("exit_code"), true, minInt),
			OverallPass: c.boolean(sv.field("overall_pass"), true),
			Summary:     c.summary(sv.field("summary")),
			Log:         c.str(sv.field("log"), false),
			JudgedBy:    c.str(sv.field("judged_by"), false),
		}
		for _, cv := range c.array(sv.field("cases"), false) {
			if !c.object(cv, true) {
				break
			}
			s.Cases = append(s.Cases, Case{
				Name:    c.str(cv.field("name"), false),
				Package: c.str(cv.field("package"), false),
				Status:  c.str(cv.field("status"), false),
				Elapsed: c.number(cv.field("elapsed"), false),
				Output:  c.str(cv.field("output"), false),
				Message: c.str(cv.field("message"), false),
			})
		}
		r.Suites = append(r.Suites, s)
	}
	r.Error = c.str(root.field("error"), false)
	r.DiffSHA256 = c.hexString(root.field("diff_sha256"), false, "a sha256", 64)
	if c.err != nil {
		return TestReport{}, c.err
	}
	return r, nil
}

// minInt is the smallest integer accepted where negative values are fine.
const minInt = -1 << 31

// DecodeDecision validates and decodes accept/decision.json.
func DecodeDecision(file string, data []byte) (Decision, error) {
	c, root, err := begin(file, data)
	if err != nil {
		return Decision{}, err
	}
	d := Decision{Verdict: c.enum(root.field("verdict"), true, verdicts...)}
	d.Target = c.enum(root.field("target"), d.Verdict == VerdictChangesRequested, targets...)
	rv := root.field("reasons")
	d.Reasons = c.stringArray(rv, true)
	if c.err == nil && !anyNonBlank(d.Reasons) {
		got := "an empty array"
		if len(d.Reasons) > 0 {
			got = "only blank strings"
		}
		c.fail(rv, "at least one non-blank reason", got)
	}
	if dv := root.field("decider"); c.object(dv, true) {
		d.Decider = Decider{
			Kind: c.enum(dv.field("kind"), true, deciderKinds...),
			Name: c.str(dv.field("name"), false),
		}
	}
	d.Commit = c.str(root.field("commit"), false)
	d.Base = c.str(root.field("base"), false)
	d.Regression = c.boolean(root.field("regression"), false)
	if c.err != nil {
		return Decision{}, c.err
	}
	return d, nil
}

func anyNonBlank(ss []string) bool {
	for _, s := range ss {
		if !isBlank(s) {
			return true
		}
	}
	return false
}

// DecodeRevertRecord validates and decodes revert/record.json.
func DecodeRevertRecord(file string, data []byte) (RevertRecord, error) {
	c, root, err := begin(file, data)
	if err != nil {
		return RevertRecord{}, err
	}
	r := RevertRecord{
		Reason:         c.str(root.field("reason"), true),
		Status:         c.enum(root.field("status"), true, revertStatuses...),
		RevertedCommit: c.str(root.field("reverted_commit"), false),
		RevertCommit:   c.str(root.field("revert_commit"), false),
		Conflicts:      c.stringArray(root.field("conflicts"), false),
	}
	if c.err != nil {
		return RevertRecord{}, c.err
	}
	return r, nil
}
