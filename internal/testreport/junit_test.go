package testreport

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/artifact/artifacttest"
)

func TestParseJUnitFixtures(t *testing.T) {
	type wantCase struct {
		name, pkg, status, message string
	}
	tests := []struct {
		file  string
		sum   artifact.Summary
		cases []wantCase // spot checks
	}{
		{
			file: "pytest.xml",
			sum:  artifact.Summary{Passed: 2, Failed: 1, Skipped: 2, Error: 1},
			cases: []wantCase{
				{"test_fails", "test_sample", StatusFail, "AssertionError: strings differ"},
				{"test_errors", "test_sample", StatusError, `failed on setup with "RuntimeError: fixture exploded"`},
				{"test_skipped", "test_sample", StatusSkip, "not on this platform"},
				{"test_xfail", "test_sample", StatusSkip, "known bug"},
				{"test_in_class", "test_sample.TestGroup", StatusPass, ""},
			},
		},
		{
			file: "pytest-xunit1-logging.xml",
			sum:  artifact.Summary{Passed: 2, Failed: 1, Skipped: 2, Error: 1},
			cases: []wantCase{
				{"test_fails", "test_sample", StatusFail, "AssertionError: strings differ"},
			},
		},
		{
			file: "jest-junit.xml",
			sum:  artifact.Summary{Passed: 3, Failed: 1, Skipped: 1},
			cases: []wantCase{
				{"math fails", "math", StatusFail, "Error: expect(received).toBe(expected) // Object.is equality"},
				{"math skipped one", "math", StatusSkip, ""},
				{"top level passes", "math", StatusPass, ""},
			},
		},
		{
			file: "node-test.xml",
			sum:  artifact.Summary{Passed: 1, Failed: 1, Skipped: 1},
			cases: []wantCase{
				{"bad", "test", StatusFail, "Expected values to be strictly equal:1 !== 2"},
				{"skipme", "test", StatusSkip, "not now"},
			},
		},
		{
			file: "surefire.xml",
			sum:  artifact.Summary{Passed: 1, Failed: 1, Skipped: 1, Error: 1},
			cases: []wantCase{
				{"divides", "com.example.CalculatorTest", StatusFail, "expected:<2> but was:<3>"},
				{"overflows", "com.example.CalculatorTest", StatusError, "counter overflow"},
				{"ignored", "com.example.CalculatorTest", StatusSkip, "not ready"},
			},
		},
		{
			file: "nextest.xml",
			sum:  artifact.Summary{Passed: 2, Failed: 2, Skipped: 1},
			cases: []wantCase{
				{"tests::divides", "calc", StatusFail, "thread 'tests::divides' panicked at src/lib.rs:21:9:"},
				{"tests::flaky", "calc", StatusPass, ""},
				{"slow_path", "calc::integration", StatusFail, "test timed out"},
			},
		},
		{
			file: "cargo2junit.xml",
			sum:  artifact.Summary{Passed: 1, Failed: 1, Skipped: 1},
			cases: []wantCase{
				{"divides", "tests", StatusFail, "failed tests::divides"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata/junit", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			cases, sum, err := ParseJUnit(f)
			if err != nil {
				t.Fatalf("ParseJUnit: %v", err)
			}
			if sum != tt.sum {
				t.Errorf("summary = %+v, want %+v", sum, tt.sum)
			}
			checkCases(t, cases, sum)
			for _, w := range tt.cases {
				c := artifacttest.FindCase(t, cases, w.name)
				if c.Package != w.pkg || c.Status != w.status || c.Message != w.message {
					t.Errorf("case %q = {pkg %q status %q message %q}, want {%q %q %q}", w.name, c.Package, c.Status, c.Message, w.pkg, w.status, w.message)
				}
				if c.Status != StatusPass && c.Status != StatusSkip && c.Output == "" {
					t.Errorf("case %q kept no output", w.name)
				}
			}
		})
	}
}

func TestParseJUnitOutputOfFailures(t *testing.T) {
	f := recorded(t, "testdata/junit/surefire.xml")
	cases, _, err := ParseJUnit(f)
	if err != nil {
		t.Fatal(err)
	}
	c := artifacttest.FindCase(t, cases, "divides")
	for _, s := range []string{"CalculatorTest.java:9", "dividing 6 by 2"} {
		if !strings.Contains(c.Output, s) {
			t.Errorf("output %q lacks %q (failure text and system-out)", c.Output, s)
		}
	}
}

func TestParseJUnitDialects(t *testing.T) {
	type wantCase struct{ name, pkg, status, message string }
	tests := []struct {
		name    string
		xml     string
		want    []wantCase
		wantErr error // nil: no error; errAny: some error
	}{
		{
			name: "root testsuite with nested suites",
			xml: `<testsuite name="outer"><testsuite name="inner"><testcase name="a"/></testsuite>
				<testcase name="b"><failure>boom
second line</failure></testcase></testsuite>`,
			want: []wantCase{{"a", "inner", StatusPass, ""}, {"b", "outer", StatusFail, "boom"}},
		},
		{
			name: "error outranks failure and skipped, whatever the order",
			xml:  `<testsuites><testcase name="x"><skipped/><error message="E"/><failure message="F"/></testcase></testsuites>`,
			want: []wantCase{{"x", "", StatusError, "E"}},
		},
		{
			name: "ctest-style status attribute",
			xml: `<testsuite><testcase name="a" status="run"/><testcase name="b" status="fail"/>
				<testcase name="c" status="notrun"/><testcase name="d" status="disabled"/></testsuite>`,
			want: []wantCase{{"a", "", StatusPass, ""}, {"b", "", StatusFail, ""}, {"c", "", StatusSkip, ""}, {"d", "", StatusSkip, ""}},
		},
		{
			name: "surefire rerunFailure after a failure stays failed, flaky alone passes",
			xml: `<testsuite><testcase name="r"><failure message="first"/><rerunFailure message="again"/></testcase>
				<testcase name="f"><flakyFailure message="once"/></testcase></testsuite>`,
			want: []wantCase{{"r", "", StatusFail, "first"}, {"f", "", StatusPass, ""}},
		},
		{
			name: "HTML entities and CDATA",
			xml:  `<testsuite><testcase name="caf&eacute;&nbsp;test"><failure><![CDATA[a <b> & c]]></failure></testcase></testsuite>`,
			want: []wantCase{{"café\u00a0test", "", StatusFail, "a <b> & c"}},
		},
		{
			name: "latin-1 document",
			xml:  "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><testsuite><testcase name=\"gr\xfc\xdfe\"/></testsuite>",
			want: []wantCase{{"grüße", "", StatusPass, ""}},
		},
		{
			name: "unnamed case and comma time",
			xml:  `<testsuite><testcase time="1,234.5"/></testsuite>`,
			want: []wantCase{{"(unnamed)", "", StatusPass, ""}},
		},
		{
			name: "empty testsuites",
			xml:  `<?xml version="1.0"?><testsuites/>`,
		},
		{
			name:    "not JUnit",
			xml:     `<html><body>oops</body></html>`,
			wantErr: ErrNotJUnit,
		},
		{
			name:    "empty input",
			xml:     "",
			wantErr: ErrNotJUnit,
		},
		{
			name:    "truncated report keeps what was read",
			xml:     `<testsuite><testcase name="a"/><testcase name="b"><failure message="x">`,
			want:    []wantCase{{"a", "", StatusPass, ""}, {"b", "", StatusFail, "x"}},
			wantErr: errAny,
		},
		{
			name:    "unknown encoding",
			xml:     `<?xml version="1.0" encoding="EBCDIC"?><testsuite/>`,
			wantErr: errAny,
		},
		{
			name:    "nesting bomb",
			xml:     "<testsuites>" + strings.Repeat("<testsuite>", maxXMLDepth+5),
			wantErr: errAny,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cases, sum, err := ParseJUnit(strings.NewReader(tt.xml))
			switch {
			case tt.wantErr == nil && err != nil:
				t.Fatalf("ParseJUnit: %v", err)
			case tt.wantErr == errAny && err == nil, tt.wantErr != nil && tt.wantErr != errAny && !errors.Is(err, tt.wantErr):
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			checkCases(t, cases, sum)
			if len(cases) != len(tt.want) {
				t.Fatalf("cases = %+v, want %d", cases, len(tt.want))
			}
			for i, w := range tt.want {
				c := cases[i]
				if c.Name != w.name || c.Package != w.pkg || c.Status != w.status || c.Message != w.message {
					t.Errorf("case %d = {%q %q %q %q}, want {%q %q %q %q}", i, c.Name, c.Package, c.Status, c.Message, w.name, w.pkg, w.status, w.message)
				}
			}
		})
	}
}

var errAny = errors.New("any error")

func TestParseJUnitBoundsOutput(t *testing.T) {
	big := strings.Repeat("line of output\n", 100_000)
	xml := `<testsuite><testcase name="loud"><failure message="m">` + big + `</failure><system-out>` + big + `</system-out></testcase></testsuite>`
	cases, sum, err := ParseJUnit(strings.NewReader(xml))
	if err != nil {
		t.Fatal(err)
	}
	checkCases(t, cases, sum)
	if n := len(cases[0].Output); n > caseOutputHead+caseOutputTail+200 {
		t.Errorf("kept %d bytes of output", n)
	}
}

func FuzzParseJUnit(f *testing.F) {
	entries, err := os.ReadDir("testdata/junit")
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".xml") {
			data, err := os.ReadFile(filepath.Join("testdata/junit", e.Name()))
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Add([]byte(`<testsuite><testcase name="a" status="fail"><skipped/></testcase></testsuite>`))
	f.Add([]byte("<?xml version=\"1.0\" encoding=\"latin1\"?><testsuites><testcase name=\"\xe9\"/></testsuites>"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cases, sum, _ := ParseJUnit(strings.NewReader(string(data)))
		checkCases(t, cases, sum)
	})
}

// TestParseJUnitPytestTeardown: a fixture whose teardown fails after the
// test's call is counted as pytest counts it, "1 failed, 2 passed, 2
// errors" for pytest-teardown.xml (recorded): the call's outcome and the
// teardown's error are each a case. orch read the passing test as an
// error alone (1 passed, not 2) before: found on martinblech/xmltodict.
func TestParseJUnitPytestTeardown(t *testing.T) {
	type cs struct{ name, status string }
	tests := []struct {
		name, xml string
		want      []cs
	}{
		{"recorded", "", []cs{
			{"test_passes_but_teardown", StatusPass},
			{"test_passes_but_teardown", StatusError},
			{"test_fails_and_teardown", StatusFail},
			{"test_fails_and_teardown", StatusError},
			{"test_plain", StatusPass},
		}},
		{"skipped, then the teardown failed", `<testsuite><testcase classname="m" name="t"><skipped message="later"/><error message="failed on teardown with &quot;E&quot;">tb</error></testcase></testsuite>`,
			[]cs{{"t", StatusSkip}, {"t", StatusError}}},
		{"a setup error stays one case", `<testsuite><testcase classname="m" name="t"><error message="failed on setup with &quot;E&quot;">tb</error></testcase></testsuite>`,
			[]cs{{"t", StatusError}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r io.Reader = strings.NewReader(tt.xml)
			if tt.xml == "" {
				f, err := os.Open("testdata/junit/pytest-teardown.xml")
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				r = f
			}
			cases, sum, err := ParseJUnit(r)
			if err != nil {
				t.Fatal(err)
			}
			var got []cs
			for _, c := range cases {
				got = append(got, cs{c.Name, c.Status})
				if c.Status == StatusError && !strings.Contains(c.Output, "tb") && !strings.Contains(c.Output, "RuntimeError: teardown broke") {
					t.Errorf("error case %q kept no traceback: %q", c.Name, c.Output)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("cases %v, want %v", got, tt.want)
			}
			if tt.xml == "" {
				if want := (artifact.Summary{Passed: 2, Failed: 1, Error: 2}); sum != want {
					t.Errorf("summary %+v, want %+v (pytest: 1 failed, 2 passed, 2 errors)", sum, want)
				}
				if cases[1].Message != `failed on teardown with "RuntimeError: teardown broke"` || cases[2].Message != "assert 1 == 2" {
					t.Errorf("messages %q, %q", cases[1].Message, cases[2].Message)
				}
			}
		})
	}
}

// TestParseJUnitPytestCollectedTwice: a test module that does not import,
// collected as a doctest module (--doctest-modules) and as a test module,
// is two errors in pytest's count and one <testcase> with two <error>s in
// its report (recorded). orch counted one: 16 errors where pytest said 25
// on grantjenks/python-sortedcontainers with a syntax error in the package.
func TestParseJUnitPytestCollectedTwice(t *testing.T) {
	f, err := os.Open("testdata/junit/pytest-collect-twice.xml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cases, sum, err := ParseJUnit(f)
	if err != nil {
		t.Fatal(err)
	}
	if want := (artifact.Summary{Error: 2}); sum != want {
		t.Errorf("summary %+v, want %+v (pytest: 2 errors)", sum, want)
	}
	for _, c := range cases {
		if c.Name != "test_collect" || c.Message != "collection failure" || !strings.Contains(c.Output, "No module named 'nothere_xyz'") {
			t.Errorf("case %+v, want test_collect's collection failure with its traceback", c)
		}
	}
	// Two errors of another kind in one <testcase> stay one case.
	cases, sum, err = ParseJUnit(strings.NewReader(`<testsuite><testcase name="t"><error message="boom">a</error><error message="boom">b</error></testcase></testsuite>`))
	if err != nil || len(cases) != 1 || sum.Error != 1 {
		t.Errorf("two errors of one test: %d cases, summary %+v, err %v; want one case", len(cases), sum, err)
	}
}
