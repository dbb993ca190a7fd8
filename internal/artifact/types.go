package artifact

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// Severity levels used by reviewers.
const (
	SeverityInfo     = "info"
	SeverityMinor    = "minor"
	SeverityMajor    = "major"
	SeverityBlocking = "blocking"
)

// Question is one clarifying question of the planner.
// It is open when Blocking is true and Answer is missing, null or blank.
type Question struct {
	ID       string  `json:"id"`
	Text     string  `json:"text"`
	Blocking bool    `json:"blocking"`
	Answer   *string `json:"answer"`
}

// Open reports whether the question still blocks planning.
func (q Question) Open() bool {
	return q.Blocking && (q.Answer == nil || isBlank(*q.Answer))
}

// FileEntry is one planned file change.
type FileEntry struct {
	Path    string `json:"path"`
	Intent  string `json:"intent"` // create, update or delete
	Summary string `json:"summary,omitempty"`
}

// Scope lists what is in and out of the plan's scope.
type Scope struct {
	InScope    []string `json:"in_scope,omitempty"`
	OutOfScope []string `json:"out_of_scope,omitempty"`
}

// Work holds the plan's work breakdown.
type Work struct {
	Tasks []json.RawMessage `json:"tasks,omitempty"`
}

// Plan is planning/planning.ai.json, the structured plan.
type Plan struct {
	ID                 string            `json:"id"`
	Title              string            `json:"title"`
	Brief              string            `json:"brief"`
	Goals              []json.RawMessage `json:"goals,omitempty"`
	Scope              *Scope            `json:"scope,omitempty"`
	Work               *Work             `json:"work,omitempty"`
	Risks              []json.RawMessage `json:"risks,omitempty"`
	Assumptions        []json.RawMessage `json:"assumptions,omitempty"`
	AcceptanceCriteria []json.RawMessage `json:"acceptance_criteria,omitempty"`
	TestPlan           json.RawMessage   `json:"test_plan,omitempty"`
	FilePlan           []FileEntry       `json:"file_plan,omitempty"`
	Questions          []Question        `json:"questions,omitempty"`
}

// OpenQuestions returns the questions that still block planning.
func (p *Plan) OpenQuestions() []Question {
	var open []Question
	for _, q := range p.Questions {
		if q.Open() {
			open = append(open, q)
		}
	}
	return open
}

// FilePlan is planning/plan.files.json: the files codegen must stay inside.
type FilePlan struct {
	Files []FileEntry `json:"files"`
	// Inferred is true when the plan was taken from planning.ai.json's
	// file_plan because plan.files.json is absent. Not part of the file.
	Inferred bool `json:"-"`
}

// Paths returns the set of planned paths.
func (fp *FilePlan) Paths() map[string]FileEntry {
	m := make(map[string]FileEntry, len(fp.Files))
	for _, f := range fp.Files {
		m[f.Path] = f
	}
	return m
}

// OnlyDeletes reports whether every planned change is a deletion.
func (fp *FilePlan) OnlyDeletes() bool {
	if len(fp.Files) == 0 {
		return false
	}
	for _, f := range fp.Files {
		if f.Intent != "delete" {
			return false
		}
	}
	return true
}

// Reviewer is one plan reviewer's verdict.
type Reviewer struct {
	ID             string            `json:"id"`
	OK             bool              `json:"ok"`
	Severity       string            `json:"severity,omitempty"`
	Decision       json.RawMessage   `json:"decision,omitempty"`
	BlockingIssues []json.RawMessage `json:"blocking_issues,omitempty"`
	Suggestions    []json.RawMessage `json:"suggestions,omitempty"`
}

// PlanReview is review/plan-review.json, the aggregated plan verdict.
type PlanReview struct {
	OK         bool       `json:"ok"`
	Blocked    bool       `json:"blocked"`
	Reviewers  []Reviewer `json:"reviewers"`
	PlanSHA256 string     `json:"plan_sha256,omitempty"`
}

// BlockingReviewers returns the reviewers with ok false and severity blocking.
func (r *PlanReview) BlockingReviewers() []Reviewer {
	var out []Reviewer
	for _, rv := range r.Reviewers {
		if !rv.OK && rv.Severity == SeverityBlocking {
			out = append(out, rv)
		}
	}
	return out
}

// Codegen statuses.
const (
	CodegenCompleted   = "completed"
	CodegenPlanUnclear = "plan_unclear"
	CodegenFailed      = "failed"
)

// Codegen is code/codegen.json, the codegen result and its signals.
type Codegen struct {
	Status    string            `json:"status"`
	Base      string            `json:"base"`
	Questions []json.RawMessage `json:"questions,omitempty"`
}

// Issue is one code review finding.
type Issue struct {
	Severity string `json:"severity"`
	Kind     string `json:"kind,omitempty"` // code, plan, test, security, style
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
	Message  string `json:"message"`
}

// Place is where the issue is: "file:line", "file" without a line, "" when
// it is about no one file.
func (is Issue) Place() string {
	if is.File == "" || is.Line <= 0 {
		return is.File
	}
	return is.File + ":" + strconv.Itoa(is.Line)
}

// CodeReview is review/code-review.json, the aggregated code verdict.
type CodeReview struct {
	OK        bool              `json:"ok"`
	Issues    []Issue           `json:"issues"`
	Reviewers []json.RawMessage `json:"reviewers,omitempty"`
	// DiffSHA256 is the sha256 of the code/diff.patch the review judged,
	// when the reviewer says (lower-cased). A review naming another patch
	// than the current one is invalid (README, "Evidence is bound to the change").
	DiffSHA256 string `json:"diff_sha256,omitempty"`
}

// BlockingIssues returns the issues of severity blocking.
func (r *CodeReview) BlockingIssues() []Issue {
	var out []Issue
	for _, is := range r.Issues {
		if is.Severity == SeverityBlocking {
			out = append(out, is)
		}
	}
	return out
}

// Test report statuses. TestError is the runner's failure (a missing
// command, a suite that could not collect its tests, a sandbox that could
// not start) and TestNoTests a run in which no test ran (no suite found or
// configured, or every test suite ran zero tests): neither is a test
// failure, so neither takes test → codegen.
const (
	TestRunning   = "running"
	TestCompleted = "completed"
	TestError     = "error"
	TestNoTests   = "no_tests"
)

// JudgedByExitCode is Suite.JudgedBy for a suite whose per-test counts
// could not be read: its one case stands for the whole command.
const JudgedByExitCode = "exit_code"

// Summary counts test cases.
type Summary struct {
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
	Error   int `json:"error"`
}

// String is the counts in words, one per status: "3 passed, 1 failed, 0
// skipped", and ", 2 errors" when cases could not run (a runner error, a
// build failure). Errors are never added to the failed count: a failed
// test and a test that could not run are told apart everywhere.
func (s Summary) String() string {
	out := fmt.Sprintf("%d passed, %d failed, %d skipped", s.Passed, s.Failed, s.Skipped)
	switch s.Error {
	case 0:
	case 1:
		out += ", 1 error"
	default:
		out += fmt.Sprintf(", %d errors", s.Error)
	}
	return out
}

// Case is one test case result.
type Case struct {
	Name    string  `json:"name"`
	Package string  `json:"package,omitempty"`
	Status  string  `json:"status"` // pass, fail, skip, error
	Elapsed float64 `json:"elapsed,omitempty"`
	Output  string  `json:"output,omitempty"`
	Message string  `json:"message,omitempty"`
}

// Suite is one test or lint suite run.
type Suite struct {
	ID          string  `json:"id"`
	Kind        string  `json:"kind"` // test or lint
	Command     string  `json:"command"`
	ExitCode    int     `json:"exit_code"`
	OverallPass bool    `json:"overall_pass"`
	Summary     Summary `json:"summary"`
	Cases       []Case  `json:"cases,omitempty"`
	Log         string  `json:"log,omitempty"`
	// JudgedBy is JudgedByExitCode when the suite's counts could not be
	// read; empty when its cases are the runner's own tests.
	JudgedBy string `json:"judged_by,omitempty"`
}

// TestReport is test/report.json.
type TestReport struct {
	Status      string  `json:"status"`
	OverallPass bool    `json:"overall_pass"`
	Summary     Summary `json:"summary"`
	Suites      []Suite `json:"suites"`
	Error       string  `json:"error,omitempty"`
	// DiffSHA256 is the sha256 of the code/diff.patch the suites ran on
	// (orch test writes it; lower-cased). A report naming another patch than
	// the current one is invalid; one without it is judged against the hash
	// recorded at review → test (README, "Evidence is bound to the change").
	DiffSHA256 string `json:"diff_sha256,omitempty"`
}

// Decision verdicts.
const (
	VerdictAccepted         = "accepted"
	VerdictChangesRequested = "changes_requested"
	VerdictRejected         = "rejected"
	VerdictRevert           = "revert"
)

// Decider says who decided.
type Decider struct {
	Kind string `json:"kind"` // human or agent
	Name string `json:"name,omitempty"`
}

// Decision is accept/decision.json, the explicit accept decision.
type Decision struct {
	Verdict    string   `json:"verdict"`
	Target     string   `json:"target,omitempty"` // codegen, review or planning
	Reasons    []string `json:"reasons"`
	Decider    Decider  `json:"decider"`
	Commit     string   `json:"commit,omitempty"`
	Base       string   `json:"base,omitempty"`
	Regression bool     `json:"regression,omitempty"`
}

// Revert record statuses.
const (
	RevertReverted        = "reverted"
	RevertNothingToRevert = "nothing_to_revert"
	RevertPartial         = "partial"
)

// RevertRecord is revert/record.json.
type RevertRecord struct {
	Reason         string   `json:"reason"`
	Status         string   `json:"status"`
	RevertedCommit string   `json:"reverted_commit,omitempty"`
	RevertCommit   string   `json:"revert_commit,omitempty"`
	Conflicts      []string `json:"conflicts,omitempty"`
}

// Loaded is the result of inspecting one artifact file.
// Present false means the file is missing (phase not complete).
// Err non-nil means the file is present but invalid; Err is an *Error.
//
// SHA256 is the hex sha256 of the raw bytes read (empty for directory scans
// and when nothing could be read). For a file plan inferred from the plan
// it is the plan's SHA256.
type Loaded[T any] struct {
	Present bool
	Value   T
	Err     error
	SHA256  string
}

// OK reports whether the artifact is present and valid.
func (l Loaded[T]) OK() bool { return l.Present && l.Err == nil }
