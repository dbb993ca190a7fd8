package testrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/artifact/artifacttest"
	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/procstat"
	"github.com/orchdev/orch/internal/sandbox"
	"github.com/orchdev/orch/internal/syncbuf"
	"github.com/orchdev/orch/internal/testreport"
)

// goModule is a small module; body is the content of its x_test.go.
func goModule(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	gittest.WriteFiles(t, dir, map[string]string{
		"go.mod":        "module example.com/m\n\ngo 1.22\n",
		"x.go":          "package m\n\nfunc Add(a, b int) int { return a + b }\n",
		"x_test.go":     body,
		"sub/sub.go":    "package sub\n",
		"sub/y_test.go": "package sub\n\nimport \"testing\"\n\nfunc TestSub(t *testing.T) {}\n",
	})
	return dir
}

func TestRunGoModules(t *testing.T) {
	tests := []struct {
		name       string
		body       string
		pass       bool
		testSuite  artifact.Summary
		wantCase   string // a case of the go-test suite
		wantStatus string
		wantMsg    string
	}{
		{
			name:       "passing module",
			body:       "package m\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"bad\")\n\t}\n}\n\nfunc TestSkipped(t *testing.T) { t.Skip(\"later\") }\n",
			pass:       true,
			testSuite:  artifact.Summary{Passed: 2, Skipped: 1},
			wantCase:   "TestAdd",
			wantStatus: testreport.StatusPass,
		},
		{
			name:       "failing module",
			body:       "package m\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(1, 2); got != 4 {\n\t\tt.Errorf(\"Add(1, 2) = %d, want 4\", got)\n\t}\n}\n",
			testSuite:  artifact.Summary{Passed: 1, Failed: 1},
			wantCase:   "TestAdd",
			wantStatus: testreport.StatusFail,
			wantMsg:    "x_test.go:7: Add(1, 2) = 3, want 4",
		},
		{
			name:       "module whose tests do not build",
			body:       "package m\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) { Sub(1, 2) }\n",
			testSuite:  artifact.Summary{Passed: 1, Error: 1},
			wantCase:   testreport.CaseBuildFailed,
			wantStatus: testreport.StatusError,
			wantMsg:    "build failed: ./x_test.go:5:30: undefined: Sub",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := goModule(t, tt.body)
			suites, _, err := Detect(dir, DetectOptions{})
			if err != nil {
				t.Fatal(err)
			}
			opt := options(t, dir)
			opt.Env = goEnv(t)
			var live syncbuf.Buffer
			opt.Stream = &live
			report, info, err := Run(context.Background(), suites, opt)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if report.Status != artifact.TestCompleted || report.OverallPass != tt.pass {
				t.Fatalf("report status %q overall_pass %v, want completed %v: %+v", report.Status, report.OverallPass, tt.pass, report)
			}
			if info.Sandbox != SandboxNone {
				t.Errorf("sandbox %q, want none", info.Sandbox)
			}
			test := report.Suites[0]
			if test.ID != "go-test" || test.Kind != KindTest || test.Command != "go test -json ./..." || test.Log != "test/logs/go-test.log" {
				t.Errorf("go-test suite header = %+v", test)
			}
			if test.Summary != tt.testSuite {
				t.Errorf("go-test summary %+v, want %+v; cases %+v", test.Summary, tt.testSuite, test.Cases)
			}
			c := artifacttest.FindCase(t, test.Cases, tt.wantCase)
			if c.Status != tt.wantStatus || c.Message != tt.wantMsg {
				t.Errorf("case %s = {%q %q}, want {%q %q}", tt.wantCase, c.Status, c.Message, tt.wantStatus, tt.wantMsg)
			}
			if tt.pass != test.OverallPass || (test.ExitCode == 0) != tt.pass {
				t.Errorf("go-test exit %d overall_pass %v, want pass %v", test.ExitCode, test.OverallPass, tt.pass)
			}
			vet := report.Suites[1]
			if vet.ID != "go-vet" || vet.Kind != KindLint {
				t.Errorf("second suite = %+v, want go-vet lint", vet)
			}
			// go vet is a lint suite: counted apart, not in the tests'.
			if report.Summary != test.Summary {
				t.Errorf("report summary %+v is not the test suite's %+v (lint %+v)", report.Summary, test.Summary, vet.Summary)
			}
			// The log holds readable text, not JSON events.
			log, err := os.ReadFile(filepath.Join(opt.LogDir, "go-test.log"))
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(log, []byte(`"Action"`)) || !bytes.Contains(log, []byte("example.com/m")) {
				t.Errorf("go-test log is not the plain test output:\n%s", log)
			}
			if !strings.Contains(live.String(), "=== orch: suite go-vet (lint): go vet ./...") {
				t.Errorf("live stream lacks the go-vet header:\n%s", live.String())
			}
		})
	}
}

func TestRunExitCodeSuites(t *testing.T) {
	tests := []struct {
		name    string
		suites  []Suite
		pass    bool
		exits   []int
		summary artifact.Summary
	}{
		{
			name:    "all pass",
			suites:  []Suite{sh("one", "echo hi"), {Name: "lint", Kind: KindLint, Command: []string{"true"}}},
			pass:    true,
			exits:   []int{0, 0},
			summary: artifact.Summary{Passed: 1}, // the lint suite is not counted
		},
		{
			name:    "one fails",
			suites:  []Suite{sh("one", "echo hi"), sh("two", "echo bad >&2; exit 3")},
			exits:   []int{0, 3},
			summary: artifact.Summary{Passed: 1, Failed: 1},
		},
		{
			name:    "a failing lint fails the report",
			suites:  []Suite{sh("tests", "true"), {Name: "vet", Kind: KindLint, Command: []string{"false"}}},
			exits:   []int{0, 1},
			summary: artifact.Summary{Passed: 1},
		},
		{
			name:    "killed by a signal",
			suites:  []Suite{sh("sig", "kill -KILL $$")},
			exits:   []int{137},
			summary: artifact.Summary{Failed: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			opt := options(t, dir)
			report, _, err := Run(context.Background(), tt.suites, opt)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if report.Status != artifact.TestCompleted || report.OverallPass != tt.pass || report.Error != "" {
				t.Fatalf("report %+v, want completed, overall_pass %v", report, tt.pass)
			}
			var exits []int
			for i, s := range report.Suites {
				exits = append(exits, s.ExitCode)
				if s.OverallPass != (s.ExitCode == 0) {
					t.Errorf("suite %s exit %d overall_pass %v", s.ID, s.ExitCode, s.OverallPass)
				}
				c := artifacttest.FindCase(t, s.Cases, tt.suites[i].Name)
				if s.ExitCode != 0 && c.Message != "exited with status "+strconv.Itoa(s.ExitCode)+" (judged by its exit code)" {
					t.Errorf("case message %q", c.Message)
				}
				if s.JudgedBy != artifact.JudgedByExitCode {
					t.Errorf("suite %s judged_by %q, want %q", s.ID, s.JudgedBy, artifact.JudgedByExitCode)
				}
			}
			if !slices.Equal(exits, tt.exits) {
				t.Errorf("exit codes %v, want %v", exits, tt.exits)
			}
			if report.Summary != tt.summary {
				t.Errorf("summary %+v, want %+v", report.Summary, tt.summary)
			}
		})
	}
}

func TestRunNoSuites(t *testing.T) {
	report, _, err := Run(context.Background(), nil, Options{})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if report.Status != artifact.TestNoTests || report.OverallPass || report.Error != NoTestsMessage || report.Suites == nil {
		t.Errorf("report %+v, want no_tests, not passing, NoTestsMessage, empty suites", report)
	}
	_, info, _ := Run(context.Background(), nil, Options{Sandbox: SandboxNone})
	if info.Sandbox != SandboxNone {
		t.Errorf("no suites with sandbox none: RunInfo.Sandbox %q", info.Sandbox)
	}
	_, info, _ = Run(context.Background(), nil, Options{Sandbox: SandboxAuto})
	if info.Sandbox != "" {
		t.Errorf("no suites, nothing sandboxed: RunInfo.Sandbox %q, want empty", info.Sandbox)
	}
}

func TestRunCommandNotFound(t *testing.T) {
	dir := t.TempDir()
	opt := options(t, dir)
	suites := []Suite{
		{Name: "missing", Kind: KindTest, Command: []string{"orch-no-such-command-xyz", "--flag"}},
		{Name: "missing-rel", Kind: KindTest, Command: []string{"./not-here.sh"}},
		sh("ok", "true"),
	}
	report, _, err := Run(context.Background(), suites, opt)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if report.Status != artifact.TestError || report.OverallPass {
		t.Fatalf("report status %q overall_pass %v, want error, false", report.Status, report.OverallPass)
	}
	for _, want := range []string{"suite missing: command not found: orch-no-such-command-xyz", "suite missing-rel: command not found: ./not-here.sh"} {
		if !strings.Contains(report.Error, want) {
			t.Errorf("report error %q lacks %q", report.Error, want)
		}
	}
	s := report.Suites[0]
	if s.ExitCode != 127 || s.OverallPass || s.Summary.Error != 1 {
		t.Errorf("missing suite = %+v, want exit 127, one error case", s)
	}
	if c := artifacttest.FindCase(t, s.Cases, caseCommand); c.Status != testreport.StatusError {
		t.Errorf("case %+v", c)
	}
	if !report.Suites[2].OverallPass {
		t.Errorf("the suite after a missing command did not run: %+v", report.Suites[2])
	}
	log, err := os.ReadFile(filepath.Join(opt.LogDir, "missing.log"))
	if err != nil || !strings.Contains(string(log), "command not found") {
		t.Errorf("log of the missing suite: %q, %v", log, err)
	}
}

func TestRunInvalid(t *testing.T) {
	dir := t.TempDir()
	good := sh("ok", "true")
	tests := []struct {
		name    string
		suites  []Suite
		mutate  func(*Options)
		wantErr error
	}{
		{"bad name", []Suite{sh("../x", "true")}, nil, ErrInvalidSuite},
		{"dot name", []Suite{sh("..", "true")}, nil, ErrInvalidSuite},
		{"duplicate name", []Suite{good, good}, nil, ErrInvalidSuite},
		{"empty command", []Suite{{Name: "e", Kind: KindTest}}, nil, ErrInvalidSuite},
		{"bad kind", []Suite{{Name: "k", Kind: "bench", Command: []string{"true"}}}, nil, ErrInvalidSuite},
		{"bad format", []Suite{{Name: "f", Kind: KindTest, Command: []string{"true"}, Format: "xunit"}}, nil, ErrInvalidSuite},
		{"report glob with **", []Suite{{Name: "j", Kind: KindTest, Command: []string{"true"}, Format: FormatJUnit, Report: "build/**/*.xml"}}, nil, ErrInvalidSuite},
		{"bad report glob", []Suite{{Name: "j", Kind: KindTest, Command: []string{"true"}, Format: FormatJUnit, Report: "build/[.xml"}}, nil, ErrInvalidSuite},
		{"setup with an empty command", []Suite{good}, func(o *Options) { o.Setup = []Suite{{Command: nil}} }, ErrInvalidSuite},
		{"junit without report", []Suite{{Name: "j", Kind: KindTest, Command: []string{"true"}, Format: FormatJUnit}}, nil, ErrInvalidSuite},
		{"report escaping the directory", []Suite{{Name: "j", Kind: KindTest, Command: []string{"true"}, Format: FormatJUnit, Report: "../r.xml"}}, nil, ErrInvalidSuite},
		{"absolute report", []Suite{{Name: "j", Kind: KindTest, Command: []string{"true"}, Format: FormatJUnit, Report: "/tmp/r.xml"}}, nil, ErrInvalidSuite},
		{"no directory", []Suite{good}, func(o *Options) { o.Dir = "" }, ErrInvalidOptions},
		{"missing directory", []Suite{good}, func(o *Options) { o.Dir = filepath.Join(dir, "nope") }, ErrInvalidOptions},
		{"no log directory", []Suite{good}, func(o *Options) { o.LogDir = "" }, ErrInvalidOptions},
		{"unknown sandbox", []Suite{good}, func(o *Options) { o.Sandbox = "docker" }, ErrInvalidOptions},
		{"negative log cap", []Suite{good}, func(o *Options) { o.MaxLogBytes = -1 }, ErrInvalidOptions},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opt := options(t, dir)
			if tt.mutate != nil {
				tt.mutate(&opt)
			}
			report, _, err := Run(context.Background(), tt.suites, opt)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if report.Status != artifact.TestError || report.Error == "" || report.OverallPass {
				t.Errorf("report %+v, want status error with the error set", report)
			}
		})
	}
}

// hangScript starts a child and a grandchild, records every pid in the
// file pids and prints "up 42" once all run. exitCode is the shell's after
// orch stopped it.
type hangScript struct {
	name     string
	script   string
	exitCode int
}

func hangScripts() []hangScript {
	return []hangScript{
		{
			name: "plain",
			script: `echo $$ > pids
sleep 300 & echo $! >> pids
sh -c 'sleep 300 & echo $! >> pids; wait' & echo $! >> pids
until [ "$(wc -l < pids)" -ge 4 ]; do sleep 0.01; done
echo "up $((40 + 2))"; wait`,
			exitCode: 128 + 15,
		},
		{
			name: "ignores TERM",
			script: `trap '' TERM
echo $$ > pids
sleep 300 & echo $! >> pids
sh -c 'trap "" TERM; sleep 300 & echo $! >> pids; wait' & echo $! >> pids
until [ "$(wc -l < pids)" -ge 4 ]; do sleep 0.01; done
echo "up $((40 + 2))"; wait`,
			exitCode: 128 + 9,
		},
	}
}

func TestRunTimeoutKillsProcessGroup(t *testing.T) {
	for _, tt := range hangScripts() {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			opt := options(t, dir)
			s := sh("hang", tt.script)
			s.Timeout = time.Second
			report, _, err := Run(context.Background(), []Suite{s}, opt)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if report.Status != artifact.TestCompleted || report.OverallPass {
				t.Errorf("report status %q overall_pass %v, want completed, false", report.Status, report.OverallPass)
			}
			res := report.Suites[0]
			c := artifacttest.FindCase(t, res.Cases, caseTimeout)
			if c.Status != testreport.StatusFail || c.Message != "timed out after 1s" {
				t.Errorf("timeout case %+v", c)
			}
			if res.ExitCode != tt.exitCode || res.OverallPass || res.Summary.Failed != 1 {
				t.Errorf("suite exit %d overall_pass %v summary %+v, want exit %d, failed", res.ExitCode, res.OverallPass, res.Summary, tt.exitCode)
			}
			pids := readPids(t, filepath.Join(dir, "pids"))
			if len(pids) != 4 {
				t.Fatalf("script recorded pids %v, want 4 (shell, child, sub-shell, grandchild)", pids)
			}
			for _, pid := range pids {
				if procstat.Live(pid) {
					t.Errorf("pid %d still runs after Run returned", pid)
				}
			}
			log, _ := os.ReadFile(filepath.Join(opt.LogDir, "hang.log"))
			if !strings.Contains(string(log), "timed out after 1s; stopping every process of the suite") {
				t.Errorf("log lacks the timeout note:\n%s", log)
			}
		})
	}
}

func TestRunStopsLeftoverProcesses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	opt := options(t, dir)
	report, info, err := Run(context.Background(), []Suite{sh("daemon", "sleep 300 & echo $! > pid; echo done")}, opt)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !report.OverallPass {
		t.Errorf("a suite that exited 0 did not pass: %+v", report)
	}
	for _, pid := range readPids(t, filepath.Join(dir, "pid")) {
		if procstat.Live(pid) {
			t.Errorf("background pid %d outlived the suite", pid)
		}
	}
	if !slices.ContainsFunc(info.Notes, func(n string) bool { return strings.Contains(n, "left processes running") }) {
		t.Errorf("notes %q do not mention the leftover process", info.Notes)
	}
}

func TestRunCancel(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	opt := options(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Cancel as soon as the suite says it is running.
	opt.Stream = &triggerWriter{trigger: "up 42", fire: cancel}
	s := sh("hang", hangScripts()[0].script)
	report, _, err := Run(ctx, []Suite{s, sh("never", "true")}, opt)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if report.Status != artifact.TestError || !strings.Contains(report.Error, "cancelled after 1 of 2 suites") {
		t.Errorf("report status %q error %q", report.Status, report.Error)
	}
	if len(report.Suites) != 1 {
		t.Fatalf("suites %+v, want only the cancelled one", report.Suites)
	}
	if c := artifacttest.FindCase(t, report.Suites[0].Cases, caseCancelled); c.Status != testreport.StatusError {
		t.Errorf("cancel case %+v", c)
	}
	for _, pid := range readPids(t, filepath.Join(dir, "pids")) {
		if procstat.Live(pid) {
			t.Errorf("pid %d still runs after Run returned", pid)
		}
	}
}

// triggerWriter calls fire once when the written text contains trigger.
type triggerWriter struct {
	mu      sync.Mutex
	seen    bytes.Buffer
	trigger string
	fire    func()
	fired   bool
}

func (w *triggerWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen.Write(p)
	if !w.fired && strings.Contains(w.seen.String(), w.trigger) {
		w.fired = true
		w.fire()
	}
	return len(p), nil
}

func TestRunCapsOutput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	opt := options(t, dir)
	opt.MaxLogBytes = 1 << 20
	var live countingWriter
	opt.Stream = &live
	const total = 50 << 20
	report, _, err := Run(context.Background(), []Suite{sh("loud", fmt.Sprintf("head -c %d /dev/zero | tr '\\0' '\\132'", total))}, opt)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !report.OverallPass {
		t.Errorf("report %+v", report)
	}
	path := filepath.Join(opt.LogDir, "loud.log")
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	const markers = 1024 // header, cap marker, dropped count, footer
	if info.Size() > opt.MaxLogBytes+markers {
		t.Errorf("log is %d bytes, want at most %d + markers", info.Size(), opt.MaxLogBytes)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := int64(bytes.Count(data, []byte("Z"))); got != opt.MaxLogBytes {
		t.Errorf("log keeps %d bytes of output, want exactly the cap %d", got, opt.MaxLogBytes)
	}
	for _, want := range []string{
		"[orch: output reached the 1048576-byte log cap; further output is dropped]",
		fmt.Sprintf("[orch: %d bytes of output dropped]", total-opt.MaxLogBytes),
	} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("log lacks %q", want)
		}
	}
	if live.n.Load() > opt.MaxLogBytes+markers {
		t.Errorf("live stream got %d bytes, want it capped too", live.n.Load())
	}
}

// TestRunFiltersEnv: suites get the allow-list plus env_allow, with and
// without the sandbox; the secrets that passed orch's earlier name filter
// do not reach them, and the report names what passed, never a value.
func TestRunFiltersEnv(t *testing.T) {
	secrets := []string{
		"DATABASE_URL=postgres://orch:leak-db@db.invalid/app", "SENTRY_DSN=https://leak-sentry@sentry.invalid/1",
		"SLACK_WEBHOOK_URL=https://hooks.slack.invalid/leak-slack", "GH_PAT=ghp_leak-pat", "NPM_AUTH=leak-npm",
		"DOCKER_AUTH_CONFIG={\"auths\":\"leak-docker\"}", "NODE_AUTH_TOKEN=leak-node",
		"FAKE_API_KEY=leak-key", "GITHUB_TOKEN=leak-gh", "OPENAI_BASE_URL=leak-openai", "PLAIN_VAR=leak-plain",
	}
	for _, mode := range sandboxModes() {
		t.Run(mode, func(t *testing.T) {
			requireMode(t, mode)
			t.Parallel()
			dir := t.TempDir()
			opt := options(t, dir)
			opt.Sandbox = mode
			opt.Env = append(slices.Clone(os.Environ()), append(slices.Clone(secrets), "ALLOWED_TOKEN=visible", "MYAPP_MODE=visible-too", "NODE_ENV=test")...)
			opt.AllowEnv = []string{"ALLOWED_TOKEN", "MYAPP_*"}
			s := sh("env", "env > env.txt")
			s.Env = map[string]string{"SUITE_VAR": "from-config"}
			report, info, err := Run(context.Background(), []Suite{s}, opt)
			if err != nil || !report.OverallPass {
				t.Fatalf("Run: %+v, %v", report, err)
			}
			env := gittest.ReadFile(t, filepath.Join(dir, "env.txt"))
			for _, kv := range secrets {
				name, value, _ := strings.Cut(kv, "=")
				if strings.Contains(env, name+"=") || strings.Contains(env, value) {
					t.Errorf("%s reached the suite", name)
				}
			}
			for _, want := range []string{"ALLOWED_TOKEN=visible", "MYAPP_MODE=visible-too", "NODE_ENV=test", "SUITE_VAR=from-config", "PATH="} {
				if !strings.Contains(env, want) {
					t.Errorf("the suite did not see %q", want)
				}
			}
			notes := strings.Join(info.Notes, "\n")
			for _, name := range []string{"ALLOWED_TOKEN", "MYAPP_MODE", "NODE_ENV", "PATH"} {
				if !slices.Contains(info.Env, name) || !strings.Contains(notes, name) {
					t.Errorf("RunInfo.Env %q and the notes do not name %s", info.Env, name)
				}
			}
			for _, v := range []string{"visible", "leak", os.Getenv("PATH")} {
				if v != "" && (strings.Contains(notes, "="+v) || strings.Contains(notes, " "+v)) {
					t.Errorf("the notes show the value %q:\n%s", v, notes)
				}
			}
		})
	}
}

func TestRunJUnitSuites(t *testing.T) {
	fixture, err := filepath.Abs("../testreport/testdata/junit/pytest.xml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		script   string
		stale    bool // a passing report from an earlier run is present
		summary  artifact.Summary
		wantCase string
		wantMsg  string
		wantNote bool
		runner   bool // a runner error (status error), not a test failure
	}{
		{
			name:     "report written",
			script:   "cp " + shellQuote(fixture) + " out/report.xml; exit 1",
			summary:  artifact.Summary{Passed: 2, Failed: 1, Skipped: 2, Error: 1},
			wantCase: "test_fails",
			wantMsg:  "AssertionError: strings differ",
		},
		{
			name:     "stale report is not read",
			script:   "exit 0",
			stale:    true,
			summary:  artifact.Summary{Error: 1},
			wantCase: caseCommand,
			wantMsg:  "exited with status 0 and left no readable JUnit report at out/report.xml (the suite wrote no JUnit report at out/report.xml): check the suite's command and report path, and that its tools and dependencies are available offline in the sandbox",
			wantNote: true,
			runner:   true,
		},
		{
			name:     "no report and a compile error: the change's failure",
			script:   "echo '[ERROR] COMPILATION ERROR :'; exit 1",
			summary:  artifact.Summary{Error: 1},
			wantCase: caseReport,
			wantMsg:  "the suite wrote no JUnit report at out/report.xml",
			wantNote: true,
		},
		{
			name:     "pytest collected nothing",
			script:   "printf '<testsuites><testsuite name=\"pytest\" tests=\"0\"/></testsuites>' > out/report.xml; echo 'no tests ran in 0.01s'; exit 5",
			summary:  artifact.Summary{Error: 1},
			wantCase: caseCommand,
			wantMsg:  "exited with status 5 and its JUnit report holds no test (last line: no tests ran in 0.01s): no test ran (pytest exits 5 when it collects none). Check the suite's command and test paths",
			runner:   true,
		},
		{
			name:     "broken report",
			script:   "printf '<testsuite><testcase name=\"a\"/><testcase' > out/report.xml",
			summary:  artifact.Summary{Passed: 1, Error: 1},
			wantCase: caseReport,
			wantNote: true,
		},
		{
			name:     "exit status without failing case",
			script:   "printf '<testsuite><testcase name=\"a\"/></testsuite>' > out/report.xml; exit 4",
			summary:  artifact.Summary{Passed: 1, Failed: 1},
			wantCase: caseExit,
			wantMsg:  "exited with status 4 without a failing test case",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if tt.stale {
				gittest.WriteFiles(t, dir, map[string]string{"out/report.xml": `<testsuite><testcase name="old"/></testsuite>`})
			}
			opt := options(t, dir)
			s := Suite{Name: "junit", Kind: KindTest, Command: []string{"sh", "-c", tt.script}, Format: FormatJUnit, Report: "out/report.xml"}
			report, info, err := Run(context.Background(), []Suite{s}, opt)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			wantStatus := artifact.TestCompleted
			if tt.runner {
				wantStatus = artifact.TestError
			}
			if report.Status != wantStatus || report.OverallPass {
				t.Errorf("report status %q overall_pass %v, want %s, false", report.Status, report.OverallPass, wantStatus)
			}
			res := report.Suites[0]
			if res.Summary != tt.summary {
				t.Errorf("summary %+v, want %+v; cases %+v", res.Summary, tt.summary, res.Cases)
			}
			c := artifacttest.FindCase(t, res.Cases, tt.wantCase)
			if tt.wantMsg != "" && c.Message != tt.wantMsg {
				t.Errorf("case %s message %q, want %q", tt.wantCase, c.Message, tt.wantMsg)
			}
			reportNote := slices.ContainsFunc(info.Notes, func(n string) bool { return strings.HasPrefix(n, "suite junit: ") && strings.Contains(n, "report") })
			if reportNote != tt.wantNote {
				t.Errorf("notes %q, want a report note: %v", info.Notes, tt.wantNote)
			}
		})
	}
}

func TestRunReportSymlinkStaysInside(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret.xml")
	gittest.WriteFiles(t, filepath.Dir(outside), map[string]string{"secret.xml": `<testsuite><testcase name="outside"/></testsuite>`})
	opt := options(t, dir)
	s := Suite{Name: "junit", Kind: KindTest, Format: FormatJUnit, Report: "r.xml",
		Command: []string{"sh", "-c", "ln -s " + shellQuote(outside) + " r.xml"}}
	report, _, err := Run(context.Background(), []Suite{s}, opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range report.Suites[0].Cases {
		if c.Name == "outside" {
			t.Fatalf("a report symlinked outside the directory was read: %+v", report.Suites[0].Cases)
		}
	}
	// A report orch may not read is the runner's error.
	if c := artifacttest.FindCase(t, report.Suites[0].Cases, caseCommand); report.Status != artifact.TestError || !strings.Contains(c.Message, "path escapes") {
		t.Errorf("report status %s, case %+v: want a runner error about the report", report.Status, c)
	}
}

func TestRunSandboxModes(t *testing.T) {
	// With no bwrap on PATH the sandbox fails closed: "auto" (also "") and
	// "bwrap" refuse before anything runs and say how to install
	// bubblewrap or opt out; "none" runs and records the opt-out.
	t.Setenv("PATH", t.TempDir())
	for _, mode := range []string{SandboxAuto, "", SandboxBwrap} {
		t.Run("mode "+mode, func(t *testing.T) {
			dir := t.TempDir()
			opt := options(t, dir)
			opt.Env = []string{"PATH=/usr/bin:/bin"}
			opt.Sandbox = mode
			report, info, err := Run(context.Background(), []Suite{sh("ok", "touch ran")}, opt)
			if !errors.Is(err, ErrNoSandbox) || report.Status != artifact.TestError || report.OverallPass {
				t.Fatalf("status %q err %v, want error and ErrNoSandbox", report.Status, err)
			}
			for _, want := range []string{"apt-get install bubblewrap", `sandbox = "none"`, "--sandbox none"} {
				if !strings.Contains(report.Error, want) {
					t.Errorf("refusal %q does not say %q", report.Error, want)
				}
			}
			if info.Sandbox != "" || len(report.Suites) != 0 {
				t.Errorf("info %+v suites %+v, want no sandbox recorded and no suite", info, report.Suites)
			}
			if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
				t.Errorf("the suite ran although the sandbox was refused")
			}
			if err := sandbox.Check(mode); !errors.Is(err, ErrNoSandbox) {
				t.Errorf("sandbox.Check(%q) = %v, want ErrNoSandbox", mode, err)
			}
		})
	}
	t.Run("none is the explicit opt-out", func(t *testing.T) {
		dir := t.TempDir()
		opt := options(t, dir)
		opt.Env = []string{"PATH=/usr/bin:/bin"}
		report, info, err := Run(context.Background(), []Suite{sh("ok", "touch ran")}, opt)
		if err != nil || !report.OverallPass {
			t.Fatalf("none: %+v, %v", report, err)
		}
		if info.Sandbox != SandboxNone || !slices.ContainsFunc(info.Notes, func(n string) bool {
			return strings.Contains(n, `sandbox disabled (sandbox "none", an explicit opt-out)`)
		}) {
			t.Errorf("info %+v, want sandbox none and the opt-out noted", info)
		}
		if err := sandbox.Check(SandboxNone); err != nil {
			t.Errorf("sandbox.Check(none) = %v", err)
		}
	})
	if err := sandbox.Check("docker"); !errors.Is(err, sandbox.ErrInvalidMode) {
		t.Errorf("sandbox.Check(docker) = %v, want ErrInvalidMode", err)
	}
}
