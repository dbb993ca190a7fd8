package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/termtext"
)

// Bounds on what `orch show test` prints of a report in a terminal: the
// failing tests of a suite, the last lines of each one's output, and the
// length of a line. The report and the suite's log hold the rest, and the
// output says where.
const (
	shownFailing     = 20
	shownOutputLines = 30
	shownLineRunes   = 400
)

// testReportExtra are the fields orch's test runner adds to a report
// beside the artifact's own (docs/artifacts.md, "test/report.json").
type testReportExtra struct {
	Base        string   `json:"base"`
	Sandbox     string   `json:"sandbox"`
	Notes       []string `json:"notes"`
	Worktree    string   `json:"worktree"`
	RepoChanged []string `json:"repo_changed"`
}

// renderTestReport lays out a test report (test/report.json, or accept's
// regression report) for a person at a terminal: what ran and where, the
// counts, each failing test by name with the end of its output, each
// suite's command and exit status. rel names the file; data is its
// content, checked like every reader of the report checks it (an invalid
// report is an error naming the file and field). asWritten says where the
// whole file is, for what is left out.
func renderTestReport(w io.Writer, rel string, data []byte, st termtext.Style, asWritten string) error {
	rep, err := artifact.DecodeTestReport(rel, data)
	if err != nil {
		return err
	}
	var extra testReportExtra
	_ = json.Unmarshal(data, &extra) // shape checked by DecodeTestReport; absent fields stay empty

	var b strings.Builder
	// The title: which report, and its verdict in words.
	title := rel
	if rel == artifact.RegressionReportFile {
		title += " — orch accept's regression check"
	}
	verdict, colour := testVerdict(rep)
	fmt.Fprintf(&b, "%s: %s\n", st.Paint(title, termtext.Bold), st.Paint(verdict, colour))
	if rel == artifact.RegressionReportFile {
		fmt.Fprintf(&b, "HEAD had moved since the base: the suites re-ran on the commit orch accept made%s\n", onCommit(extra.Base))
	}
	line := "status " + rep.Status + " · " + rep.Summary.String()
	if extra.Base != "" && rel != artifact.RegressionReportFile {
		line += " · base " + shortSHA(extra.Base)
	}
	b.WriteString(termtext.Line(line) + "\n")
	if rep.Error != "" {
		fmt.Fprintf(&b, "%s %s\n", st.Paint("error:", colour), termtext.Line(rep.Error))
	}
	// Where the suites ran, and the notes that are not the same on every
	// run (the routine ones are counted).
	b.WriteString(termtext.Line(sandboxLine(extra.Sandbox, extra.Notes)) + "\n")
	routine := 0
	for _, n := range extra.Notes {
		if routineNote(n) {
			routine++
			continue
		}
		fmt.Fprintf(&b, "note: %s\n", termtext.Line(n))
	}
	if routine > 0 {
		fmt.Fprintf(&b, "%s\n", st.Paint(fmt.Sprintf("%d more notes on how the suites ran: %s", routine, asWritten), termtext.Dim))
	}
	if len(extra.RepoChanged) > 0 {
		fmt.Fprintf(&b, "%s %s\n", st.Paint("the repository changed while the suites ran:", termtext.Red), termtext.Line(strings.Join(extra.RepoChanged, ", ")))
	}
	if extra.Worktree != "" {
		fmt.Fprintf(&b, "worktree kept: %s\n", termtext.Line(extra.Worktree))
	}
	for _, s := range rep.Suites {
		b.WriteString("\n")
		writeSuite(&b, s, st, asWritten)
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// testVerdict is a report's outcome in words, and its colour.
func testVerdict(rep artifact.TestReport) (string, termtext.Colour) {
	switch rep.Status {
	case artifact.TestCompleted:
		if rep.OverallPass {
			return "tests passed", termtext.Green
		}
		return "tests failed", termtext.Red
	case artifact.TestError:
		return "the test runner failed (not a test failure)", termtext.Yellow
	case artifact.TestNoTests:
		return "no test ran (not a test failure)", termtext.Yellow
	}
	return "still running", termtext.Yellow
}

func onCommit(sha string) string {
	if sha == "" {
		return ""
	}
	return " " + shortSHA(sha)
}

// writeSuite writes one suite: its command, exit status and counts, then
// each failing test with the end of its output.
func writeSuite(b *strings.Builder, s artifact.Suite, st termtext.Style, asWritten string) {
	mark, colour := "PASS", termtext.Green
	if !s.OverallPass {
		mark, colour = "FAIL", termtext.Red
	}
	fmt.Fprintf(b, "%s %s %s\n", st.Paint(mark, colour), st.Paint("suite "+termtext.Line(s.ID), termtext.Bold), termtext.Line("("+s.Kind+")"))
	fmt.Fprintf(b, "  command: %s\n", st.Paint(termtext.Line(s.Command), termtext.Cyan))
	status := fmt.Sprintf("  exit %d · %s", s.ExitCode, s.Summary)
	if s.JudgedBy == artifact.JudgedByExitCode {
		status += " · judged by its exit code"
	}
	b.WriteString(termtext.Line(status) + "\n")
	if s.Log != "" {
		fmt.Fprintf(b, "  log: %s\n", termtext.Line(s.Log))
	}
	var failing []artifact.Case
	for _, c := range s.Cases {
		if c.Status == "fail" || c.Status == "error" {
			failing = append(failing, c)
		}
	}
	for i, c := range failing {
		if i == shownFailing {
			fmt.Fprintf(b, "  %s\n", st.Paint(fmt.Sprintf("… %d more failing tests: %s", len(failing)-shownFailing, asWritten), termtext.Dim))
			break
		}
		writeCase(b, c, s.Log, st)
	}
}

// writeCase writes a failing test: its name, status and time, its message
// and the last lines of its output.
func writeCase(b *strings.Builder, c artifact.Case, log string, st termtext.Style) {
	name := c.Name
	if c.Package != "" {
		name = c.Package + " " + c.Name
	}
	what := c.Status
	if c.Elapsed > 0 {
		what += fmt.Sprintf(", %.2fs", c.Elapsed)
	}
	fmt.Fprintf(b, "  %s %s (%s)\n", st.Paint("✗", termtext.Red), st.Paint(termtext.Line(name), termtext.Bold), what)
	msg := strings.TrimSpace(c.Message)
	out := strings.TrimRight(c.Output, " \t\r\n")
	if msg != "" && !strings.Contains(out, msg) {
		for _, l := range strings.Split(msg, "\n") {
			fmt.Fprintf(b, "      %s\n", cutLine(l, st))
		}
	}
	if out == "" {
		return
	}
	lines := strings.Split(out, "\n")
	if len(lines) > shownOutputLines {
		where := "the report"
		if log != "" {
			where = termtext.Line(log)
		}
		fmt.Fprintf(b, "      %s\n", st.Paint(fmt.Sprintf("… %d earlier lines of output: %s", len(lines)-shownOutputLines, where), termtext.Dim))
		lines = lines[len(lines)-shownOutputLines:]
	}
	for _, l := range lines {
		fmt.Fprintf(b, "    %s %s\n", st.Paint("│", termtext.Dim), cutLine(l, st))
	}
}

// cutLine cuts one line of a test's output at shownLineRunes and makes it
// safe for the terminal (a control character shown as its notation, in
// reverse video with colours).
func cutLine(l string, st termtext.Style) string {
	l = strings.TrimRight(l, "\r")
	if r := []rune(l); len(r) > shownLineRunes {
		l = string(r[:shownLineRunes-1]) + "…"
	}
	return st.Line(l)
}
