package testreport

import (
	"errors"
	"os"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/artifact/artifacttest"
)

func TestParseGoTestJSONRecorded(t *testing.T) {
	f := recorded(t, "testdata/gojson/mixed.jsonl")
	cases, sum, err := ParseGoTestJSON(f)
	if err != nil {
		t.Fatalf("ParseGoTestJSON: %v", err)
	}
	want := artifact.Summary{Passed: 3, Failed: 5, Skipped: 1, Error: 2}
	if sum != want {
		t.Errorf("summary = %+v, want %+v", sum, want)
	}
	tests := []struct {
		name, pkg, status, message string
		output                     string // substring of Output ("" = no output kept)
	}{
		{"TestOK", "example.com/gx/a", StatusPass, "", ""},
		{"TestBad", "example.com/gx/a", StatusFail, "a_test.go:6: want 1 got 2", "--- FAIL: TestBad"},
		{"TestSkip", "example.com/gx/a", StatusSkip, "a_test.go:7: not today", "--- SKIP"},
		{"TestSub", "example.com/gx/a", StatusFail, "test failed", "--- FAIL: TestSub"},
		{"TestSub/x", "example.com/gx/a", StatusPass, "", ""},
		{"TestSub/y", "example.com/gx/a", StatusFail, "a_test.go:10: boom", "boom"},
		{"TestPanic", "example.com/gx/d", StatusFail, "panic: kaboom [recovered, repanicked]", "goroutine"},
		{"TestFast", "example.com/gx/f", StatusPass, "", ""},
		{"TestHangs", "example.com/gx/f", StatusFail, "test did not finish: its package failed", "panic: test timed out after 3s"},
		{CaseBuildFailed, "example.com/gx/b", StatusError, "build failed: b/b_test.go:5:28: undefined: undefined", "# example.com/gx/b"},
		{CasePackageFailed, "example.com/gx/e", StatusError, "package failed without a failing test: setup failed", "FAIL\texample.com/gx/e"},
	}
	if len(cases) != len(tests) {
		t.Errorf("%d cases, want %d: %+v", len(cases), len(tests), cases)
	}
	for _, tt := range tests {
		c := artifacttest.FindCase(t, cases, tt.name)
		if c.Package != tt.pkg || c.Status != tt.status || c.Message != tt.message {
			t.Errorf("case %s = {pkg %q status %q message %q}, want {%q %q %q}", tt.name, c.Package, c.Status, c.Message, tt.pkg, tt.status, tt.message)
		}
		if tt.output == "" && c.Output != "" {
			t.Errorf("case %s kept output %q, want none", tt.name, c.Output)
		}
		if !strings.Contains(c.Output, tt.output) {
			t.Errorf("case %s output %q lacks %q", tt.name, c.Output, tt.output)
		}
	}
}

// ev builds one test2json line.
func ev(action, pkg, test, output string) string {
	s := `{"Action":"` + action + `","Package":"` + pkg + `"`
	if test != "" {
		s += `,"Test":"` + test + `"`
	}
	if action == "output" {
		s += `,"Output":` + quoteJSON(output)
	}
	return s + "}\n"
}

func quoteJSON(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`)
	return `"` + r.Replace(s) + `"`
}

func TestParseGoTestJSONEdgeCases(t *testing.T) {
	type want struct {
		name, status, message string
	}
	tests := []struct {
		name   string
		stream string
		want   []want
	}{
		{
			name:   "empty stream",
			stream: "",
			want:   nil,
		},
		{
			name: "non-JSON lines are tolerated",
			stream: "go: downloading example.com/x v1.0.0\n" + "{broken json\n" + `{"no":"action"}` + "\n" +
				ev("run", "p", "TestA", "") + ev("pass", "p", "TestA", ""),
			want: []want{{"TestA", StatusPass, ""}},
		},
		{
			name:   "test without a result when the stream ends",
			stream: ev("run", "p", "TestA", "") + ev("output", "p", "TestA", "=== RUN   TestA\n"),
			want:   []want{{"TestA", StatusError, "no result: the test run ended before this test finished"}},
		},
		{
			name:   "output after pass is not kept",
			stream: ev("run", "p", "TestA", "") + ev("pass", "p", "TestA", "") + ev("output", "p", "TestA", "late\n"),
			want:   []want{{"TestA", StatusPass, ""}},
		},
		{
			name: "build failure no package claims",
			stream: `{"ImportPath":"p/q [p/q.test]","Action":"build-output","Output":"# p/q\n"}` + "\n" +
				`{"ImportPath":"p/q [p/q.test]","Action":"build-output","Output":"q.go:1: syntax error\n"}` + "\n" +
				`{"ImportPath":"p/q [p/q.test]","Action":"build-fail"}` + "\n",
			want: []want{{CaseBuildFailed, StatusError, "build failed: q.go:1: syntax error"}},
		},
		{
			name:   "package fail after a failing test adds no error case",
			stream: ev("run", "p", "TestA", "") + ev("fail", "p", "TestA", "") + ev("fail", "p", "", ""),
			want:   []want{{"TestA", StatusFail, "test failed"}},
		},
		{
			name:   "package without test files is no case",
			stream: ev("output", "p", "", "?   \tp\t[no test files]\n") + ev("skip", "p", "", ""),
			want:   nil,
		},
		{
			name:   "a line without a newline at EOF is read",
			stream: strings.TrimSuffix(ev("run", "p", "TestA", "")+ev("skip", "p", "TestA", ""), "\n"),
			want:   []want{{"TestA", StatusSkip, ""}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cases, sum, err := ParseGoTestJSON(strings.NewReader(tt.stream))
			if err != nil {
				t.Fatalf("ParseGoTestJSON: %v", err)
			}
			if len(cases) != len(tt.want) {
				t.Fatalf("cases = %+v, want %d", cases, len(tt.want))
			}
			for i, w := range tt.want {
				c := cases[i]
				if c.Name != w.name || c.Status != w.status || c.Message != w.message {
					t.Errorf("case %d = {%q %q %q}, want {%q %q %q}", i, c.Name, c.Status, c.Message, w.name, w.status, w.message)
				}
			}
			if sum != Summarize(cases) {
				t.Errorf("summary %+v does not count the cases", sum)
			}
		})
	}
}

func TestParseGoTestJSONBoundsOutput(t *testing.T) {
	var b strings.Builder
	b.WriteString(ev("run", "p", "TestLoud", ""))
	b.WriteString(ev("output", "p", "TestLoud", "FIRST LINE\n"))
	line := strings.Repeat("x", 1000) + "\n"
	for range 2000 { // 2 MB of output
		b.WriteString(ev("output", "p", "TestLoud", line))
	}
	b.WriteString(ev("output", "p", "TestLoud", "LAST LINE\n"))
	b.WriteString(ev("fail", "p", "TestLoud", ""))
	// One over-long line: more than maxJSONLine without a newline.
	b.WriteString(strings.Repeat("y", maxJSONLine+10) + "\n")

	var texts []string
	p := NewGoParser(func(s string) { texts = append(texts, s) })
	if err := p.Consume(strings.NewReader(b.String())); err != nil {
		t.Fatal(err)
	}
	cases := p.Finish()
	c := artifacttest.FindCase(t, cases, "TestLoud")
	if len(c.Output) > caseOutputHead+caseOutputTail+200 {
		t.Errorf("output of %d bytes kept, want at most about %d", len(c.Output), caseOutputHead+caseOutputTail)
	}
	for _, s := range []string{"FIRST LINE", "LAST LINE", "bytes of output dropped"} {
		if !strings.Contains(c.Output, s) {
			t.Errorf("bounded output lacks %q", s)
		}
	}
	if c.Message != "FIRST LINE" {
		t.Errorf("message = %q, want FIRST LINE", c.Message)
	}
	if last := texts[len(texts)-1]; !strings.Contains(last, "dropped an over-long output line") {
		t.Errorf("last live text = %q, want the over-long line marker", last)
	}
}

func TestParseGoTestJSONReadError(t *testing.T) {
	boom := errors.New("disk on fire")
	r := iotest.TimeoutReader(strings.NewReader(ev("run", "p", "TestA", "")))
	_, _, err := ParseGoTestJSON(iotest.ErrReader(boom))
	if !errors.Is(err, boom) {
		t.Errorf("err = %v, want %v", err, boom)
	}
	cases, _, err := ParseGoTestJSON(r)
	if err == nil || len(cases) != 1 {
		t.Errorf("partial read: cases %+v err %v, want the case read so far and an error", cases, err)
	}
}

func FuzzParseGoTestJSON(f *testing.F) {
	data, err := os.ReadFile("testdata/gojson/mixed.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte(ev("run", "p", "T", "") + ev("output", "p", "T", "x\n") + ev("fail", "p", "", "")))
	f.Add([]byte(`{"Action":"build-fail","ImportPath":"q"}` + "\n" + `{"Action":"fail","Package":"q","FailedBuild":"q"}`))
	f.Add([]byte("\xff\xfe{\"Action\":\"output\",\"Output\":\"\\ud800\"}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cases, sum, err := ParseGoTestJSON(strings.NewReader(string(data)))
		if err != nil {
			t.Fatalf("error from an in-memory reader: %v", err)
		}
		checkCases(t, cases, sum)
	})
}

// checkCases asserts the invariants every parser result keeps.
func checkCases(t *testing.T, cases []artifact.Case, sum artifact.Summary) {
	t.Helper()
	if sum != Summarize(cases) {
		t.Fatalf("summary %+v does not count the cases", sum)
	}
	for _, c := range cases {
		switch c.Status {
		case StatusPass, StatusFail, StatusSkip, StatusError:
		default:
			t.Fatalf("case %q has status %q", c.Name, c.Status)
		}
		if c.Status == StatusPass && c.Output != "" {
			t.Fatalf("passing case %q kept output", c.Name)
		}
		if len(c.Output) > 2*(caseOutputHead+caseOutputTail)+200 {
			t.Fatalf("case %q kept %d bytes of output", c.Name, len(c.Output))
		}
		if len([]rune(c.Message)) > MaxMessage {
			t.Fatalf("case %q message has %d runes", c.Name, len([]rune(c.Message)))
		}
	}
}

// A package whose results go test took from its test cache is counted as
// the replay reports it, and said to be cached (recorded: package a cached,
// b run after its test file changed).
func TestGoParserCached(t *testing.T) {
	f := recorded(t, "testdata/gojson/cached.jsonl")
	p := NewGoParser(nil)
	if err := p.Consume(f); err != nil {
		t.Fatal(err)
	}
	cases := p.Finish()
	if got, want := Summarize(cases), (artifact.Summary{Passed: 3, Skipped: 1}); got != want {
		t.Errorf("summary %+v, want %+v", got, want)
	}
	if p.Cached() != 1 {
		t.Errorf("Cached() = %d, want 1 (package a)", p.Cached())
	}
}
