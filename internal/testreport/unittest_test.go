package testreport

import (
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/artifact"
)

func TestParseUnittestRecorded(t *testing.T) {
	// Python 3.11's python -m unittest (-v and without) on the project
	// in testdata/unittest/README.md: doctests loaded by load_tests, a
	// failing subtest, an error, a skip, an expected failure and a test
	// module that does not import.
	want := []wantCase{
		{"", "tests.test_broken", StatusError, UnittestCollectionFailure},
		{"", "test_raises (tests.test_calc.TestCalc.test_raises)", StatusError, "KeyError: 'boom'"},
		{"", "test_fails (tests.test_calc.TestCalc.test_fails)", StatusFail, "AssertionError: 4 != 5"},
		{"", "test_sub (tests.test_calc.TestCalc.test_sub) (i=2)", StatusFail, "AssertionError: 2 not less than 2"},
		{"", "add (calc)", StatusFail, "AssertionError: Failed doctest test for calc.add"},
	}
	for _, file := range []string{"py311-verbose.txt", "py311-quiet.txt"} {
		t.Run(file, func(t *testing.T) {
			res, err := ParseUnittest(recorded(t, "testdata/unittest/"+file))
			if err != nil {
				t.Fatal(err)
			}
			if !res.Recognised || len(res.Notes) != 0 {
				t.Errorf("recognised %v notes %q", res.Recognised, res.Notes)
			}
			// Ran 9: 3 failures, 2 errors, 1 skipped, 1 expected failure.
			checkWant(t, res, artifact.Summary{Passed: 2, Failed: 3, Skipped: 2, Error: 2}, want)
			if out := res.Cases[0].Output; !strings.Contains(out, "ModuleNotFoundError: No module named 'no_such_module'") {
				t.Errorf("import failure output %q lacks the exception", out)
			}
			if out := res.Cases[4].Output; !strings.Contains(out, "Expected:\n    5\nGot:\n    4") || strings.HasSuffix(out, "---") {
				t.Errorf("doctest failure output %q: want the whole doctest report, without the closing dashes", out)
			}
		})
	}
}

func TestParseUnittest(t *testing.T) {
	tests := []struct {
		name  string
		out   string
		sum   artifact.Summary
		cases int
		recog bool
		note  string
	}{
		{name: "ok", out: "...\n" + unittestDash + "\nRan 3 tests in 0.001s\n\nOK\n", sum: artifact.Summary{Passed: 3}, recog: true},
		{name: "skips", out: unittestDash + "\nRan 4 tests in 0.001s\n\nOK (skipped=1, expected failures=1)\n", sum: artifact.Summary{Passed: 2, Skipped: 2}, recog: true},
		{name: "two runs summed", out: unittestDash + "\nRan 2 tests in 0s\n\nOK\n" + unittestDash + "\nRan 165 tests in 1.5s\n\nOK\n", sum: artifact.Summary{Passed: 167}, recog: true},
		{name: "no tests (3.12)", out: unittestDash + "\nRan 0 tests in 0.000s\n\nNO TESTS RAN\n", recog: true},
		{name: "unexpected success", out: unittestRule + "\nUNEXPECTED SUCCESS: test_x (m.T.test_x)\n" + unittestDash + "\nRan 1 test in 0s\n\nFAILED (unexpected successes=1)\n", sum: artifact.Summary{Failed: 1}, cases: 1, recog: true},
		{name: "no summary: not unittest", out: "Traceback (most recent call last):\nImportError: Start directory is not importable: 'tests'\n"},
		{name: "status line without Ran is not counted", out: "OK\nFAILED (failures=1)\n"},
		{name: "failing subtests beyond the tests", out: unittestDash + "\nRan 1 test in 0s\n\nFAILED (failures=3)\n", sum: artifact.Summary{Failed: 3}, recog: true, note: "subtests count apart"},
		{name: "colours", out: "\x1b[31m" + unittestDash + "\x1b[0m\nRan 1 test in 0s\n\n\x1b[32mOK\x1b[0m\n", sum: artifact.Summary{Passed: 1}, recog: true},
		{name: "huge counts are bounded", out: unittestDash + "\nRan 99999999999999999999 tests in 0s\n\nFAILED (failures=99999999999999999999, errors=99999999999999999999)\n", sum: artifact.Summary{Failed: maxCount, Error: maxCount}, recog: true, note: "subtests"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := ParseUnittest(strings.NewReader(tt.out))
			if err != nil {
				t.Fatal(err)
			}
			if res.Summary() != tt.sum || len(res.Cases) != tt.cases || res.Recognised != tt.recog {
				t.Errorf("summary %+v cases %d recognised %v, want %+v %d %v", res.Summary(), len(res.Cases), res.Recognised, tt.sum, tt.cases, tt.recog)
			}
			if tt.note != "" && !strings.Contains(strings.Join(res.Notes, "; "), tt.note) {
				t.Errorf("notes %q lack %q", res.Notes, tt.note)
			}
		})
	}
}

func FuzzParseUnittest(f *testing.F) {
	f.Add([]byte(unittestRule + "\nFAIL: a (m.a)\n" + unittestDash + "\nAssertionError: x\n" + unittestDash + "\nRan 1 test in 0s\n\nFAILED (failures=1)\n"))
	fuzzText(f, "testdata/unittest", func(s string) (Result, error) { return ParseUnittest(strings.NewReader(s)) })
}
