package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/hostile"
	"github.com/orchdev/orch/internal/repl"
	"github.com/orchdev/orch/internal/termtext"
)

const failedReport = `{
  "status": "completed",
  "overall_pass": false,
  "summary": {"passed": 1, "failed": 1, "skipped": 1, "error": 0},
  "suites": [
    {"id": "go-test", "kind": "test", "command": "go test -json ./...", "exit_code": 1, "overall_pass": false,
     "summary": {"passed": 1, "failed": 1, "skipped": 1, "error": 0},
     "cases": [
       {"name": "TestAdd", "package": "example.com/calc", "status": "fail", "elapsed": 0.01,
        "output": "=== RUN   TestAdd\n    calc_test.go:6: Add(1, 2) = -1, want 3\n--- FAIL: TestAdd (0.01s)\n"},
       {"name": "TestSub", "package": "example.com/calc", "status": "pass"},
       {"name": "TestMul", "package": "example.com/calc", "status": "skip"}
     ],
     "log": "test/logs/go-test.log"},
    {"id": "vet", "kind": "lint", "command": "go vet ./...", "exit_code": 0, "overall_pass": true,
     "summary": {"passed": 1, "failed": 0, "skipped": 0, "error": 0}, "judged_by": "exit_code"}
  ],
  "base": "0123456789abcdef0123456789abcdef01234567",
  "sandbox": "bwrap",
  "notes": ["bwrap sandbox: no network, each tmpfs at most 512 MiB", "limits: 10m", "code/codegen.json has no base commit: tested against HEAD"]
}`

// A failed run in a terminal, without colours: the verdict, what ran and
// where, each suite's command, exit status and counts, the failing test
// by name with its output; passing tests are not listed.
func TestRenderTestReportFailed(t *testing.T) {
	var b strings.Builder
	st := termtext.Style{Terminal: true, Width: 100}
	if err := renderTestReport(&b, artifact.TestReportFile, []byte(failedReport), st, ".orch/tasks/fix/test/report.json"); err != nil {
		t.Fatal(err)
	}
	want := `test/report.json: tests failed
status completed · 1 passed, 1 failed, 1 skipped · base 0123456789ab
sandbox: bwrap, no network, system folders read-only, writable: the worktree and a private /tmp (512 MiB each)
note: code/codegen.json has no base commit: tested against HEAD
2 more notes on how the suites ran: .orch/tasks/fix/test/report.json

FAIL suite go-test (test)
  command: go test -json ./...
  exit 1 · 1 passed, 1 failed, 1 skipped
  log: test/logs/go-test.log
  ✗ example.com/calc TestAdd (fail, 0.01s)
    │ === RUN   TestAdd
    │     calc_test.go:6: Add(1, 2) = -1, want 3
    │ --- FAIL: TestAdd (0.01s)

PASS suite vet (lint)
  command: go vet ./...
  exit 0 · 1 passed, 0 failed, 0 skipped · judged by its exit code
`
	if got := b.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	// With colours: the verdict red, the passing suite green.
	b.Reset()
	st.Color = true
	if err := renderTestReport(&b, artifact.TestReportFile, []byte(failedReport), st, "x"); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"\x1b[31mtests failed\x1b[0m", "\x1b[31mFAIL\x1b[0m", "\x1b[32mPASS\x1b[0m", "\x1b[31m✗\x1b[0m"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("no %q in\n%q", s, b.String())
		}
	}
}

// Each outcome in words; the runner's error is named; a regression report
// says it is accept's re-run and on which commit.
func TestRenderTestReportOutcomes(t *testing.T) {
	for _, tc := range []struct {
		name, rel, report string
		want              []string
		not               []string
	}{
		{"passed", artifact.TestReportFile,
			`{"status":"completed","overall_pass":true,"summary":{"passed":3,"failed":0,"skipped":0,"error":0},"suites":[{"id":"go","kind":"test","command":"go test ./...","exit_code":0,"overall_pass":true,"summary":{"passed":3,"failed":0,"skipped":0,"error":0}}],"sandbox":"none"}`,
			[]string{"test/report.json: tests passed\n", "sandbox: none (an explicit opt-out)", "PASS suite go (test)"},
			[]string{"✗", "regression"}},
		{"runner error", artifact.TestReportFile,
			`{"status":"error","overall_pass":false,"summary":{"passed":0,"failed":0,"skipped":0,"error":1},"suites":[{"id":"npm","kind":"test","command":"npm test","exit_code":127,"overall_pass":false,"summary":{"passed":0,"failed":0,"skipped":0,"error":1},"cases":[{"name":"npm test","status":"error","message":"sh: jest: not found"}]}],"error":"npm test: command not found (exit 127)"}`,
			[]string{"the test runner failed (not a test failure)", "error: npm test: command not found (exit 127)", "exit 127 · 0 passed, 0 failed, 0 skipped, 1 error", "✗ npm test (error)\n      sh: jest: not found\n", "sandbox: not recorded"},
			nil},
		{"no tests", artifact.TestReportFile,
			`{"status":"no_tests","overall_pass":false,"summary":{"passed":0,"failed":0,"skipped":0,"error":0},"suites":[],"error":"no suite found: set [[test.suites]] in .orch/config.toml"}`,
			[]string{"no test ran (not a test failure)", "error: no suite found"},
			nil},
		{"regression", artifact.RegressionReportFile,
			`{"status":"completed","overall_pass":false,"summary":{"passed":0,"failed":1,"skipped":0,"error":0},"suites":[{"id":"go","kind":"test","command":"go test ./...","exit_code":1,"overall_pass":false,"summary":{"passed":0,"failed":1,"skipped":0,"error":0},"cases":[{"name":"TestX","status":"fail","output":"boom"}]}],"base":"fedcba9876543210fedcba9876543210fedcba98","sandbox":"bwrap","repo_changed":[".git/hooks/pre-commit"]}`,
			[]string{"accept/regression-report.json — orch accept's regression check: tests failed", "re-ran on the commit orch accept made fedcba987654", "the repository changed while the suites ran: .git/hooks/pre-commit", "✗ TestX (fail)\n    │ boom\n"},
			[]string{"· base"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := renderTestReport(&b, tc.rel, []byte(tc.report), termtext.Style{Terminal: true}, "F"); err != nil {
				t.Fatal(err)
			}
			for _, s := range tc.want {
				if !strings.Contains(b.String(), s) {
					t.Errorf("no %q in\n%s", s, b.String())
				}
			}
			for _, s := range tc.not {
				if strings.Contains(b.String(), s) {
					t.Errorf("%q in\n%s", s, b.String())
				}
			}
		})
	}
}

// Many failing tests and long outputs are cut, saying where the rest is;
// a test's control characters are shown as text.
func TestRenderTestReportBounds(t *testing.T) {
	var cases []string
	for i := range shownFailing + 5 {
		out := strings.Repeat("line\\n", shownOutputLines+10) + "last \\u001b[31mred " + strings.Repeat("x", 2*shownLineRunes)
		cases = append(cases, fmt.Sprintf(`{"name":"T%d","status":"fail","output":"%s"}`, i, out))
	}
	report := `{"status":"completed","overall_pass":false,"summary":{"passed":0,"failed":25,"skipped":0,"error":0},"suites":[{"id":"s","kind":"test","command":"c","exit_code":1,"overall_pass":false,"summary":{"passed":0,"failed":25,"skipped":0,"error":0},"log":"test/logs/s.log","cases":[` + strings.Join(cases, ",") + `]}]}`
	var b strings.Builder
	if err := renderTestReport(&b, artifact.TestReportFile, []byte(report), termtext.Style{Terminal: true}, ".orch/tasks/t/test/report.json"); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	if n := strings.Count(got, "✗ T"); n != shownFailing {
		t.Errorf("%d failing tests shown, want %d", n, shownFailing)
	}
	if !strings.Contains(got, "… 5 more failing tests: .orch/tasks/t/test/report.json") {
		t.Errorf("the tests left out are not counted:\n%s", got)
	}
	if !strings.Contains(got, "… 11 earlier lines of output: test/logs/s.log") {
		t.Errorf("the lines left out are not counted:\n%s", got)
	}
	if strings.Contains(got, "\x1b") || !strings.Contains(got, "last ^[[31mred") {
		t.Errorf("a control character reached the terminal")
	}
	for _, l := range strings.Split(got, "\n") {
		if n := len([]rune(l)); n > shownLineRunes+10 {
			t.Fatalf("a line of %d runes: %.80q…", n, l)
		}
	}
}

// An invalid report is an error naming the file and the field.
func TestRenderTestReportInvalid(t *testing.T) {
	for _, report := range []string{`{"status":"completed"`, `{"status":"done","overall_pass":true,"summary":{"passed":0,"failed":0,"skipped":0,"error":0},"suites":[]}`} {
		err := renderTestReport(&strings.Builder{}, artifact.TestReportFile, []byte(report), termtext.Style{Terminal: true}, "F")
		if err == nil || !strings.Contains(err.Error(), "test/report.json") {
			t.Errorf("%s: %v", report, err)
		}
	}
}

// The REPL's /show offers (in its help and completion) what orch show
// takes.
func TestREPLShowArtifacts(t *testing.T) {
	if got, want := strings.Join(repl.ShowArtifacts, " "), strings.Join(shownNames(), " "); got != want {
		t.Errorf("repl.ShowArtifacts = %s, orch show takes %s", got, want)
	}
}

// A report's text cannot drive the terminal: escape sequences, C1
// controls, bidirectional overrides and carriage returns in any field are
// shown as text, with colours or without.
func TestRenderTestReportHostile(t *testing.T) {
	report := `{"status":"error","overall_pass":false,"summary":{"passed":0,"failed":0,"skipped":0,"error":1},"suites":[{"id":"n\u001b[2J","kind":"test","command":"npm\u009b test","exit_code":127,"overall_pass":false,"summary":{"passed":0,"failed":0,"skipped":0,"error":1},"log":"l\u001b]0;x\u0007","cases":[{"name":"x\u202e","package":"p\r","status":"error","message":"a\rb","output":"\u001b]0;t\u0007\n\u001b[31mred"}]}],"error":"e\u001b[H","sandbox":"\u001b[1m","notes":["\u001b[31m"],"base":"\u009b","repo_changed":["\u001b[K"],"worktree":"\u001b[K"}`
	for _, color := range []bool{false, true} {
		var b strings.Builder
		if err := renderTestReport(&b, artifact.TestReportFile, []byte(report), termtext.Style{Terminal: true, Color: color}, "F"); err != nil {
			t.Fatal(err)
		}
		got := b.String()
		if bad := hostile.TerminalViolation(got); bad != "" {
			t.Errorf("colour %v: %s: %q", color, bad, got)
		}
		if !color && strings.Contains(got, "\x1b") {
			t.Errorf("an escape sequence without colours: %q", got)
		}
	}
}
