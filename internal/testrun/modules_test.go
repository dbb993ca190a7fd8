package testrun

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/testreport"
)

// A repository of several Go modules, the shape of uber-go/zap's (a root
// module, exp/ and zapgrpc/internal/test/ with their own go.mod, assets/
// and tools/ with a go.mod and no package to test): every module is a
// suite, each counted apart, and a broken test in a nested module fails
// the run. (Tried on zap itself: 820 passed and 4 failed at the root, 27
// in exp, 1 in zapgrpc/internal/test, the same as go test by hand in each
// module; before, only the root's 824 tests ran.)
func TestRunGoMultiModule(t *testing.T) {
	t.Parallel()
	test := func(pkg, name, body string) string {
		return "package " + pkg + "\n\nimport \"testing\"\n\nfunc " + name + "(t *testing.T) {" + body + "}\n"
	}
	files := map[string]string{
		"go.mod":                        "module example.com/root\n\ngo 1.22\n",
		"a_test.go":                     test("root", "TestRoot", ""),
		"exp/go.mod":                    "module example.com/root/exp\n\ngo 1.22\n",
		"exp/e_test.go":                 test("exp", "TestExp", "") + "func TestExp2(t *testing.T) {}\n",
		"deep/inner/test/go.mod":        "module example.com/root/deep/inner/test\n\ngo 1.22\n",
		"deep/inner/test/d_test.go":     test("test", "TestDeep", ""),
		"assets/go.mod":                 "module example.com/root/assets\n\ngo 1.22\n",
		"tools/go.mod":                  "module example.com/root/tools\n\ngo 1.22\n",
		"tools/tools.go":                "//go:build tools\n\npackage tools\n",
		"testdata/fixture/go.mod":       "module fixture\n",
		"testdata/fixture/f_test.go":    test("fixture", "TestNever", "t.Fatal(\"testdata is no module of the repository\")"),
		"vendor/example.com/v/go.mod":   "module example.com/v\n",
		".hidden/go.mod":                "module hidden\n",
		"exp/testdata/nested/go.mod":    "module nested\n",
		"exp/testdata/nested/n_test.go": test("nested", "TestNever", "t.Fatal(\"testdata\")"),
	}
	dir := t.TempDir()
	gittest.WriteFiles(t, dir, files)
	suites, notes, err := Detect(dir, DetectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range suites {
		got = append(got, s.Name+" "+s.Dir+": "+strings.Join(s.Command, " "))
	}
	want := []string{
		"go-test : go test -json ./...", "go-vet : go vet ./...",
		"go-test-assets assets: go test -json ./...", "go-vet-assets assets: go vet ./...",
		"go-test-deep-inner-test deep/inner/test: go test -json ./...", "go-vet-deep-inner-test deep/inner/test: go vet ./...",
		"go-test-exp exp: go test -json ./...", "go-vet-exp exp: go vet ./...",
		"go-test-tools tools: go test -json ./...", "go-vet-tools tools: go vet ./...",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("suites\n%q\nwant\n%q", got, want)
	}
	if !slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, "5 Go modules") }) {
		t.Errorf("notes %q do not name the modules", notes)
	}

	run := func() artifact.TestReport {
		t.Helper()
		opt := options(t, dir)
		opt.Env = goEnv(t)
		report, _, err := Run(context.Background(), suites, opt)
		if err != nil {
			t.Fatal(err)
		}
		return report
	}
	report := run()
	if report.Status != artifact.TestCompleted || !report.OverallPass || report.Summary != (artifact.Summary{Passed: 4}) {
		t.Fatalf("status %s pass %v summary %+v error %q, want completed, 4 passed", report.Status, report.OverallPass, report.Summary, report.Error)
	}
	counts := map[string]int{}
	for _, s := range report.Suites {
		if s.Kind == KindTest {
			counts[s.ID] = s.Summary.Passed
		}
	}
	if want := map[string]int{"go-test": 1, "go-test-exp": 2, "go-test-deep-inner-test": 1, "go-test-assets": 0, "go-test-tools": 0}; !maps.Equal(counts, want) {
		t.Errorf("passed per suite %v, want %v", counts, want)
	}
	for _, s := range report.Suites {
		if s.ID == "go-test-exp" && s.Command != "cd exp && go test -json ./..." {
			t.Errorf("exp's command %q does not say where it ran", s.Command)
		}
	}

	// One broken test in the nested module fails the run, named there.
	gittest.WriteFiles(t, dir, map[string]string{"deep/inner/test/d_test.go": test("test", "TestDeep", "t.Fatal(\"broken\")")})
	report = run()
	if report.Status != artifact.TestCompleted || report.OverallPass || report.Summary != (artifact.Summary{Passed: 3, Failed: 1}) {
		t.Fatalf("after breaking deep/inner/test: status %s pass %v summary %+v, want completed, failed, 3 passed 1 failed", report.Status, report.OverallPass, report.Summary)
	}
	for _, s := range report.Suites {
		if s.ID == "go-test-deep-inner-test" && (s.OverallPass || !slices.ContainsFunc(s.Cases, func(c artifact.Case) bool { return c.Name == "TestDeep" && c.Status == testreport.StatusFail })) {
			t.Errorf("suite %s: pass %v cases %+v, want TestDeep failed", s.ID, s.OverallPass, s.Cases)
		}
	}
}

func TestDetectGoWork(t *testing.T) {
	dir := t.TempDir()
	gittest.WriteFiles(t, dir, map[string]string{
		"go.work":        "go 1.22\n\nuse (\n\t./a // the library\n\t\"./b\"\n\t../outside\n\t./gone\n)\nuse ./c\n",
		"a/go.mod":       "module a\n",
		"b/go.mod":       "module b\n",
		"c/go.mod":       "module c\n",
		"notused/go.mod": "module notused\n",
	})
	suites, notes, err := Detect(dir, DetectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range suites {
		if s.Kind == KindTest {
			got = append(got, s.Name+" "+s.Dir)
		}
	}
	if want := []string{"go-test-a a", "go-test-b b", "go-test-c c"}; !slices.Equal(got, want) {
		t.Errorf("suites %q, want %q", got, want)
	}
	for _, n := range []string{"../outside, outside the checkout", "./gone, which has no go.mod", "go.work's use directives", "go.mod files that go.work does not use, not tested (the workspace leaves them out): notused"} {
		if !slices.ContainsFunc(notes, func(x string) bool { return strings.Contains(x, n) }) {
			t.Errorf("notes %q lack %q", notes, n)
		}
	}
}

func TestGoWorkUses(t *testing.T) {
	got := goWorkUses("go 1.22\nuse ./x\nuse (\n  ./y // c\n  \"./z w\"\n)\n// use ./no\nuse\n")
	if want := []string{"./x", "./y", "./z w"}; !slices.Equal(got, want) {
		t.Errorf("goWorkUses = %q, want %q", got, want)
	}
}

func TestMemberSuffix(t *testing.T) {
	names := map[string]bool{}
	for _, tt := range [][2]string{
		{".", ""}, {"exp", "-exp"}, {"zapgrpc/internal/test", "-zapgrpc-internal-test"},
		{"exp", "-exp-2"}, {"@scope/pkg", "-scope-pkg"},
		{strings.Repeat("long/", 20), "-long-long-long-long-long-long-long-long"},
	} {
		got := memberSuffix(tt[0], names)
		if got != tt[1] {
			t.Errorf("memberSuffix(%q) = %q, want %q", tt[0], got, tt[1])
		}
		if !suiteNameRE.MatchString("go-test" + got) {
			t.Errorf("go-test%s is no valid suite name", got)
		}
	}
}

// A suite's Dir: the command runs there, inside the sandbox too, its
// JUnit report is read from there, and a Dir leading out of the
// directory through a symlink is a runner error.
func TestRunSuiteDir(t *testing.T) {
	requireBwrap(t)
	t.Parallel()
	dir := t.TempDir()
	outside := t.TempDir()
	gittest.WriteFiles(t, dir, map[string]string{"pkg/a/keep": ""})
	if err := os.Symlink(outside, filepath.Join(dir, "escape")); err != nil {
		t.Fatal(err)
	}
	junit := `<testsuite><testcase name="t1"/><testcase name="t2"/></testsuite>`
	suites := []Suite{
		{Name: "in-pkg", Kind: KindTest, Dir: "pkg/a", Command: []string{"sh", "-c", "pwd > where && mkdir -p out && echo '" + junit + "' > out/r.xml"}, Format: FormatJUnit, Report: "out/r.xml"},
		{Name: "escape", Kind: KindTest, Dir: "escape", Command: []string{"sh", "-c", "touch escaped"}},
	}
	for _, mode := range []string{SandboxBwrap, SandboxNone} {
		opt := options(t, dir)
		opt.Sandbox = mode
		report, _, err := Run(context.Background(), suites, opt)
		if err != nil {
			t.Fatal(err)
		}
		where, err := os.ReadFile(filepath.Join(dir, "pkg/a/where"))
		if err != nil || strings.TrimSpace(string(where)) != filepath.Join(dir, "pkg/a") {
			t.Errorf("%s: the suite ran in %q (%v), want %s", mode, where, err, filepath.Join(dir, "pkg/a"))
		}
		if s := report.Suites[0]; s.Summary.Passed != 2 || s.Command != "cd pkg/a && sh -c "+shellQuote(suites[0].Command[2]) {
			t.Errorf("%s: suite in-pkg %+v command %q, want 2 passed from pkg/a/out/r.xml", mode, s.Summary, s.Command)
		}
		if report.Status != artifact.TestError || !strings.Contains(report.Error, "suite folder escape leads outside the directory") {
			t.Errorf("%s: status %s error %q, want the escaping folder refused", mode, report.Status, report.Error)
		}
		if _, err := os.Stat(filepath.Join(outside, "escaped")); err == nil {
			t.Errorf("%s: a suite ran outside the directory", mode)
		}
	}
	for _, bad := range []string{"/abs", "../up", "a/../b", "a\\b"} {
		if err := validateSuite(Suite{Name: "x", Kind: KindTest, Dir: bad, Command: []string{"true"}}); err == nil {
			t.Errorf("Dir %q accepted", bad)
		}
	}
}
