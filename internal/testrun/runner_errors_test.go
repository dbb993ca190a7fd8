package testrun

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/gittest"
)

// TestRunRunnerErrorsAreNotTestFailures: what keeps the tests from running
// makes the report "error" (or "no_tests"), never a failed test that would
// send the change back to codegen.
func TestRunRunnerErrorsAreNotTestFailures(t *testing.T) {
	libtest, err := os.ReadFile("../testreport/testdata/libtest/no-fail-fast.txt")
	if err != nil {
		t.Fatal(err)
	}
	fixture := filepath.Join(t.TempDir(), "cargo.txt")
	if err := os.WriteFile(fixture, libtest, 0o644); err != nil {
		t.Fatal(err)
	}
	// Recorded output of Maven and Gradle stopping offline for something
	// they would have to download (testdata/offline).
	recorded := func(name string) string {
		p, err := filepath.Abs(filepath.Join("testdata", "offline", name))
		if err != nil {
			t.Fatal(err)
		}
		return "cat " + shellQuote(p) + "; exit 1"
	}
	tests := []struct {
		name    string
		suite   Suite
		status  string
		msg     string // in the report's error
		summary artifact.Summary
		pass    bool
	}{
		{
			name:   "a missing tool in a shell command (exit 127)",
			suite:  sh("jest", "jest --ci"),
			status: artifact.TestError,
			msg:    "jest: not found (exit status 127)",
		},
		{
			name:   "a missing tool in an npm-like script (exit 127 after output)",
			suite:  sh("npm-test", "echo '> node --test && tsd'; echo 'sh: 1: tsd: not found' >&2; exit 127"),
			status: artifact.TestError,
			msg:    "sh: 1: tsd: not found (exit status 127)",
		},
		{
			// Vitest whose Vite bundles its config into a read-only
			// node_modules/.vite-temp (issue 21: reported as 0 passed, 1
			// failed and sent to codegen).
			name: "a runner that cannot start (EROFS) before any test",
			suite: Suite{Name: "npm-test", Kind: KindTest, Format: FormatTAP, Command: []string{"sh", "-c",
				"echo '> vitest run'; echo 'failed to load config from /w/vitest.config.ts' >&2; echo \"Error: EROFS: read-only file system, open '/w/node_modules/.vite-temp/vitest.config.ts.timestamp-1-abc.mjs'\" >&2; exit 1"}},
			status: artifact.TestError,
			msg:    "the test runner stopped before it ran any test (failed to load config from /w/vitest.config.ts)",
		},
		{
			// rankangkang/node-lib-starter: the top's pnpm -F run test
			// stops at a member's placeholder before any test.
			name:   "a workspace member's placeholder test script",
			suite:  Suite{Name: "pnpm-test", Kind: KindTest, Format: FormatTAP, Command: []string{"sh", "-c", "echo '> pnpm -F !example* run test'; echo 'packages/bar test: Error: no test specified'; echo ' ERR_PNPM_RECURSIVE_RUN_FIRST_FAIL  bar@1.0.0 test: `echo \"Error: no test specified\" && exit 1`'; exit 1"}},
			status: artifact.TestError,
			msg:    "the test runner stopped before it ran any test (packages/bar test: Error: no test specified)",
		},
		{
			name:   "mocha that cannot load a module",
			suite:  Suite{Name: "npm-test", Kind: KindTest, Format: FormatTAP, Command: []string{"sh", "-c", "echo \"Error: Cannot find module 'chai'\" >&2; exit 1"}},
			status: artifact.TestError,
			msg:    "Cannot find module 'chai'",
		},
		{
			name:    "a failing Mocha test that mentions a missing module is a failure",
			suite:   Suite{Name: "npm-test", Kind: KindTest, Format: FormatTAP, Command: []string{"sh", "-c", "printf '  0 passing (1ms)\\n  1 failing\\n\\n  1) loads:\\n     Error: Cannot find module x\\n'; exit 1"}},
			status:  artifact.TestCompleted,
			summary: artifact.Summary{Failed: 1},
		},
		{
			name:   "a missing tool in a make recipe (make exits 2)",
			suite:  sh("make", "echo 'make: jest: No such file or directory' >&2; echo 'make: *** [Makefile:2: test] Error 127' >&2; exit 2"),
			status: artifact.TestError,
			msg:    "make: jest: No such file or directory (exit status 127 inside, 2 outside)",
		},
		{
			name:   "a missing program in the array form",
			suite:  Suite{Name: "missing", Kind: KindTest, Command: []string{"no-such-runner-xyz"}},
			status: artifact.TestError,
			msg:    "command not found: no-such-runner-xyz is not in PATH",
		},
		{
			name: "pytest collection errors",
			suite: Suite{Name: "pytest", Kind: KindTest, Format: FormatJUnit, Report: "r.xml", Command: []string{"sh", "-c",
				`printf '<testsuites><testsuite name="pytest" errors="1" tests="1"><testcase classname="" name="tests.test_a"><error message="collection failure">ImportError while importing test module\nE   ModuleNotFoundError: No module named %s</error></testcase></testsuite></testsuites>' "'cachetools'" > r.xml; exit 2`}},
			status: artifact.TestError,
			msg:    "1 test module(s) failed to import (first: tests.test_a: ModuleNotFoundError: No module named 'cachetools')",
		},
		{
			name:   "cargo stops before building anything",
			suite:  Suite{Name: "cargo", Kind: KindTest, Format: FormatLibtest, Command: []string{"sh", "-c", "echo 'error: failed to get `serde` as a dependency of package `x`' >&2; exit 101"}},
			status: artifact.TestError,
			msg:    "cargo exited with status 101 before building or running any test (error: failed to get `serde` as a dependency of package `x`)",
		},
		{
			// rust-lang/rustc-demangle: its optional dependency cannot be
			// resolved offline; cargo warns of a "spurious network
			// error" three times first, and that warning was quoted.
			name: "cargo's network warnings before its error",
			suite: Suite{Name: "cargo", Kind: KindTest, Format: FormatLibtest, Command: []string{"sh", "-c", "printf '%s\\n' " +
				"'    Updating crates.io index' " +
				"'warning: spurious network error (3 tries remaining): [6] Could not resolve hostname (Could not resolve host: index.crates.io)' " +
				"'error: failed to get `rustc-std-workspace-core` as a dependency of package `rustc-demangle v0.1.27 (/w)`' '' 'Caused by:' '  download of config.json failed' >&2; exit 101"}},
			status: artifact.TestError,
			msg:    "cargo exited with status 101 before building or running any test (error: failed to get `rustc-std-workspace-core` as a dependency of package `rustc-demangle v0.1.27 (/w)`)",
		},
		{
			name:   "go test without a module",
			suite:  Suite{Name: "go", Kind: KindTest, Format: FormatGoJSON, Command: []string{"sh", "-c", "echo 'go: cannot find main module' >&2; exit 1"}},
			status: artifact.TestError,
			msg:    "go test exited with status 1 before reporting any test or build result (last line: go: cannot find main module)",
		},
		{
			name:   "Maven offline without the parent POM (apache/commons-cli)",
			suite:  Suite{Name: "maven", Kind: KindTest, Format: FormatJUnit, Report: SurefireReports, Command: []string{"sh", "-c", recorded("maven-parent.txt")}},
			status: artifact.TestError,
			msg:    "the parent POM org.apache.commons:commons-parent:pom:104 of commons-cli:commons-cli is not in ~/.m2/repository. Maven runs offline in the sandbox (there is no network) and finds only what is in your ~/.m2/repository (shown read-only). Download it once in your working tree, outside orch: mvn -B dependency:go-offline",
		},
		{
			name:   "Maven offline without a plugin",
			suite:  Suite{Name: "maven", Kind: KindTest, Format: FormatJUnit, Report: SurefireReports, Command: []string{"sh", "-c", recorded("maven-plugin.txt")}},
			status: artifact.TestError,
			msg:    "the Maven plugin org.apache.maven.plugins:maven-resources-plugin:2.6 (or one of its dependencies) is not in ~/.m2/repository",
		},
		{
			// Gradle says compileTestJava FAILED, which alone would be a
			// compile error of the change.
			name:   "Gradle offline without a dependency",
			suite:  Suite{Name: "gradle", Kind: KindTest, Format: FormatJUnit, Report: GradleReports, Command: []string{"sh", "-c", recorded("gradle-no-cached-version.txt")}},
			status: artifact.TestError,
			msg:    "junit:junit:4.13.2 is not in your ~/.gradle/caches",
		},
		{
			// Recorded: pnpm 10.21 with packageManager pnpm@10.14.0-0 in
			// the sandbox before ~/.local/share/pnpm/.tools was shown.
			name:   "pnpm fails before the script runs",
			suite:  Suite{Name: "pnpm", Kind: KindTest, Format: FormatTAP, Command: []string{"sh", "-c", `printf '\342\200\211ERROR\342\200\211 EACCES: permission denied, mkdir '"'"'/root/.local/share/pnpm/.tools/pnpm/10.14.0-0_tmp_3'"'"'\nFor help, run: pnpm help run\n'; exit 1`}},
			status: artifact.TestError,
			msg:    "pnpm stopped before it ran the script (EACCES: permission denied, mkdir '/root/.local/share/pnpm/.tools/pnpm/10.14.0-0_tmp_3')",
		},
		{
			name:    "a failing pnpm script is a test failure",
			suite:   Suite{Name: "pnpm", Kind: KindTest, Format: FormatTAP, Command: []string{"sh", "-c", `echo 'Tests:       1 failed, 2 passed, 3 total'; echo ' ELIFECYCLE  Test failed. See above for more details.'; exit 1`}},
			status:  artifact.TestCompleted,
			summary: artifact.Summary{Passed: 2, Failed: 1},
		},
		{
			name:    "a suite that ran no test",
			suite:   Suite{Name: "empty", Kind: KindTest, Format: FormatTAP, Command: []string{"sh", "-c", "printf 'TAP version 13\\n1..0\\n# tests 0\\n'"}},
			status:  artifact.TestNoTests,
			msg:     "the test suites ran no test",
			summary: artifact.Summary{},
		},
		{
			name:    "libtest counts across binaries",
			suite:   Suite{Name: "cargo", Kind: KindTest, Format: FormatLibtest, Command: []string{"sh", "-c", "cat " + shellQuote(fixture) + "; exit 101"}},
			status:  artifact.TestCompleted,
			summary: artifact.Summary{Passed: 3, Failed: 2, Skipped: 1},
		},
		{
			name:    "TAP without TAP: judged by the exit code",
			suite:   Suite{Name: "jest", Kind: KindTest, Format: FormatTAP, Command: []string{"sh", "-c", "echo 'Tests: 3 passed'"}},
			status:  artifact.TestCompleted,
			summary: artifact.Summary{Passed: 1},
			pass:    true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			report, _, err := Run(context.Background(), []Suite{tt.suite}, options(t, dir))
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if report.Status != tt.status || report.OverallPass != tt.pass {
				t.Fatalf("report status %s overall_pass %v (error %q), want %s", report.Status, report.OverallPass, report.Error, tt.status)
			}
			if !strings.Contains(report.Error, tt.msg) {
				t.Errorf("report error %q lacks %q", report.Error, tt.msg)
			}
			if tt.status == artifact.TestCompleted && report.Summary != tt.summary {
				t.Errorf("summary %+v, want %+v", report.Summary, tt.summary)
			}
			if tt.status == artifact.TestError && (report.Summary.Failed != 0 || report.Suites[0].Summary.Failed != 0) {
				t.Errorf("a runner error counted as a failed test: %+v", report.Suites[0])
			}
		})
	}
}

func TestRunJudgedByExitCodeSaysSo(t *testing.T) {
	t.Parallel()
	report, info, err := Run(context.Background(), []Suite{{Name: "tap", Kind: KindTest, Format: FormatTAP, Command: []string{"true"}}}, options(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	s := report.Suites[0]
	if s.JudgedBy != artifact.JudgedByExitCode || !s.OverallPass {
		t.Errorf("suite %+v: want passed, judged by exit code", s)
	}
	if !containsNote(info.Notes, "judged by its exit code") {
		t.Errorf("notes %q do not say the suite was judged by its exit code", info.Notes)
	}
}

func containsNote(notes []string, s string) bool {
	for _, n := range notes {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

func TestRunJUnitFolderAndGlob(t *testing.T) {
	const stale = `<testsuite><testcase name="stale"/></testsuite>`
	write := func(name, cases string) string {
		return "mkdir -p " + filepath.Dir(name) + "; printf '<testsuite name=\"s\">" + cases + "</testsuite>' > " + name + "; "
	}
	tests := []struct {
		name    string
		report  string
		script  string
		summary artifact.Summary
		status  string
	}{
		{"surefire folder", "target/surefire-reports/",
			write("target/surefire-reports/TEST-a.xml", `<testcase name="a1"/><testcase name="a2"><failure message="x"/></testcase>`) +
				write("target/surefire-reports/TEST-b.xml", `<testcase name="b1"><skipped/></testcase>`) +
				"echo text > target/surefire-reports/a.txt; exit 1",
			artifact.Summary{Passed: 1, Failed: 1, Skipped: 1}, artifact.TestCompleted},
		{"existing folder without a slash", "target/surefire-reports",
			write("target/surefire-reports/TEST-a.xml", `<testcase name="a1"/>`),
			artifact.Summary{Passed: 1}, artifact.TestCompleted},
		{"gradle glob", "*/build/test-results/test/*.xml",
			write("app/build/test-results/test/TEST-x.xml", `<testcase name="x"/>`) +
				write("lib/build/test-results/test/TEST-y.xml", `<testcase name="y"/>`),
			artifact.Summary{Passed: 2}, artifact.TestCompleted},
		{"only stale files", "old/", "true", artifact.Summary{}, artifact.TestError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			gittest.WriteFiles(t, dir, map[string]string{"old/TEST-old.xml": stale})
			old := time.Now().Add(-time.Hour)
			if err := os.Chtimes(filepath.Join(dir, "old/TEST-old.xml"), old, old); err != nil {
				t.Fatal(err)
			}
			s := Suite{Name: "junit", Kind: KindTest, Format: FormatJUnit, Report: tt.report, Command: []string{"sh", "-c", tt.script}}
			report, _, err := Run(context.Background(), []Suite{s}, options(t, dir))
			if err != nil {
				t.Fatal(err)
			}
			if report.Status != tt.status {
				t.Fatalf("status %s (%s), want %s", report.Status, report.Error, tt.status)
			}
			if tt.status == artifact.TestCompleted && report.Summary != tt.summary {
				t.Errorf("summary %+v, want %+v (cases %+v)", report.Summary, tt.summary, report.Suites[0].Cases)
			}
			if tt.status == artifact.TestError && !strings.Contains(report.Error, "1 older files ignored") {
				t.Errorf("error %q does not mention the stale report", report.Error)
			}
		})
	}
}

func TestRunSetup(t *testing.T) {
	t.Parallel()
	t.Run("setup runs first, in the directory", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		opt := options(t, dir)
		opt.Setup = []Suite{{Command: []string{"sh", "-c", "echo ready > installed"}}}
		report, info, err := Run(context.Background(), []Suite{sh("t", "test -f installed")}, opt)
		if err != nil {
			t.Fatal(err)
		}
		if report.Status != artifact.TestCompleted || !report.OverallPass || len(report.Suites) != 1 {
			t.Fatalf("report %+v, want one passing suite after setup", report)
		}
		if !containsNote(info.Notes, "setup setup-1 (sh -c 'echo ready > installed') done") {
			t.Errorf("notes %q lack the setup", info.Notes)
		}
		if _, err := os.Stat(filepath.Join(opt.LogDir, "setup-1.log")); err != nil {
			t.Errorf("setup log: %v", err)
		}
	})
	t.Run("a failing setup is a runner error and no suite runs", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		opt := options(t, dir)
		opt.Setup = []Suite{{Command: []string{"sh", "-c", "npm ci --offline; exit 1"}}, {Command: []string{"touch", "never"}}}
		report, _, err := Run(context.Background(), []Suite{sh("t", "touch ran")}, opt)
		if err != nil {
			t.Fatal(err)
		}
		if report.Status != artifact.TestError || len(report.Suites) != 0 || !strings.Contains(report.Error, "setup command setup-1") || !strings.Contains(report.Error, "[test] setup") {
			t.Fatalf("report %+v, want a setup error and no suite", report)
		}
		for _, f := range []string{"ran", "never"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
				t.Errorf("%s exists: a command ran after the failed setup", f)
			}
		}
	})
}

func TestKeyLine(t *testing.T) {
	tests := []struct{ in, want string }{
		{"\x1b[0m\x1b[0m[ERROR] [ERROR] Some problems were encountered while processing the POMs:\n[FATAL] Non-resolvable parent POM for x: Cannot access central in offline mode\n[ERROR] The build could not read 1 project -> [Help 1]\n",
			"Non-resolvable parent POM for x: Cannot access central in offline mode"},
		{"   Compiling x\nerror: failed to get `serde` as a dependency\n", "error: failed to get `serde` as a dependency"},
		{"go: cannot find main module\n[orch: stopping]\n", "last line: go: cannot find main module"},
		{"\x1b[0m\n\n", ""},
	}
	for _, tt := range tests {
		if got := keyLine(tt.in); got != tt.want {
			t.Errorf("keyLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
