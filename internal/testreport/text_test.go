package testreport

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/orchdev/orch/internal/artifact"
)

type wantCase struct {
	pkg, name, status, msg string
}

func checkWant(t *testing.T, res Result, sum artifact.Summary, want []wantCase) {
	t.Helper()
	if got := res.Summary(); got != sum {
		t.Errorf("summary %+v, want %+v", got, sum)
	}
	if len(res.Cases) != len(want) {
		for _, c := range res.Cases {
			t.Logf("case %q %q %s %q", c.Package, c.Name, c.Status, c.Message)
		}
		t.Fatalf("%d cases, want %d", len(res.Cases), len(want))
	}
	for i, w := range want {
		c := res.Cases[i]
		if c.Package != w.pkg || c.Name != w.name || c.Status != w.status || (w.msg != "" && c.Message != w.msg) {
			t.Errorf("case %d = {%q %q %s %q}, want %+v", i, c.Package, c.Name, c.Status, c.Message, w)
		}
	}
}

func TestParseLibtestRecorded(t *testing.T) {
	// cargo 1.95 `cargo test --no-fail-fast` on a crate with a failing
	// unit test, a failing integration test and a doc test (the source
	// is in testdata/libtest/README.md).
	f := recorded(t, "testdata/libtest/no-fail-fast.txt")
	res, err := ParseLibtest(f)
	if err != nil {
		t.Fatal(err)
	}
	checkWant(t, res, artifact.Summary{Passed: 3, Failed: 2, Skipped: 1}, []wantCase{
		{"unittests src/lib.rs (demo)", "tests::adds", StatusPass, ""},
		{"unittests src/lib.rs (demo)", "tests::slow", StatusSkip, ""},
		{"unittests src/lib.rs (demo)", "tests::fails", StatusFail, "assertion `left == right` failed: math is off (at src/lib.rs:14:43)"},
		{"tests/it.rs (it)", "integration", StatusPass, ""},
		{"tests/it.rs (it)", "panics", StatusFail, "boom (at tests/it.rs:4:15)"},
		{"Doc-tests demo", "src/lib.rs - add (line 3)", StatusPass, ""},
	})
	if len(res.Notes) != 0 {
		t.Errorf("notes %q, want none (the summaries agree)", res.Notes)
	}
	if out := res.Cases[2].Output; !strings.Contains(out, "some output") || strings.Contains(out, "---- tests::fails") {
		t.Errorf("failing case output %q: want the captured stdout without the header", out)
	}

	f2 := recorded(t, "testdata/libtest/build-error.txt")
	res, _ = ParseLibtest(f2)
	checkWant(t, res, artifact.Summary{Error: 1}, []wantCase{
		{`demo (test "it")`, CaseBuildFailed, StatusError, "build failed: error[E0308]: mismatched types"},
	})
	if !strings.Contains(res.Cases[0].Output, `"x"`) {
		t.Errorf("build failure output %q lacks the compiler's message", res.Cases[0].Output)
	}
}

func TestParseLibtestEdgeCases(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		sum   artifact.Summary
		want  []wantCase
		notes int
	}{
		{
			name: "a binary that crashes mid-run",
			in: "     Running unittests src/lib.rs (target/debug/deps/x-1)\n\nrunning 3 tests\ntest a ... ok\n" +
				"error: test failed, to rerun pass `--lib`\n\nCaused by:\n  process didn't exit successfully: `/t/x-1` (signal: 11, SIGSEGV: invalid memory reference)\n" +
				"     Running tests/b.rs (target/debug/deps/b-2)\n\nrunning 1 test\ntest b ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n",
			sum: artifact.Summary{Passed: 2, Error: 1},
			want: []wantCase{
				{"unittests src/lib.rs (x-1)", "a", StatusPass, ""},
				{"tests/b.rs (b-2)", "b", StatusPass, ""},
				{"unittests src/lib.rs (x-1)", CaseBinaryFailed, StatusError, "unittests src/lib.rs (x-1) ran 1 of the 3 tests it announced and ended: `/t/x-1` (signal: 11, SIGSEGV: invalid memory reference)"},
			},
		},
		{
			name: "ignored with a reason, old panic format, summary that disagrees",
			in: "     Running tests/c.rs (target/debug/deps/c-3)\nrunning 2 tests\ntest slow ... ignored, needs a network\ntest bad ... FAILED\n\nfailures:\n\n---- bad stdout ----\nthread 'bad' panicked at 'oops', tests/c.rs:3:5\n\nfailures:\n    bad\n\n" +
				"test result: FAILED. 0 passed; 1 failed; 2 ignored; 0 measured; 0 filtered out; finished in 0.00s\n",
			sum: artifact.Summary{Failed: 1, Skipped: 1},
			want: []wantCase{
				{"tests/c.rs (c-3)", "slow", StatusSkip, "needs a network"},
				{"tests/c.rs (c-3)", "bad", StatusFail, "'oops', tests/c.rs:3:5"},
			},
			notes: 1,
		},
		{
			name: "test lines before any binary are not tests",
			in:   "test a ... ok\nrunning 1 test\n",
			sum:  artifact.Summary{},
		},
		{
			name: "no tests at all",
			in:   "     Running unittests src/main.rs (target/debug/deps/m-1)\n\nrunning 0 tests\n\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\n",
			sum:  artifact.Summary{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := ParseLibtest(strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			checkWant(t, res, tt.sum, tt.want)
			if len(res.Notes) != tt.notes {
				t.Errorf("notes %q, want %d", res.Notes, tt.notes)
			}
		})
	}
}

func TestParseTAPRecorded(t *testing.T) {
	// Node 20.20 `node --test` (TAP, its reporter when the output is not
	// a terminal) and `--test-reporter=spec` on the same two files.
	f := recorded(t, "testdata/tap/node20-tap.txt")
	res, err := ParseTAP(f)
	if err != nil {
		t.Fatal(err)
	}
	checkWant(t, res, artifact.Summary{Passed: 7, Failed: 1, Skipped: 2}, []wantCase{
		{"", "math > adds", StatusPass, ""},
		{"", "math > fails", StatusFail, "Expected values to be strictly equal:"},
		{"", "math > skipped", StatusSkip, ""},
		{"", "math > nested > deep", StatusPass, ""},
		{"", "top level", StatusPass, ""},
		{"", "todo one", StatusSkip, "todo"},
		{"", "with subtests > sub a", StatusPass, ""},
		{"", "with subtests > sub b", StatusPass, ""},
		{"", "with subtests", StatusPass, ""},
		{"", "other file", StatusPass, ""},
	})
	if len(res.Notes) != 0 || res.Totals != nil {
		t.Errorf("notes %q totals %v: want none (node's totals agree with the test points)", res.Notes, res.Totals)
	}
	if !strings.Contains(res.Cases[1].Output, "2 !== 3") {
		t.Errorf("failing case output %q lacks the YAML block", res.Cases[1].Output)
	}

	f2 := recorded(t, "testdata/tap/node20-spec.txt")
	res, _ = ParseTAP(f2)
	checkWant(t, res, artifact.Summary{Passed: 7, Failed: 1, Skipped: 2}, []wantCase{
		{"", "fails", StatusFail, "test failed"},
		{"", "skipped", StatusSkip, ""},
	})
}

// Jest prints no TAP: its "Tests: … N total" summary of each run (summed)
// gives the counts, recorded through pnpm on vercel/ms.
func TestParseJestTotalsRecorded(t *testing.T) {
	for _, tc := range []struct {
		file string
		want artifact.Summary
	}{
		{"jest30-pnpm-fail.txt", artifact.Summary{Passed: 168, Failed: 1, Skipped: 2}},
		{"jest30-pnpm-two-runs.txt", artifact.Summary{Passed: 334}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			f := recorded(t, "testdata/tap/"+tc.file)
			res, err := ParseTAP(f)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Recognised || res.Totals == nil || *res.Totals != tc.want || res.Summary() != tc.want || len(res.Notes) != 0 {
				t.Errorf("recognised %v totals %v notes %q, want %+v", res.Recognised, res.Totals, res.Notes, tc.want)
			}
		})
	}
	// A summary whose parts do not add up to its total is noted.
	res, _ := ParseTAP(strings.NewReader("Tests:       1 failed, 3 passed, 5 total\n"))
	if res.Totals == nil || *res.Totals != (artifact.Summary{Passed: 3, Failed: 1}) || len(res.Notes) != 1 {
		t.Errorf("totals %v notes %q", res.Totals, res.Notes)
	}
	// Not a Jest summary.
	res, _ = ParseTAP(strings.NewReader("Tests: see README\nTests:       lots total\n"))
	if res.Recognised {
		t.Errorf("recognised %+v", res)
	}
}

func TestParseTAPEdgeCases(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		sum   artifact.Summary
		want  []wantCase
		notes int
	}{
		{
			name: "tape",
			in:   "TAP version 13\n# adds\nok 1 should be equal\nnot ok 2 should be equal\n  ---\n    operator: equal\n  ...\nok 3 later # skip not today\nnot ok 4 wip # TODO later\n\n1..4\n# tests 4\n# pass  1\n# fail  1\n",
			sum:  artifact.Summary{Passed: 1, Failed: 1, Skipped: 2},
			want: []wantCase{
				{"", "should be equal", StatusPass, ""},
				{"", "should be equal", StatusFail, "test failed"},
				{"", "later", StatusSkip, "not today"},
				{"", "wip", StatusSkip, "todo later"},
			},
		},
		{
			name: "two node runs in one script: totals add up",
			in:   "TAP version 13\nok 1 - a\n1..1\n# tests 1\n# pass 1\n# fail 0\nTAP version 13\nok 1 - b\nnot ok 2 - c\n1..2\n# tests 2\n# pass 1\n# fail 1\n",
			sum:  artifact.Summary{Passed: 2, Failed: 1},
			want: []wantCase{{"", "a", StatusPass, ""}, {"", "b", StatusPass, ""}, {"", "c", StatusFail, ""}},
		},
		{
			name:  "totals that disagree are noted",
			in:    "TAP version 13\nok 1 - a\n# tests 5\n# pass 5\n",
			sum:   artifact.Summary{Passed: 1},
			want:  []wantCase{{"", "a", StatusPass, ""}},
			notes: 1,
		},
		{
			name: "escaped hash is not a directive",
			in:   "ok 1 - issue \\# 12 # SKIP flaky\nok 2 - c\\#\n",
			sum:  artifact.Summary{Passed: 1, Skipped: 1},
			want: []wantCase{{"", "issue # 12", StatusSkip, "flaky"}, {"", "c#", StatusPass, ""}},
		},
		{
			name: "no TAP and no totals",
			in:   "> jest\nPASS src/a.test.js\nTests: 3 passed\n",
			sum:  artifact.Summary{},
		},
		{
			name: "Jest's summary",
			in:   "> jest\nPASS src/a.test.js\nTests: 3 passed, 3 total\n",
			sum:  artifact.Summary{Passed: 3},
		},
		{
			name: "spec totals from two runs",
			in:   "✔ a (1ms)\nℹ tests 1\nℹ pass 1\nℹ fail 0\n✖ b (2ms)\nℹ tests 2\nℹ pass 1\nℹ fail 1\nℹ todo 0\n",
			sum:  artifact.Summary{Passed: 2, Failed: 1},
			want: []wantCase{{"", "b", StatusFail, ""}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := ParseTAP(strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			checkWant(t, res, tt.sum, tt.want)
			if len(res.Notes) != tt.notes {
				t.Errorf("notes %q, want %d", res.Notes, tt.notes)
			}
		})
	}
}

func TestTextParsersPassOutputThrough(t *testing.T) {
	in := "TAP version 13\nok 1 - a\n" + strings.Repeat("x", 3*maxTextLine) + "\nnot ok 2 - b\nno newline at the end"
	for _, format := range []string{"tap", "libtest"} {
		var got strings.Builder
		p, err := NewTextParser(format, func(s string) { got.WriteString(s) })
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Consume(strings.NewReader(in)); err != nil {
			t.Fatal(err)
		}
		if got.String() != in {
			t.Errorf("%s: passed through %d bytes, want the %d read", format, got.Len(), len(in))
		}
		if format == "tap" {
			if s := p.Finish().Summary(); s != (artifact.Summary{Passed: 1, Failed: 1}) {
				t.Errorf("tap after an over-long line: %+v", s)
			}
		}
	}
	if _, err := NewTextParser("xml", nil); err == nil {
		t.Error("NewTextParser accepted an unknown format")
	}
}

func fuzzText(f *testing.F, dir string, parse func(string) (Result, error)) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".txt") {
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := parse(string(data))
		if err != nil {
			t.Fatalf("error from an in-memory reader: %v", err)
		}
		checkCases(t, res.Cases, Summarize(res.Cases))
		for _, c := range res.Cases {
			if !utf8.ValidString(c.Name) || !utf8.ValidString(c.Message) || !utf8.ValidString(c.Output) || !utf8.ValidString(c.Package) {
				t.Fatalf("case %q is not valid UTF-8", c.Name)
			}
		}
		if s := res.Summary(); s.Passed < 0 || s.Failed < 0 || s.Skipped < 0 {
			t.Fatalf("negative summary %+v", s)
		}
		for _, n := range res.Notes {
			if len(n) > 64000 {
				t.Fatalf("note of %d bytes: %.200q", len(n), n)
			}
		}
	})
}

func FuzzParseLibtest(f *testing.F) {
	f.Add([]byte("     Running x\nrunning 2 tests\ntest a ... FAILED\n---- a stdout ----\nthread 'a' panicked at x:1:1:\n"))
	fuzzText(f, "testdata/libtest", func(s string) (Result, error) { return ParseLibtest(strings.NewReader(s)) })
}

func FuzzParseTAP(f *testing.F) {
	f.Add([]byte("TAP version 13\n    # Subtest: a\n    not ok 1 - a # TODO\n      ---\n      error: |-\n        boom\n      ...\n"))
	fuzzText(f, "testdata/tap", func(s string) (Result, error) { return ParseTAP(strings.NewReader(s)) })
}
