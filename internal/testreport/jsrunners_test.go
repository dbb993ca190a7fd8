package testreport

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/artifact"
)

func TestParseMochaVitestRecorded(t *testing.T) {
	// The projects in testdata/tap/README.md: Mocha 11.8 and Vitest 3.2
	// with their default reporters.
	tests := []struct {
		file string
		sum  artifact.Summary
		want []wantCase
	}{
		{"mocha11-spec.txt", artifact.Summary{Passed: 3, Failed: 1, Skipped: 2}, []wantCase{
			{"", "math > fails", StatusFail, "AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:"},
		}},
		{"vitest3-default.txt", artifact.Summary{Passed: 3, Failed: 1, Skipped: 2}, []wantCase{
			{"", "math.test.js > math > fails", StatusFail, "AssertionError: expected 2 to be 3 // Object.is equality"},
		}},
		// AVA 6.4: adds, fails, a skip, a todo, a test.failing that
		// fails as expected (skipped, as pytest counts xfail), and a
		// second file's passing test; its summary has no passed count.
		{"ava6-default.txt", artifact.Summary{Passed: 2, Failed: 1, Skipped: 3}, []wantCase{
			{"", "math › fails", StatusFail, "test failed"},
		}},
		{"ava6-one-file.txt", artifact.Summary{Passed: 1}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			res, err := ParseTAP(recorded(t, "testdata/tap/"+tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if !res.Recognised || len(res.Notes) != 0 {
				t.Errorf("recognised %v notes %q", res.Recognised, res.Notes)
			}
			checkWant(t, res, tt.sum, tt.want)
		})
	}
}

func TestParseMochaVitestTotals(t *testing.T) {
	tests := []struct {
		name  string
		out   string
		sum   artifact.Summary
		names []string
		note  string
	}{
		{name: "mocha passing only", out: "\n  272 passing (3s)\n", sum: artifact.Summary{Passed: 272}},
		{name: "mocha in minutes, pending, failing", out: "  272 passing (1m)\n  4 pending\n  1 failing\n\n  1) a top-level test:\n     Error: boom\n", sum: artifact.Summary{Passed: 272, Failed: 1, Skipped: 4}, names: []string{"a top-level test"}},
		{name: "mocha nested title", out: "  0 passing (2ms)\n  1 failing\n\n  1) outer\n       inner\n         leaf:\n     TypeError: x is not a function\n", sum: artifact.Summary{Failed: 1}, names: []string{"outer > inner > leaf"}},
		{name: "mocha hook", out: "  1 passing (5ms)\n  1 failing\n\n  1) db\n       \"before all\" hook for \"reads\":\n     Error: ECONNREFUSED\n", sum: artifact.Summary{Passed: 1, Failed: 1}, names: []string{`db > "before all" hook for "reads"`}},
		{name: "two mocha runs summed", out: "  2 passing (1ms)\n\n  3 passing (1ms)\n  1 pending\n", sum: artifact.Summary{Passed: 5, Skipped: 1}},
		{name: "vitest all passed", out: " Test Files  3 passed (3)\n      Tests  272 passed (272)\n", sum: artifact.Summary{Passed: 272}},
		{name: "vitest coloured", out: "\x1b[2m      Tests \x1b[22m \x1b[1m\x1b[31m1 failed\x1b[39m\x1b[22m\x1b[2m | \x1b[22m\x1b[1m\x1b[32m272 passed\x1b[39m\x1b[22m\x1b[2m | \x1b[22m\x1b[33m4 skipped\x1b[39m\x1b[90m (277)\x1b[39m\n", sum: artifact.Summary{Passed: 272, Failed: 1, Skipped: 4}},
		{name: "vitest totals that do not add up", out: "      Tests  1 passed (2)\n", sum: artifact.Summary{Passed: 1}, note: "Vitest's summaries say 2 tests"},
		{name: "jest and mocha in one script", out: "Tests:       2 passed, 2 total\n  3 passing (1ms)\n", sum: artifact.Summary{Passed: 5}},
		{name: "a failing line before any totals is no failure", out: "  1) not mocha\n", sum: artifact.Summary{}},
		{name: "ava lines without its summary count nothing", out: "  ✔ adds\n  ✘ [fail]: x\n", sum: artifact.Summary{}},
		{name: "ava summary that disagrees", out: "  ✔ a\n  ─\n\n  2 tests passed\n", sum: artifact.Summary{Passed: 1}, note: "AVA's summary says 2 passed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := ParseTAP(strings.NewReader(tt.out))
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Summary(); got != tt.sum {
				t.Errorf("summary %+v, want %+v", got, tt.sum)
			}
			var names []string
			for _, c := range res.Cases {
				names = append(names, c.Name)
			}
			if strings.Join(names, "|") != strings.Join(tt.names, "|") {
				t.Errorf("cases %q, want %q", names, tt.names)
			}
			if tt.note != "" && !strings.Contains(strings.Join(res.Notes, "; "), tt.note) {
				t.Errorf("notes %q lack %q", res.Notes, tt.note)
			}
		})
	}
}

func TestParseTAPBesideOtherRunners(t *testing.T) {
	// unjs/defu: a Vitest test that prints a node:test TAP fragment (a
	// suite, no "# tests" line); Vitest's summary counts the tests.
	stray := "TAP version 13\n# Subtest: isPlainObject\nok 1 - isPlainObject\n  ---\n  duration_ms: 6.5\n  type: 'suite'\n  ...\n ✓ test/utils.test.ts (2 tests) 5ms\n      Tests  23 passed (23)\n"
	res, err := ParseTAP(strings.NewReader(stray))
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary() != (artifact.Summary{Passed: 23}) || !strings.Contains(strings.Join(res.Notes, ";"), "taken for a test's output") {
		t.Errorf("summary %+v notes %q, want Vitest's 23 passed and a note on the TAP lines", res.Summary(), res.Notes)
	}
	// node --test && mocha: both runs count.
	both := "TAP version 13\nok 1 - a\nnot ok 2 - b\n1..2\n# tests 2\n# pass 1\n# fail 1\n\n  3 passing (2ms)\n"
	res, err = ParseTAP(strings.NewReader(both))
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary() != (artifact.Summary{Passed: 4, Failed: 1}) || len(res.Cases) != 2 {
		t.Errorf("summary %+v cases %d, want node's 1+1 and Mocha's 3 passed, node's two cases", res.Summary(), len(res.Cases))
	}
}

// Jest names its failures under the FAIL line of their file ("  ●
// describe › test"); a file that does not load ("● Test suite failed to
// run", a TypeScript error under ts-jest) is left out of its Tests:
// count. Recorded on gvergnaud/ts-pattern (testdata/tap/README.md):
// before, the failures were not named (an "[exit status]" case stood for
// them) and the file that did not compile counted as nothing.
func TestParseJestFailuresRecorded(t *testing.T) {
	tests := []struct {
		file string
		sum  artifact.Summary
		want []wantCase
		note string
	}{
		{"jest30-tspattern-fail.txt", artifact.Summary{Passed: 16, Failed: 2}, []wantCase{
			{"", "tests/otherwise.test.ts > otherwise › should pass matched value to otherwise", StatusFail, "expect(received).toBe(expected) // Object.is equality"},
			{"", "tests/bigints.test.ts > Test suite failed to run", StatusFail, "tests/bigints.test.ts:10:17 - error TS2322: Type 'string' is not assignable to type 'number'."},
		}, "Jest: 1 test file(s) failed to run"},
		// npm test over all 48 files: the failure is printed again in
		// "Summary of all failing tests", and counted once.
		{"jest30-tspattern-npm.txt", artifact.Summary{Passed: 452, Failed: 1}, []wantCase{
			{"", "tests/otherwise.test.ts > otherwise › should pass matched value to otherwise", StatusFail, "expect(received).toBe(expected) // Object.is equality"},
		}, ""},
		{"jest30-pnpm-fail.txt", artifact.Summary{Passed: 168, Failed: 1, Skipped: 2}, []wantCase{
			{"", "src/sample.test.ts > sample › fails", StatusFail, "expect(received).toBe(expected) // Object.is equality"},
		}, ""},
		// Vitest 4.0 on unjs/ufo: a test file with a syntax error is in
		// "Failed Suites", not in the Tests count (before: 17 passed, 1
		// failed, the file unnamed).
		{"vitest4-failed-suite.txt", artifact.Summary{Passed: 17, Failed: 2}, []wantCase{
			{"", "test/is-same.test.ts", StatusFail, "Error: Transform failed with 1 error:"},
			{"", "test/resolve.test.ts > resolveURL > invalid URL (null)", StatusFail, ""},
		}, "Vitest: 1 test file(s) failed to load"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			res, err := ParseTAP(recorded(t, "testdata/tap/"+tt.file))
			if err != nil {
				t.Fatal(err)
			}
			notes := strings.Join(res.Notes, "; ")
			if !res.Recognised || (tt.note == "") != (notes == "") || !strings.Contains(notes, tt.note) {
				t.Errorf("recognised %v notes %q, want %q", res.Recognised, notes, tt.note)
			}
			checkWant(t, res, tt.sum, tt.want)
		})
	}
	// Not Jest: FAIL and ● lines without its Tests: summary name nothing,
	// and PASS ends a FAIL line's failures.
	res, _ := ParseTAP(strings.NewReader("FAIL a.test.ts\n  ● x › y\n\n  3 passing (1ms)\n"))
	if len(res.Cases) != 0 {
		t.Errorf("cases %+v without Jest's summary", res.Cases)
	}
	res, _ = ParseTAP(strings.NewReader("FAIL a.test.ts\n  ● x › y\n\n    boom\nPASS b.test.ts\n  ● Console\n  ● not a failure\nTests:       1 failed, 1 passed, 2 total\n"))
	if len(res.Cases) != 1 || res.Cases[0].Name != "a.test.ts > x › y" || res.Cases[0].Message != "boom" {
		t.Errorf("cases %+v, want a.test.ts > x › y alone", res.Cases)
	}
}

// npm test --workspaces goes on after a member whose pretest build
// failed: that member's tests never ran. Recorded by orch test on
// eslint/rewrite at 80eb545 (testdata/tap/README.md): before, the two
// members whose build failed (config-array, 170 tests by hand, and
// plugin-kit, 40) were left out of the counts without a word.
func TestParseNPMWorkspaceScriptFailedRecorded(t *testing.T) {
	res, err := ParseTAP(recorded(t, "testdata/tap/npm11-workspaces-mocha.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (artifact.Summary{Passed: 109, Failed: 14}); res.Summary() != want {
		t.Errorf("summary %+v, want %+v", res.Summary(), want)
	}
	var npm []string
	for _, c := range res.Cases {
		if strings.HasPrefix(c.Name, "[npm workspace ") {
			npm = append(npm, c.Name+": "+c.Message)
		}
	}
	want := []string{
		"[npm workspace @eslint/config-array@0.18.0]: its script build failed (exit status 2) before its tests ran: sh -c rollup -c && npm run build:dedupe-types && tsc -p tsconfig.esm.json && npm run build:cts",
		"[npm workspace @eslint/plugin-kit@0.2.1]: its script build failed (exit status 2) before its tests ran: sh -c rollup -c && npm run build:dedupe-types && tsc -p tsconfig.esm.json && npm run build:cts",
	}
	if strings.Join(npm, "\n") != strings.Join(want, "\n") || len(res.Cases) != 14 {
		t.Errorf("%d cases; npm's:\n%s\nwant:\n%s", len(res.Cases), strings.Join(npm, "\n"), strings.Join(want, "\n"))
	}
	if notes := strings.Join(res.Notes, "; "); !strings.Contains(notes, "2 npm workspace member(s) stopped before their tests ran") {
		t.Errorf("notes %q", notes)
	}
	// A member whose test script failed is counted by its runner alone;
	// outside a workspace npm names none.
	for _, out := range []string{
		"  1 passing (1ms)\n  1 failing\n\n  1) a:\n     Error: x\n\nnpm error Lifecycle script `test` failed with error:\nnpm error code 1\nnpm error workspace w@1.0.0\n",
		"  1 passing (1ms)\nnpm ERR! Lifecycle script `build` failed with error:\nnpm ERR! code 2\nnpm ERR! command sh -c tsc\n",
	} {
		res, _ := ParseTAP(strings.NewReader(out))
		for _, c := range res.Cases {
			if strings.HasPrefix(c.Name, "[npm") {
				t.Errorf("case %+v from %q", c, out)
			}
		}
	}
}

// pnpm -r test stops at its first failing member (bail, its default):
// members it never started, or stopped before they finished, are in no
// count, and the note says which. Recorded with pnpm 10.21 on a
// workspace of node --test members (testdata/tap/README.md).
func TestParsePnpmRecursiveBail(t *testing.T) {
	const tail = "the tests of members that did not run or finish are in no count: pnpm -r --no-bail test (--no-bail in the project's test script) runs every member and reports every failure"
	const head = "pnpm's recursive run stopped at its first failing member (@ws/beta@1.0.0, script test), as it does unless told --no-bail: "
	many := "Scope: 30 of 31 workspace projects\n"
	for i := range 25 {
		many += fmt.Sprintf("packages/m%02d test$ node --test\n", i)
	}
	many += " ERR_PNPM_RECURSIVE_RUN_FIRST_FAIL  @ws/beta@1.0.0 test: `node --test`\n"
	tests := []struct {
		name, file, out string
		notes           []string
	}{
		// The prefixed reporter (two members at a time on 2 cores):
		// alpha and delta were stopped, three never started.
		{"prefixed", "pnpm10-recursive-bail.txt", "", []string{head + "of the 6 workspace projects in its scope, 3 never started (started: packages/alpha, packages/beta, packages/delta); 2 stopped before they finished (packages/alpha, packages/delta); " + tail}},
		// --workspace-concurrency=1 streams each member's output: the
		// root's own "> root@ test" line before Scope is not a member.
		{"streamed", "pnpm10-recursive-bail-serial.txt", "", []string{head + "all 3 workspace projects in its scope started (started: @ws/alpha@1.0.0, @ws/beta@1.0.0, @ws/gamma@1.0.0); pnpm's output does not say which of them finished; " + tail}},
		{"no scope line", "", "packages/beta test$ x\n ERR_PNPM_RECURSIVE_RUN_FIRST_FAIL  @ws/beta@1.0.0 test: `x`\n", []string{head + "members after it may not have run; " + tail}},
		{"many members", "", many, []string{head + "of the 30 workspace projects in its scope, 5 never started (started: packages/m00, packages/m01, packages/m02, packages/m03, packages/m04, packages/m05, packages/m06, packages/m07, packages/m08, packages/m09, packages/m10, packages/m11, packages/m12, packages/m13, packages/m14, packages/m15, packages/m16, packages/m17, packages/m18, packages/m19 and 5 more); 25 stopped before they finished (packages/m00, packages/m01, packages/m02, packages/m03, packages/m04, packages/m05, packages/m06, packages/m07, packages/m08, packages/m09, packages/m10, packages/m11, packages/m12, packages/m13, packages/m14, packages/m15, packages/m16, packages/m17, packages/m18, packages/m19 and 5 more); " + tail}},
		// Two recursive runs in one script, the first stopped early.
		{"two runs", "", "Scope: 2 of 3 workspace projects\npackages/a lint$ eslint\npackages/a lint: Failed\n ERR_PNPM_RECURSIVE_RUN_FIRST_FAIL  a@1.0.0 lint: `eslint`\nScope: all 2 workspace projects\npackages/a test$ x\npackages/a test: Done\n", []string{"pnpm's recursive run stopped at its first failing member (a@1.0.0, script lint), as it does unless told --no-bail: of the 2 workspace projects in its scope, 1 never started (started: packages/a); the tests of members that did not run or finish are in no count: pnpm -r --no-bail lint (--no-bail in the project's test script) runs every member and reports every failure"}},
		// --no-bail runs every member: pnpm's ERR_PNPM_RECURSIVE_FAIL
		// and its summary, no note.
		{"no-bail", "", "Scope: 3 of 4 workspace projects\npackages/a test$ x\npackages/a test: Failed\npackages/b test$ x\npackages/b test: Done\n ERR_PNPM_RECURSIVE_FAIL  \n\nSummary: 1 fails, 2 passes\n", nil},
		{"a passing run", "", "Scope: 2 of 3 workspace projects\npackages/a test$ x\npackages/a test: Done\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r io.Reader = strings.NewReader(tt.out)
			if tt.file != "" {
				r = recorded(t, "testdata/tap/"+tt.file)
			}
			res, err := ParseTAP(r)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(res.Notes, tt.notes) {
				t.Errorf("notes\n%q\nwant\n%q", res.Notes, tt.notes)
			}
		})
	}
}

// yarn workspaces foreach (yarn 2 and later) stops at a failing
// workspace and has no option to go on: a note says the workspaces after
// it did not run. Recorded with yarn 4.18 (testdata/tap/README.md).
func TestParseYarnForeachBail(t *testing.T) {
	const note = "yarn workspaces foreach stopped at a failing workspace (@ws/beta@workspace:packages/beta, exit code 1), as it always does: workspaces it had not run by then did not run, and their tests are in no count; yarn has no option to go on, so yarn workspaces foreach -A --exclude NAME run test runs the rest"
	for _, tt := range []struct {
		name, file, out string
		notes           []string
	}{
		{"recorded", "yarn4-foreach-bail.txt", "", []string{note}},
		// -p: two fail at once; the first named.
		{"parallel", "", "[@ws/alpha]: ok\nThe command failed in workspace @ws/beta@workspace:packages/beta with exit code 1\nThe command failed in workspace @ws/gamma@workspace:packages/gamma with exit code 2\nFailed with errors in 0s 449ms\n", []string{note}},
		{"a test printing it indented", "", "  The command failed in workspace x with exit code 1\n", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var r io.Reader = strings.NewReader(tt.out)
			if tt.file != "" {
				r = recorded(t, "testdata/tap/"+tt.file)
			}
			res, err := ParseTAP(r)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(res.Notes, tt.notes) {
				t.Errorf("notes\n%q\nwant\n%q", res.Notes, tt.notes)
			}
		})
	}
}

// TestParsePnpmMembers: under pnpm's prefixed reporter each member's
// interleaved lines are read apart, without the prefix, and counted
// (testdata/tap/README.md; before, a passing `pnpm -r test` counted no
// test at all).
func TestParsePnpmMembers(t *testing.T) {
	tests := []struct {
		file   string
		sum    artifact.Summary
		failed []string
	}{
		{"pnpm10-recursive-pass.txt", artifact.Summary{Passed: 6, Skipped: 3}, nil},
		{"pnpm10-recursive-nobail.txt", artifact.Summary{Passed: 5, Failed: 1, Skipped: 3}, []string{"packages/gamma > gamma second"}},
		// Stopped at beta: alpha's and delta's lines before the stop are
		// read too, their tests that never ran are in no count.
		{"pnpm10-recursive-bail.txt", artifact.Summary{Passed: 1, Failed: 1}, []string{"packages/beta > beta second"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			res, err := ParseTAP(recorded(t, "testdata/tap/"+tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if !res.Recognised || res.Summary() != tt.sum {
				t.Fatalf("recognised %v, summary %+v; want %+v", res.Recognised, res.Summary(), tt.sum)
			}
			var failed []string
			for _, c := range res.Cases {
				if !strings.HasPrefix(c.Name, "packages/") {
					t.Errorf("case %q is not named by its member's folder", c.Name)
				}
				if c.Status == StatusFail {
					failed = append(failed, c.Name)
					if !strings.Contains(c.Message, "strictly equal") {
						t.Errorf("failure %q has message %q, want the assertion's", c.Name, c.Message)
					}
				}
			}
			if !slices.Equal(failed, tt.failed) {
				t.Errorf("failed %q, want %q", failed, tt.failed)
			}
		})
	}
	// A line that only looks like a member's (a folder pnpm never
	// started) is the script's own, not a member's.
	res, err := ParseTAP(strings.NewReader("Scope: all 1 workspace projects\npackages/a test$ x\npackages/b test: ok 1 - fake\npackages/a test: TAP version 13\npackages/a test: not ok 1 - real\npackages/a test: 1..1\npackages/a test: Failed\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s := res.Summary(); s != (artifact.Summary{Failed: 1}) || len(res.Cases) != 1 || res.Cases[0].Name != "packages/a > real" {
		t.Fatalf("summary %+v, cases %+v; want one failure, packages/a > real", s, res.Cases)
	}
}
