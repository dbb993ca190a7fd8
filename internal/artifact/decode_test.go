package artifact

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/patch"
)

const validPlan = `{
  "id": "0007-add-retry", "title": "Add retry", "brief": "Retry failed requests",
  "goals": ["g1", {"x": 1}],
  "scope": {"in_scope": ["client"], "out_of_scope": ["server"]},
  "work": {"tasks": [{"id": "t1", "text": "do it"}]},
  "risks": [], "assumptions": ["a"], "acceptance_criteria": ["works"],
  "test_plan": {"unit": ["retry_test.go"]},
  "file_plan": [
    {"path": "internal/client/retry.go", "intent": "create", "summary": "new"},
    {"path": "internal/client/client.go", "intent": "update"},
    {"path": "old.go", "intent": "delete", "summary": ""}
  ],
  "questions": [
    {"id": "q1", "text": "How many retries?", "blocking": true, "answer": "3"},
    {"id": "q2", "text": "Backoff?", "blocking": false, "answer": null},
    {"id": "q3", "text": "Jitter?", "blocking": true}
  ]
}`

func TestDecodePlanValid(t *testing.T) {
	p, err := DecodePlan(PlanFile, []byte(validPlan))
	if err != nil {
		t.Fatal(err)
	}
	if p.ID != "0007-add-retry" || p.Title != "Add retry" || p.Brief != "Retry failed requests" {
		t.Errorf("scalars: %+v", p)
	}
	if got := string(p.Goals[1]); got != `{"x": 1}` {
		t.Errorf("Goals[1] = %s", got)
	}
	if got := string(p.TestPlan); got != `{"unit": ["retry_test.go"]}` {
		t.Errorf("TestPlan = %s", got)
	}
	if p.Scope == nil || !reflect.DeepEqual(p.Scope.InScope, []string{"client"}) || !reflect.DeepEqual(p.Scope.OutOfScope, []string{"server"}) {
		t.Errorf("Scope = %+v", p.Scope)
	}
	if p.Work == nil || len(p.Work.Tasks) != 1 || string(p.Work.Tasks[0]) != `{"id": "t1", "text": "do it"}` {
		t.Errorf("Work = %+v", p.Work)
	}
	wantFiles := []FileEntry{
		{Path: "internal/client/retry.go", Intent: "create", Summary: "new"},
		{Path: "internal/client/client.go", Intent: "update"},
		{Path: "old.go", Intent: "delete"},
	}
	if !reflect.DeepEqual(p.FilePlan, wantFiles) {
		t.Errorf("FilePlan = %+v", p.FilePlan)
	}
	if p.Questions[0].Answer == nil || *p.Questions[0].Answer != "3" || p.Questions[1].Answer != nil || p.Questions[2].Answer != nil {
		t.Errorf("answers: %+v", p.Questions)
	}
	open := p.OpenQuestions()
	if len(open) != 1 || open[0].ID != "q3" {
		t.Errorf("OpenQuestions = %+v", open)
	}
}

func TestDecodePlanRawIsACopy(t *testing.T) {
	data := []byte(validPlan)
	p, err := DecodePlan(PlanFile, data)
	if err != nil {
		t.Fatal(err)
	}
	for i := range data {
		data[i] = ' '
	}
	if string(p.Goals[0]) != `"g1"` {
		t.Errorf("Goals[0] changed with the input buffer: %q", p.Goals[0])
	}
}

func TestDecodePlan(t *testing.T) {
	cases := []decodeCase{
		{name: "valid", muts: nil},
		{name: "minimal", raw: `{"id":"a","title":"b","brief":"c"}`},
		{name: "optional null fields", muts: []mutation{set("goals", nil), set("scope", nil), set("file_plan", nil), set("questions", nil)}},
		{name: "missing id", muts: []mutation{del("id")}, want: "$.id: expected a non-empty string, got nothing (the field is missing)"},
		{name: "id number", muts: []mutation{set("id", 7)}, want: "$.id: expected a non-empty string, got a number"},
		{name: "id null", muts: []mutation{set("id", nil)}, want: "$.id: expected a non-empty string, got null"},
		{name: "title blank", muts: []mutation{set("title", " \t\n")}, want: "$.title: expected a non-empty string, got a blank string"},
		{name: "brief empty", muts: []mutation{set("brief", "")}, want: "$.brief: expected a non-empty string, got an empty string"},
		{name: "brief missing", muts: []mutation{del("brief")}, want: "$.brief: expected a non-empty string, got nothing"},
		{name: "goals object", muts: []mutation{set("goals", map[string]any{})}, want: "$.goals: expected an array, got an object"},
		{name: "scope array", muts: []mutation{set("scope", []any{})}, want: "$.scope: expected an object, got an array"},
		{name: "in_scope element number", muts: []mutation{set("scope.in_scope", []any{"a", 2})}, want: "$.scope.in_scope[1]: expected a string, got a number"},
		{name: "work tasks string", muts: []mutation{set("work.tasks", "x")}, want: "$.work.tasks: expected an array, got a string"},
		{name: "test_plan array", muts: []mutation{set("test_plan", []any{})}, want: "$.test_plan: expected an object, got an array"},
		{name: "risks bool", muts: []mutation{set("risks", true)}, want: "$.risks: expected an array, got a boolean"},
		{name: "file_plan object", muts: []mutation{set("file_plan", map[string]any{})}, want: "$.file_plan: expected an array, got an object"},
		{name: "file_plan entry string", muts: []mutation{set("file_plan.1", "x.go")}, want: "$.file_plan[1]: expected an object, got a string"},
		{name: "file_plan path missing", muts: []mutation{del("file_plan.1.path")}, want: "$.file_plan[1].path: expected a non-empty string, got nothing"},
		{name: "file_plan path dotdot", muts: []mutation{set("file_plan.0.path", "../etc/passwd")}, want: `$.file_plan[0].path: expected a safe repository-relative path, got "../etc/passwd" (".." element)`, wantIs: ErrUnsafePath},
		{name: "file_plan path .git", muts: []mutation{set("file_plan.0.path", ".GIT/hooks/pre-commit")}, want: `names the .git directory`, wantIs: ErrUnsafePath},
		{name: "file_plan duplicate path", muts: []mutation{set("file_plan.2.path", "internal/client/retry.go")},
			want: `$.file_plan[2].path: expected unique paths, got "internal/client/retry.go" at indexes 0 and 2 (also $.file_plan[0].path)`},
		{name: "file_plan bad intent", muts: []mutation{set("file_plan.1.intent", "modify")}, want: `$.file_plan[1].intent: expected one of "create", "update", "delete", got "modify"`},
		{name: "file_plan intent missing", muts: []mutation{del("file_plan.1.intent")}, want: `$.file_plan[1].intent: expected one of "create", "update", "delete", got nothing`},
		{name: "file_plan summary number", muts: []mutation{set("file_plan.0.summary", 1)}, want: "$.file_plan[0].summary: expected a string, got a number"},
		{name: "questions object", muts: []mutation{set("questions", map[string]any{})}, want: "$.questions: expected an array, got an object"},
		{name: "question blocking string", muts: []mutation{set("questions.2.blocking", "yes")}, want: "$.questions[2].blocking: expected a boolean, got a string"},
		{name: "question blocking missing", muts: []mutation{del("questions.1.blocking")}, want: "$.questions[1].blocking: expected a boolean, got nothing"},
		{name: "question answer number", muts: []mutation{set("questions.0.answer", 3)}, want: "$.questions[0].answer: expected a string or null, got a number"},
		{name: "question answer blank is fine", muts: []mutation{set("questions.0.answer", "  ")}},
		{name: "question id blank", muts: []mutation{set("questions.0.id", " ")}, want: "$.questions[0].id: expected a non-empty string, got a blank string"},
		{name: "question text missing", muts: []mutation{del("questions.1.text")}, want: "$.questions[1].text: expected a non-empty string, got nothing"},
		{name: "question null", muts: []mutation{set("questions.1", nil)}, want: "$.questions[1]: expected an object, got null"},
	}
	cases = append(cases, genericCases(validPlan)...)
	runDecodeTable(t, PlanFile, validPlan, DecodePlan, cases)
}

const validFilePlan = `{"files": [
  {"path": "a.go", "intent": "update", "summary": "s"},
  {"path": "dir/b.go", "intent": "create"},
  {"path": "c.go", "intent": "delete"}]}`

func TestDecodeFilePlan(t *testing.T) {
	fp, err := DecodeFilePlan(FilePlanFile, []byte(validFilePlan))
	if err != nil {
		t.Fatal(err)
	}
	if len(fp.Files) != 3 || fp.Files[1] != (FileEntry{Path: "dir/b.go", Intent: "create"}) || fp.Inferred {
		t.Errorf("decoded %+v", fp)
	}
	empty, err := DecodeFilePlan(FilePlanFile, []byte(`{"files": []}`))
	if err != nil || empty.Files == nil || len(empty.Files) != 0 {
		t.Errorf("empty file plan: %+v, %v", empty, err)
	}
	cases := []decodeCase{
		{name: "valid"},
		{name: "files missing", muts: []mutation{del("files")}, want: "$.files: expected an array, got nothing"},
		{name: "files null", muts: []mutation{set("files", nil)}, want: "$.files: expected an array, got null"},
		{name: "files object", muts: []mutation{set("files", map[string]any{})}, want: "$.files: expected an array, got an object"},
		{name: "entry number", muts: []mutation{set("files.2", 1)}, want: "$.files[2]: expected an object, got a number"},
		{name: "path absolute", muts: []mutation{set("files.0.path", "/etc/passwd")}, want: `$.files[0].path: expected a safe repository-relative path, got "/etc/passwd" (absolute path)`, wantIs: ErrUnsafePath},
		{name: "path orch", muts: []mutation{set("files.1.path", ".orch/current")}, want: `inside the .orch directory`, wantIs: ErrUnsafePath},
		{name: "path backslash", muts: []mutation{set("files.1.path", `a\b`)}, want: `contains a backslash`, wantIs: ErrUnsafePath},
		{name: "path blank", muts: []mutation{set("files.1.path", " ")}, want: `$.files[1].path: expected a non-empty string, got a blank string`},
		{name: "path number", muts: []mutation{set("files.1.path", 1)}, want: `$.files[1].path: expected a non-empty string, got a number`},
		{name: "duplicate", muts: []mutation{set("files.2.path", "a.go")}, want: `$.files[2].path: expected unique paths, got "a.go" at indexes 0 and 2 (also $.files[0].path)`},
		{name: "bad intent", muts: []mutation{set("files.0.intent", "Update")}, want: `$.files[0].intent: expected one of "create", "update", "delete", got "Update"`},
		{name: "intent bool", muts: []mutation{set("files.0.intent", true)}, want: `$.files[0].intent: expected one of "create", "update", "delete", got a boolean`},
		{name: "summary object", muts: []mutation{set("files.0.summary", map[string]any{})}, want: `$.files[0].summary: expected a string, got an object`},
		{name: "extra entry field", muts: []mutation{set("files.0.reason", "x")}},
	}
	cases = append(cases, genericCases(validFilePlan)...)
	runDecodeTable(t, FilePlanFile, validFilePlan, DecodeFilePlan, cases)
}

const validPlanReview = `{"ok": true, "blocked": false,
 "reviewers": [
   {"id": "r1", "ok": true, "severity": "info", "decision": {"verdict": "approve"}, "blocking_issues": [], "suggestions": ["s", {"x": 1}]},
   {"id": "r2", "ok": false, "severity": "blocking", "blocking_issues": ["missing tests"]}],
 "plan_sha256": "ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef0123456789"}`

func TestDecodePlanReview(t *testing.T) {
	r, err := DecodePlanReview(PlanReviewFile, []byte(validPlanReview))
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK || r.Blocked || len(r.Reviewers) != 2 || string(r.Reviewers[0].Decision) != `{"verdict": "approve"}` {
		t.Errorf("decoded %+v", r)
	}
	if r.PlanSHA256 != "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789" {
		t.Errorf("PlanSHA256 not lower-cased: %q", r.PlanSHA256)
	}
	if b := r.BlockingReviewers(); len(b) != 1 || b[0].ID != "r2" {
		t.Errorf("BlockingReviewers = %+v", b)
	}
	cases := []decodeCase{
		{name: "valid"},
		{name: "no sha", muts: []mutation{del("plan_sha256")}},
		{name: "empty reviewers", muts: []mutation{set("reviewers", []any{})}},
		{name: "decision any type", muts: []mutation{set("reviewers.0.decision", "approve")}},
		{name: "ok missing", muts: []mutation{del("ok")}, want: "$.ok: expected a boolean, got nothing"},
		{name: "ok string", muts: []mutation{set("ok", "true")}, want: "$.ok: expected a boolean, got a string"},
		{name: "blocked missing", muts: []mutation{del("blocked")}, want: "$.blocked: expected a boolean, got nothing"},
		{name: "blocked number", muts: []mutation{set("blocked", 0)}, want: "$.blocked: expected a boolean, got a number"},
		{name: "reviewers missing", muts: []mutation{del("reviewers")}, want: "$.reviewers: expected an array, got nothing"},
		{name: "reviewer id blank", muts: []mutation{set("reviewers.1.id", "")}, want: "$.reviewers[1].id: expected a non-empty string, got an empty string"},
		{name: "reviewer ok missing", muts: []mutation{del("reviewers.0.ok")}, want: "$.reviewers[0].ok: expected a boolean, got nothing"},
		{name: "reviewer severity bad", muts: []mutation{set("reviewers.1.severity", "critical")}, want: `$.reviewers[1].severity: expected one of "info", "minor", "major", "blocking", got "critical"`},
		{name: "reviewer blocking_issues object", muts: []mutation{set("reviewers.1.blocking_issues", map[string]any{})}, want: "$.reviewers[1].blocking_issues: expected an array, got an object"},
		{name: "reviewer suggestions string", muts: []mutation{set("reviewers.0.suggestions", "s")}, want: "$.reviewers[0].suggestions: expected an array, got a string"},
		{name: "sha short", muts: []mutation{set("plan_sha256", "abc")}, want: `$.plan_sha256: expected a sha256 (64 hex digits), got "abc"`},
		{name: "sha not hex", muts: []mutation{set("plan_sha256", strings.Repeat("g", 64))}, want: `$.plan_sha256: expected a sha256 (64 hex digits), got "gggg`},
		{name: "sha number", muts: []mutation{set("plan_sha256", 1)}, want: `$.plan_sha256: expected a sha256 (64 hex digits), got a number`},
	}
	cases = append(cases, genericCases(validPlanReview)...)
	runDecodeTable(t, PlanReviewFile, validPlanReview, DecodePlanReview, cases)
}

const validCodegen = `{"status": "completed", "base": "0123456789ABCDEF0123456789abcdef01234567", "questions": ["why?"], "notes": "extra"}`

func TestDecodeCodegen(t *testing.T) {
	g, err := DecodeCodegen(CodegenFile, []byte(validCodegen))
	if err != nil {
		t.Fatal(err)
	}
	if g.Status != CodegenCompleted || g.Base != "0123456789abcdef0123456789abcdef01234567" || len(g.Questions) != 1 {
		t.Errorf("decoded %+v", g)
	}
	cases := []decodeCase{
		{name: "valid"},
		{name: "plan_unclear", muts: []mutation{set("status", "plan_unclear")}},
		{name: "failed", muts: []mutation{set("status", "failed")}},
		{name: "sha256 base", muts: []mutation{set("base", strings.Repeat("a", 64))}},
		{name: "status missing", muts: []mutation{del("status")}, want: `$.status: expected one of "completed", "plan_unclear", "failed", got nothing`},
		{name: "status bad", muts: []mutation{set("status", "done")}, want: `$.status: expected one of "completed", "plan_unclear", "failed", got "done"`},
		{name: "status number", muts: []mutation{set("status", 1)}, want: `$.status: expected one of "completed", "plan_unclear", "failed", got a number`},
		{name: "base missing", muts: []mutation{del("base")}, want: `$.base: expected a git commit id (40 or 64 hex digits), got nothing`},
		{name: "base short", muts: []mutation{set("base", "abc1234")}, want: `$.base: expected a git commit id (40 or 64 hex digits), got "abc1234"`},
		{name: "base 41", muts: []mutation{set("base", strings.Repeat("a", 41))}, want: `$.base: expected a git commit id (40 or 64 hex digits)`},
		{name: "base not hex", muts: []mutation{set("base", strings.Repeat("z", 40))}, want: `$.base: expected a git commit id (40 or 64 hex digits), got "zzzz`},
		{name: "base ref name", muts: []mutation{set("base", "HEAD")}, want: `got "HEAD"`},
		{name: "questions object", muts: []mutation{set("questions", map[string]any{})}, want: `$.questions: expected an array, got an object`},
	}
	cases = append(cases, genericCases(validCodegen)...)
	runDecodeTable(t, CodegenFile, validCodegen, DecodeCodegen, cases)
}

const validCodeReview = `{"ok": false,
 "issues": [
   {"severity": "blocking", "kind": "plan", "file": "a.go", "line": 12, "message": "wrong approach"},
   {"severity": "minor", "message": "typo"},
   {"severity": "info", "kind": "style", "line": 0, "message": "nit"}],
 "reviewers": [{"id": "r1"}]}`

func TestDecodeCodeReview(t *testing.T) {
	r, err := DecodeCodeReview(CodeReviewFile, []byte(validCodeReview))
	if err != nil {
		t.Fatal(err)
	}
	want := Issue{Severity: "blocking", Kind: "plan", File: "a.go", Line: 12, Message: "wrong approach"}
	if r.OK || len(r.Issues) != 3 || r.Issues[0] != want || len(r.Reviewers) != 1 {
		t.Errorf("decoded %+v", r)
	}
	if b := r.BlockingIssues(); len(b) != 1 {
		t.Errorf("BlockingIssues = %+v", b)
	}
	if r, err := DecodeCodeReview(CodeReviewFile, []byte(`{"ok":true,"issues":[],"diff_sha256":"`+strings.Repeat("AB", 32)+`"}`)); err != nil || r.DiffSHA256 != strings.Repeat("ab", 32) {
		t.Errorf("diff_sha256 decoded as %q, %v; want it lower-cased", r.DiffSHA256, err)
	}
	cases := []decodeCase{
		{name: "valid"},
		{name: "no issues", muts: []mutation{set("issues", []any{})}},
		{name: "every kind", muts: []mutation{set("issues.0.kind", "security"), set("issues.1.kind", "test"), set("issues.2.kind", "code")}},
		{name: "ok missing", muts: []mutation{del("ok")}, want: "$.ok: expected a boolean, got nothing"},
		{name: "ok null", muts: []mutation{set("ok", nil)}, want: "$.ok: expected a boolean, got null"},
		{name: "issues missing", muts: []mutation{del("issues")}, want: "$.issues: expected an array, got nothing"},
		{name: "issue string", muts: []mutation{set("issues.1", "bad")}, want: "$.issues[1]: expected an object, got a string"},
		{name: "severity missing", muts: []mutation{del("issues.1.severity")}, want: `$.issues[1].severity: expected one of "info", "minor", "major", "blocking", got nothing`},
		{name: "severity bad", muts: []mutation{set("issues.1.severity", "Blocking")}, want: `$.issues[1].severity: expected one of "info", "minor", "major", "blocking", got "Blocking"`},
		{name: "kind bad", muts: []mutation{set("issues.2.kind", "docs")}, want: `$.issues[2].kind: expected one of "code", "plan", "test", "security", "style", got "docs"`},
		{name: "line negative", muts: []mutation{set("issues.0.line", -1)}, want: "$.issues[0].line: expected a non-negative integer, got -1"},
		{name: "line fraction", muts: []mutation{set("issues.0.line", 1.5)}, want: "$.issues[0].line: expected a non-negative integer, got 1.5"},
		{name: "line string", muts: []mutation{set("issues.0.line", "12")}, want: "$.issues[0].line: expected a non-negative integer, got a string"},
		{name: "line exponent", raw: `{"ok": true, "issues": [{"severity": "info", "message": "m", "line": 1e2}]}`, want: "$.issues[0].line: expected a non-negative integer, got 1e2"},
		{name: "line huge", raw: `{"ok": true, "issues": [{"severity": "info", "message": "m", "line": 123456789012345678901234567890}]}`, want: "$.issues[0].line: expected a non-negative integer, got 1234567890"},
		{name: "message missing", muts: []mutation{del("issues.1.message")}, want: "$.issues[1].message: expected a non-empty string, got nothing"},
		{name: "message blank", muts: []mutation{set("issues.1.message", "\n")}, want: "$.issues[1].message: expected a non-empty string, got a blank string"},
		{name: "file number", muts: []mutation{set("issues.0.file", 3)}, want: "$.issues[0].file: expected a string, got a number"},
		{name: "reviewers object", muts: []mutation{set("reviewers", map[string]any{})}, want: "$.reviewers: expected an array, got an object"},
		{name: "diff sha", muts: []mutation{set("diff_sha256", strings.Repeat("Ab", 32))}},
		{name: "diff sha short", muts: []mutation{set("diff_sha256", "abc")}, want: `$.diff_sha256: expected a sha256 (64 hex digits), got "abc"`},
		{name: "diff sha number", muts: []mutation{set("diff_sha256", 1)}, want: `$.diff_sha256: expected a sha256 (64 hex digits), got a number`},
	}
	cases = append(cases, genericCases(validCodeReview)...)
	runDecodeTable(t, CodeReviewFile, validCodeReview, DecodeCodeReview, cases)
}

const validTestReport = `{"status": "completed", "overall_pass": false,
 "summary": {"passed": 10, "failed": 1, "skipped": 0, "error": 0},
 "suites": [
   {"id": "go-test", "kind": "test", "command": "go test ./...", "exit_code": 1, "overall_pass": false,
    "summary": {"passed": 10, "failed": 1, "skipped": 0, "error": 0},
    "cases": [{"name": "TestX", "package": "p", "status": "fail", "elapsed": 0.25, "output": "o", "message": "m"}],
    "log": "test/logs/go-test.log"},
   {"id": "vet", "kind": "lint", "command": "go vet ./...", "exit_code": -1, "overall_pass": true,
    "summary": {"passed": 0, "failed": 0, "skipped": 0, "error": 0}}]}`

func TestDecodeTestReport(t *testing.T) {
	r, err := DecodeTestReport(TestReportFile, []byte(validTestReport))
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != TestCompleted || r.OverallPass || r.Summary.Passed != 10 || len(r.Suites) != 2 ||
		r.Suites[0].Cases[0].Elapsed != 0.25 || r.Suites[1].ExitCode != -1 || r.Suites[0].Log != "test/logs/go-test.log" {
		t.Errorf("decoded %+v", r)
	}
	cases := []decodeCase{
		{name: "valid"},
		{name: "running", muts: []mutation{set("status", "running"), set("suites", []any{})}},
		{name: "error with message", muts: []mutation{set("status", "error"), set("error", "runner crashed")}},
		{name: "status bad", muts: []mutation{set("status", "passed")}, want: `$.status: expected one of "running", "completed", "error", "no_tests", got "passed"`},
		{name: "status missing", muts: []mutation{del("status")}, want: `$.status: expected one of "running", "completed", "error", "no_tests", got nothing`},
		{name: "overall_pass missing", muts: []mutation{del("overall_pass")}, want: "$.overall_pass: expected a boolean, got nothing"},
		{name: "summary missing", muts: []mutation{del("summary")}, want: "$.summary: expected an object, got nothing"},
		{name: "summary passed fraction", muts: []mutation{set("summary.passed", 1.5)}, want: "$.summary.passed: expected a non-negative integer, got 1.5"},
		{name: "summary failed negative", muts: []mutation{set("summary.failed", -1)}, want: "$.summary.failed: expected a non-negative integer, got -1"},
		{name: "summary error missing", muts: []mutation{del("summary.error")}, want: "$.summary.error: expected a non-negative integer, got nothing"},
		{name: "suites missing", muts: []mutation{del("suites")}, want: "$.suites: expected an array, got nothing"},
		{name: "suite kind bad", muts: []mutation{set("suites.1.kind", "unit")}, want: `$.suites[1].kind: expected one of "test", "lint", got "unit"`},
		{name: "suite id missing", muts: []mutation{del("suites.0.id")}, want: `$.suites[0].id: expected a non-empty string, got nothing`},
		{name: "suite command blank", muts: []mutation{set("suites.0.command", " ")}, want: `$.suites[0].command: expected a non-empty string, got a blank string`},
		{name: "exit code fraction", muts: []mutation{set("suites.0.exit_code", 1.5)}, want: "$.suites[0].exit_code: expected an integer, got 1.5"},
		{name: "exit code string", muts: []mutation{set("suites.0.exit_code", "1")}, want: "$.suites[0].exit_code: expected an integer, got a string"},
		{name: "exit code missing", muts: []mutation{del("suites.0.exit_code")}, want: "$.suites[0].exit_code: expected an integer, got nothing"},
		{name: "suite overall_pass string", muts: []mutation{set("suites.1.overall_pass", "yes")}, want: "$.suites[1].overall_pass: expected a boolean, got a string"},
		{name: "suite summary missing", muts: []mutation{del("suites.1.summary")}, want: "$.suites[1].summary: expected an object, got nothing"},
		{name: "suite summary skipped string", muts: []mutation{set("suites.1.summary.skipped", "0")}, want: "$.suites[1].summary.skipped: expected a non-negative integer, got a string"},
		{name: "cases object", muts: []mutation{set("suites.0.cases", map[string]any{})}, want: "$.suites[0].cases: expected an array, got an object"},
		{name: "case elapsed string", muts: []mutation{set("suites.0.cases.0.elapsed", "1s")}, want: "$.suites[0].cases[0].elapsed: expected a number, got a string"},
		{name: "case name number", muts: []mutation{set("suites.0.cases.0.name", 1)}, want: "$.suites[0].cases[0].name: expected a string, got a number"},
		{name: "log number", muts: []mutation{set("suites.0.log", 1)}, want: "$.suites[0].log: expected a string, got a number"},
		{name: "error number", muts: []mutation{set("error", 1)}, want: "$.error: expected a string, got a number"},
		{name: "diff sha", muts: []mutation{set("diff_sha256", strings.Repeat("0f", 32))}},
		{name: "diff sha not hex", muts: []mutation{set("diff_sha256", strings.Repeat("g", 64))}, want: `$.diff_sha256: expected a sha256 (64 hex digits), got "gggg`},
	}
	cases = append(cases, genericCases(validTestReport)...)
	runDecodeTable(t, TestReportFile, validTestReport, DecodeTestReport, cases)
}

const validDecision = `{"verdict": "changes_requested", "target": "review", "reasons": ["", "needs another look"],
 "decider": {"kind": "human", "name": "ada"}, "commit": "abc", "base": "def", "regression": false}`

func TestDecodeDecision(t *testing.T) {
	d, err := DecodeDecision(DecisionFile, []byte(validDecision))
	if err != nil {
		t.Fatal(err)
	}
	want := Decision{Verdict: "changes_requested", Target: "review", Reasons: []string{"", "needs another look"},
		Decider: Decider{Kind: "human", Name: "ada"}, Commit: "abc", Base: "def"}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("decoded %+v", d)
	}
	cases := []decodeCase{
		{name: "valid"},
		{name: "accepted without target", muts: []mutation{set("verdict", "accepted"), del("target")}},
		{name: "rejected", muts: []mutation{set("verdict", "rejected"), del("target")}},
		{name: "revert with regression", muts: []mutation{set("verdict", "revert"), set("regression", true)}},
		{name: "agent decider", muts: []mutation{set("decider", map[string]any{"kind": "agent"})}},
		{name: "target planning", muts: []mutation{set("target", "planning")}},
		{name: "target codegen", muts: []mutation{set("target", "codegen")}},
		{name: "verdict missing", muts: []mutation{del("verdict")}, want: `$.verdict: expected one of "accepted", "changes_requested", "rejected", "revert", got nothing`},
		{name: "verdict bad", muts: []mutation{set("verdict", "ok")}, want: `$.verdict: expected one of "accepted", "changes_requested", "rejected", "revert", got "ok"`},
		{name: "changes_requested without target", muts: []mutation{del("target")}, want: `$.target: expected one of "codegen", "review", "planning", got nothing`},
		{name: "changes_requested null target", muts: []mutation{set("target", nil)}, want: `$.target: expected one of "codegen", "review", "planning", got null`},
		{name: "target bad", muts: []mutation{set("target", "test")}, want: `$.target: expected one of "codegen", "review", "planning", got "test"`},
		{name: "target bad even when not needed", muts: []mutation{set("verdict", "accepted"), set("target", "x")}, want: `$.target: expected one of "codegen", "review", "planning", got "x"`},
		{name: "reasons missing", muts: []mutation{del("reasons")}, want: `$.reasons: expected an array, got nothing`},
		{name: "reasons empty", muts: []mutation{set("reasons", []any{})}, want: `$.reasons: expected at least one non-blank reason, got an empty array`},
		{name: "reasons blank", muts: []mutation{set("reasons", []any{" ", ""})}, want: `$.reasons: expected at least one non-blank reason, got only blank strings`},
		{name: "reasons number", muts: []mutation{set("reasons", []any{"ok", 1})}, want: `$.reasons[1]: expected a string, got a number`},
		{name: "reasons string", muts: []mutation{set("reasons", "because")}, want: `$.reasons: expected an array, got a string`},
		{name: "decider missing", muts: []mutation{del("decider")}, want: `$.decider: expected an object, got nothing`},
		{name: "decider kind bad", muts: []mutation{set("decider.kind", "robot")}, want: `$.decider.kind: expected one of "human", "agent", got "robot"`},
		{name: "decider kind missing", muts: []mutation{del("decider.kind")}, want: `$.decider.kind: expected one of "human", "agent", got nothing`},
		{name: "decider name number", muts: []mutation{set("decider.name", 1)}, want: `$.decider.name: expected a string, got a number`},
		{name: "regression string", muts: []mutation{set("regression", "true")}, want: `$.regression: expected a boolean, got a string`},
		{name: "commit number", muts: []mutation{set("commit", 1)}, want: `$.commit: expected a string, got a number`},
	}
	cases = append(cases, genericCases(validDecision)...)
	runDecodeTable(t, DecisionFile, validDecision, DecodeDecision, cases)
}

const validRevertRecord = `{"reason": "broke prod", "status": "partial", "reverted_commit": "abc", "revert_commit": "def", "conflicts": ["a.go"]}`

func TestDecodeRevertRecord(t *testing.T) {
	r, err := DecodeRevertRecord(RevertRecordFile, []byte(validRevertRecord))
	if err != nil {
		t.Fatal(err)
	}
	want := RevertRecord{Reason: "broke prod", Status: "partial", RevertedCommit: "abc", RevertCommit: "def", Conflicts: []string{"a.go"}}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("decoded %+v", r)
	}
	cases := []decodeCase{
		{name: "valid"},
		{name: "reverted", muts: []mutation{set("status", "reverted")}},
		{name: "nothing_to_revert", muts: []mutation{set("status", "nothing_to_revert"), del("reverted_commit"), del("revert_commit")}},
		{name: "reason missing", muts: []mutation{del("reason")}, want: `$.reason: expected a non-empty string, got nothing`},
		{name: "reason blank", muts: []mutation{set("reason", "   ")}, want: `$.reason: expected a non-empty string, got a blank string`},
		{name: "reason number", muts: []mutation{set("reason", 1)}, want: `$.reason: expected a non-empty string, got a number`},
		{name: "status bad", muts: []mutation{set("status", "done")}, want: `$.status: expected one of "reverted", "nothing_to_revert", "partial", got "done"`},
		{name: "status missing", muts: []mutation{del("status")}, want: `$.status: expected one of "reverted", "nothing_to_revert", "partial", got nothing`},
		{name: "conflicts element", muts: []mutation{set("conflicts", []any{"a", false})}, want: `$.conflicts[1]: expected a string, got a boolean`},
		{name: "revert_commit number", muts: []mutation{set("revert_commit", 1)}, want: `$.revert_commit: expected a string, got a number`},
	}
	cases = append(cases, genericCases(validRevertRecord)...)
	runDecodeTable(t, RevertRecordFile, validRevertRecord, DecodeRevertRecord, cases)
}

func TestErrorFormat(t *testing.T) {
	e := &Error{File: PlanFile, JSONPath: "$.questions[2].blocking", Expected: "a boolean", Got: "a string", Err: ErrSchema}
	if got, want := e.Error(), "planning/planning.ai.json: $.questions[2].blocking: expected a boolean, got a string"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(e, ErrSchema) || errors.Unwrap(e) != ErrSchema {
		t.Error("Unwrap does not return Err")
	}
	e = &Error{File: DiffFile, Err: &patch.Error{Line: 3, Reason: "empty hunk"}}
	if got, want := e.Error(), "code/diff.patch: line 3: empty hunk"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(e, ErrInvalidDiff) {
		t.Error("diff error does not match ErrInvalidDiff")
	}
}
