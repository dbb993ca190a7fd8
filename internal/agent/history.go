package agent

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/clip"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/safepath"
)

// HistoryFolder is one history/<n>-<name>/ folder of a task.
type HistoryFolder struct {
	n      int
	name   string // the folder's name
	phase  string // the phase it is named after
	Failed bool   // output of a failed or cancelled run kept aside
}

// Rel returns the task-relative path of the folder.
func (h HistoryFolder) Rel() string { return path.Join(artifact.HistoryDir, h.name) }

// Join returns the absolute path of rel inside the folder.
func (h HistoryFolder) Join(taskDir, rel string) string {
	return filepath.Join(taskDir, artifact.HistoryDir, h.name, filepath.FromSlash(rel))
}

// HistoryFolders lists history/<n>-<phase>[-failed|-cancelled]/, newest
// (highest n) first. Names that do not follow the pattern are ignored.
func HistoryFolders(taskDir string) []HistoryFolder {
	entries, _ := os.ReadDir(filepath.Join(taskDir, artifact.HistoryDir))
	var out []HistoryFolder
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		num, rest, ok := strings.Cut(e.Name(), "-")
		n, err := strconv.Atoi(num)
		if !ok || err != nil || n <= 0 {
			continue
		}
		h := HistoryFolder{n: n, name: e.Name(), phase: rest}
		for _, suffix := range []string{"-failed", "-cancelled"} {
			if p, ok := strings.CutSuffix(rest, suffix); ok {
				h.phase, h.Failed = p, true
			}
		}
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].n > out[j].n })
	return out
}

// Bounds of what the fix loop quotes from earlier attempts.
const (
	maxFailingCases = 20
	maxCaseOutput   = 2000
	maxLogTail      = 3000
)

// FailingSuite is a suite that failed in an earlier attempt.
type FailingSuite struct {
	ID       string
	Command  string
	ExitCode int
	Cases    []artifact.Case
	LogTail  string
}

// Failures is what went wrong in the attempts since the plan was last
// (re)made: the newest archived test report, code review and accept
// decision, each from the newest history folder that holds one.
type Failures struct {
	TestFrom   string
	TestError  string
	Suites     []FailingSuite
	ReviewFrom string
	ReviewOK   bool
	Issues     []artifact.Issue
	DecideFrom string
	Reasons    []string
	// DiffFrom and Diff are the previous attempt's patch, from the newest
	// folder above.
	DiffFrom string
	Diff     string
}

// Empty reports whether there is nothing to fix.
func (f Failures) Empty() bool {
	return f.TestFrom == "" && f.ReviewFrom == "" && f.DecideFrom == ""
}

// From lists the history folders the failures come From.
func (f Failures) From() []string {
	var out []string
	for _, s := range []string{f.TestFrom, f.ReviewFrom, f.DecideFrom} {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// GatherFailures reads the failures of earlier attempts from history/,
// newest first, stopping at the newest re-plan (a planning or plan_review
// folder): failures of an older plan do not apply. Of each kind (test
// report, code review, accept decision) only the newest archived one
// counts. The previous attempt's patch is read, up to maxDiff bytes, from
// the newest folder that contributed a failure.
func GatherFailures(taskDir string, maxDiff int) Failures {
	var f Failures
	var seenTest, seenReview, seenDecision bool
	var newest *HistoryFolder
	note := func(h HistoryFolder) {
		if newest == nil || h.n > newest.n {
			newest = &h
		}
	}
	for _, h := range HistoryFolders(taskDir) {
		if h.Failed {
			continue
		}
		if h.phase == string(lifecycle.Planning) || h.phase == string(lifecycle.PlanReview) {
			break
		}
		folder := filepath.Join(taskDir, artifact.HistoryDir, h.name)
		if tr := artifact.LoadTestReport(folder); !seenTest && tr.OK() {
			seenTest = true
			ReadTestFailures(&f, folder, tr.Value)
			if len(f.Suites) > 0 || f.TestError != "" {
				f.TestFrom = h.Rel()
				note(h)
			}
		}
		if cr := artifact.LoadCodeReview(folder); !seenReview && cr.OK() {
			seenReview = true
			r := cr.Value
			for _, is := range r.Issues {
				if is.Severity == artifact.SeverityBlocking || is.Severity == artifact.SeverityMajor {
					f.Issues = append(f.Issues, is)
				}
			}
			f.ReviewOK = r.OK && len(r.BlockingIssues()) == 0
			if !f.ReviewOK || len(f.Issues) > 0 {
				f.ReviewFrom = h.Rel()
				note(h)
			}
		}
		if d := artifact.LoadDecision(folder); !seenDecision && d.OK() {
			seenDecision = true
			if d.Value.Verdict == artifact.VerdictChangesRequested {
				f.Reasons = d.Value.Reasons
				f.DecideFrom = h.Rel()
				note(h)
			}
		}
	}
	if newest != nil {
		if diff, ok := ReadFileHead(filepath.Join(taskDir, artifact.HistoryDir, newest.name), artifact.DiffFile, maxDiff); ok {
			f.DiffFrom, f.Diff = newest.Rel(), diff
		}
	}
	return f
}

// ReadTestFailures collects the failing suites of a report.
func ReadTestFailures(f *Failures, folder string, r artifact.TestReport) {
	if r.Status != artifact.TestCompleted {
		f.TestError = strings.TrimSpace("the test runner did not complete: " + r.Error)
		return
	}
	if r.OverallPass {
		return
	}
	cases := 0
	for _, s := range r.Suites {
		if s.OverallPass {
			continue
		}
		fs := FailingSuite{ID: s.ID, Command: s.Command, ExitCode: s.ExitCode}
		for _, c := range s.Cases {
			if c.Status != "fail" && c.Status != "error" {
				continue
			}
			if cases == maxFailingCases {
				break
			}
			cases++
			c.Output = tailText(c.Output, maxCaseOutput)
			c.Message = tailText(c.Message, maxCaseOutput)
			fs.Cases = append(fs.Cases, c)
		}
		if s.Log != "" && strings.HasPrefix(s.Log, "test/logs/") && artifact.CheckPath(s.Log) == nil {
			fs.LogTail, _ = ReadFileTail(folder, s.Log, maxLogTail)
		}
		f.Suites = append(f.Suites, fs)
	}
}

// tail keeps the last limit bytes of s, on a rune boundary.
func tailText(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	s = s[len(s)-limit:]
	for i := 0; i < len(s) && i < 4; i++ {
		if s[i]&0xC0 != 0x80 {
			return "…" + s[i:]
		}
	}
	return "…" + s
}

// ReadFileTail returns the last limit bytes of dir/rel as text, read
// through the bounded reader (safepath.ReadPart: a regular file inside
// dir, never a symbolic link or a named pipe).
func ReadFileTail(dir, rel string, limit int) (string, bool) {
	data, size, err := safepath.ReadPart(dir, rel, int64(limit), safepath.Tail)
	if err != nil {
		return "", false
	}
	s := strings.ToValidUTF8(string(data), "")
	if size > int64(limit) {
		s = "…" + s
	}
	return s, true
}

// ReadFileHead returns up to limit bytes of dir/rel as text, marked when
// cut, read like ReadFileTail.
func ReadFileHead(dir, rel string, limit int) (string, bool) {
	if limit <= 0 {
		return "", false
	}
	data, size, err := safepath.ReadPart(dir, rel, int64(limit), safepath.Head)
	if err != nil {
		return "", false
	}
	s := clip.Head(strings.ToValidUTF8(string(data), ""), limit)
	if size > int64(limit) {
		s += "\n… (cut: the file has " + strconv.FormatInt(size, 10) + " bytes)\n"
	}
	return s, true
}

// RenderFailures writes the failures of earlier attempts for the prompt.
func RenderFailures(f Failures) string {
	if f.Empty() {
		return ""
	}
	var b strings.Builder
	if f.TestFrom != "" {
		fmt.Fprintf(&b, "### Tests (%s/%s)\n", f.TestFrom, artifact.TestReportFile)
		if f.TestError != "" {
			fmt.Fprintf(&b, "%s\n", f.TestError)
		}
		for _, s := range f.Suites {
			WriteFailingSuite(&b, s)
		}
		b.WriteString("\n")
	}
	if f.ReviewFrom != "" {
		fmt.Fprintf(&b, "### Code review (%s/%s)\n", f.ReviewFrom, artifact.CodeReviewFile)
		if !f.ReviewOK {
			b.WriteString("The reviewers did not accept the change.\n")
		}
		for _, is := range f.Issues {
			where := ""
			if p := is.Place(); p != "" {
				where = " " + p
			}
			kind := is.Kind
			if kind == "" {
				kind = "code"
			}
			fmt.Fprintf(&b, "- [%s, %s]%s %s\n", is.Severity, kind, where, indentLines(is.Message))
		}
		b.WriteString("\n")
	}
	if f.DecideFrom != "" {
		fmt.Fprintf(&b, "### The person deciding asked for changes (%s/%s)\n", f.DecideFrom, artifact.DecisionFile)
		for _, r := range f.Reasons {
			fmt.Fprintf(&b, "- %s\n", indentLines(r))
		}
		b.WriteString("\n")
	}
	if f.Diff != "" {
		fmt.Fprintf(&b, "### The previous attempt's change (%s/%s)\n%s\n", f.DiffFrom, artifact.DiffFile, f.Diff)
	}
	return b.String()
}

// indent continues a multi-line text under a list item.
func indentLines(s string) string { return strings.ReplaceAll(s, "\n", "\n    ") }

// WriteFailingSuite describes one failing suite for a model: its command
// and exit code, each failing case with its message and output, and the
// end of its log.
func WriteFailingSuite(b *strings.Builder, s FailingSuite) {
	fmt.Fprintf(b, "\nSuite %s failed: `%s` exited %d.\n", s.ID, s.Command, s.ExitCode)
	for _, c := range s.Cases {
		name := c.Name
		if c.Package != "" {
			name = c.Package + " " + name
		}
		fmt.Fprintf(b, "- %s: %s\n", name, c.Status)
		if m := strings.TrimSpace(c.Message); m != "" {
			fmt.Fprintf(b, "  message: %s\n", indentLines(m))
		}
		if o := strings.TrimSpace(c.Output); o != "" {
			fmt.Fprintf(b, "  output:\n    %s\n", indentLines(o))
		}
	}
	if s.LogTail != "" {
		fmt.Fprintf(b, "End of the suite's log:\n    %s\n", indentLines(strings.TrimSpace(s.LogTail)))
	}
}
