package testreport

import (
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/clip"
	"github.com/orchdev/orch/internal/lazyre"
)

// Names of the cases the libtest parser makes for failures outside a test.
const (
	// CaseBinaryFailed is a test binary that ended before every test it
	// announced had a result (a crash, an abort, a signal).
	CaseBinaryFailed = "[test binary failed]"
)

var (
	libtestRunning = lazyre.New(`^\s+Running (.+?)(?: \((.*)\))?$`)
	// libtestHash is the hash cargo appends to a test binary's name.
	libtestHash    = lazyre.New(`-[0-9a-f]{8,}$`)
	libtestDoc     = lazyre.New(`^\s+Doc-tests (\S+)$`)
	libtestCount   = lazyre.New(`^running (\d+) tests?$`)
	libtestResult  = lazyre.New(`^test (.+) \.\.\. (ok|FAILED|ignored(?:, .*)?)$`)
	libtestSummary = lazyre.New(`^test result: (ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored; (\d+) measured; (\d+) filtered out`)
	libtestFailure = lazyre.New(`^---- (.+) (stdout|stderr) ----$`)
	cargoNoCompile = lazyre.New("^error: could not compile `([^`]+)`(.*?)(?: due to .*)?;?$")
	cargoNotExit   = lazyre.New(`^\s*(?:Caused by:\s*)?process didn't exit successfully: (.*)$`)
)

// LibtestParser reads the output of `cargo test` (stdout and stderr
// together): Rust's libtest prints one "test NAME ... ok|FAILED|ignored"
// line per test of each test binary ("Running unittests src/lib.rs",
// "Running tests/it.rs", "Doc-tests crate"), the failing tests' captured
// output in "---- NAME stdout ----" sections, and a "test result:" line
// per binary. Every binary's tests become cases whose Package is the
// binary; a compile error ("error: could not compile") is a
// CaseBuildFailed error case, and a binary that ended before all the
// tests it announced had a result is a CaseBinaryFailed error case. Each
// binary's "test result:" counts are checked against its test lines; a
// difference becomes a note.
type LibtestParser struct {
	onOutput func(string)
	cases    []*artifact.Case
	outputs  map[*artifact.Case]*BoundedBuf
	// the binary being read
	binary    string
	announced int // "running N tests"
	seen      int // result lines of this binary
	started   bool
	byName    map[string]*artifact.Case
	capture   *artifact.Case // the failure section being read
	// compiler output since the last binary, for a build failure
	build     BoundedBuf
	buildMsg  string
	notExit   string
	extra     []artifact.Case
	notes     []string
	summaries int
	binaries  int // binaries that announced their tests
}

// NewLibtestParser returns a parser passing the text on to onOutput (may
// be nil).
func NewLibtestParser(onOutput func(string)) *LibtestParser {
	return &LibtestParser{onOutput: onOutput, outputs: map[*artifact.Case]*BoundedBuf{}}
}

// Consume reads r to its end.
func (p *LibtestParser) Consume(r io.Reader) error {
	return consumeLines(r, p.onOutput, p.line)
}

// ParseLibtest reads a whole `cargo test` output.
func ParseLibtest(r io.Reader) (Result, error) {
	p := NewLibtestParser(nil)
	err := p.Consume(r)
	return p.Finish(), err
}

func (p *LibtestParser) line(line string) {
	if m := libtestResult.FindStringSubmatch(line); m != nil && p.started {
		p.capture = nil
		p.result(m[1], m[2])
		return
	}
	if m := libtestFailure.FindStringSubmatch(line); m != nil && p.started {
		p.capture = p.byName[m[1]]
		return
	}
	if m := libtestSummary.FindStringSubmatch(line); m != nil && p.started {
		p.capture = nil
		p.summary(m)
		return
	}
	if m := libtestRunning.FindStringSubmatch(line); m != nil {
		// "unittests src/lib.rs (target/debug/deps/alpha-f616…)": in a
		// workspace every crate has a src/lib.rs, so the binary's name
		// (the crate's, or the integration test's) comes along.
		binary := strings.TrimSpace(m[1])
		if name := libtestHash.ReplaceAllString(path.Base(filepath.ToSlash(m[2])), ""); m[2] != "" && name != "" && name != "." && name != "/" {
			binary += " (" + name + ")"
		}
		p.begin(binary)
		return
	}
	if m := libtestDoc.FindStringSubmatch(line); m != nil {
		p.begin("Doc-tests " + m[1])
		return
	}
	if m := libtestCount.FindStringSubmatch(line); m != nil && p.binary != "" && !p.started {
		p.announced, _ = strconv.Atoi(m[1])
		p.started = true
		p.binaries++
		return
	}
	if strings.TrimSpace(line) == "failures:" {
		p.capture = nil
		return
	}
	if p.capture != nil {
		p.outputs[p.capture].WriteString(line + "\n")
		return
	}
	if m := cargoNotExit.FindStringSubmatch(line); m != nil {
		p.notExit = clip.Runes(strings.TrimSpace(m[1]), MaxMessage)
		return
	}
	if m := cargoNoCompile.FindStringSubmatch(line); m != nil {
		p.end()
		msg := p.buildMsg
		if msg == "" {
			msg = strings.TrimPrefix(line, "error: ")
		}
		p.extra = append(p.extra, artifact.Case{
			Name: CaseBuildFailed, Package: m[1] + m[2], Status: StatusError,
			Message: clip.Runes("build failed: "+msg, MaxMessage), Output: p.build.String(),
		})
		p.build, p.buildMsg = BoundedBuf{}, ""
		return
	}
	if !p.started {
		p.build.WriteString(line + "\n")
		if p.buildMsg == "" && strings.HasPrefix(line, "error") && !strings.HasPrefix(line, "error: aborting") {
			p.buildMsg = strings.TrimSpace(line)
		}
	}
}

// begin starts a new test binary.
func (p *LibtestParser) begin(name string) {
	p.end()
	p.binary, p.announced, p.seen, p.started = name, 0, 0, false
	p.byName = map[string]*artifact.Case{}
	p.notExit = ""
	p.build, p.buildMsg = BoundedBuf{}, ""
}

// end closes the binary being read: one that announced more tests than
// it reported ended early.
func (p *LibtestParser) end() {
	if p.binary != "" && p.started && p.seen < p.announced {
		msg := fmt.Sprintf("%s ran %d of the %d tests it announced and ended", p.binary, p.seen, p.announced)
		if p.notExit != "" {
			msg += ": " + p.notExit
		}
		c := artifact.Case{Name: CaseBinaryFailed, Package: p.binary, Status: StatusError, Message: clip.Runes(msg, MaxMessage)}
		// Tests still running when the binary died died with it.
		p.extra = append(p.extra, c)
	}
	p.binary, p.started, p.capture = "", false, nil
}

func (p *LibtestParser) result(name, outcome string) {
	p.seen++
	c := &artifact.Case{Name: clip.Runes(name, 1000), Package: p.binary, Status: StatusPass}
	switch {
	case outcome == "FAILED":
		c.Status = StatusFail
	case strings.HasPrefix(outcome, "ignored"):
		c.Status = StatusSkip
		if _, reason, ok := strings.Cut(outcome, ", "); ok {
			c.Message = clip.Runes(reason, MaxMessage)
		}
	}
	p.cases = append(p.cases, c)
	p.outputs[c] = &BoundedBuf{}
	p.byName[name] = c
}

func (p *LibtestParser) summary(m []string) {
	p.summaries++
	n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
	passed, failed, ignored := n(2), n(3), n(4)
	var got artifact.Summary
	for _, c := range p.cases {
		if c.Package == p.binary {
			got = Add(got, Summarize([]artifact.Case{*c}))
		}
	}
	if got.Passed != passed || got.Failed != failed || got.Skipped != ignored {
		p.notes = append(p.notes, fmt.Sprintf("%s: libtest's summary says %d passed, %d failed, %d ignored; orch read %d passed, %d failed, %d ignored from its test lines",
			p.binary, passed, failed, ignored, got.Passed, got.Failed, got.Skipped))
	}
	p.seen = max(p.seen, p.announced) // the binary finished
	p.end()
}

// Finish returns the cases read.
func (p *LibtestParser) Finish() Result {
	p.end()
	res := Result{Notes: p.notes, Recognised: p.binaries > 0 || len(p.extra) > 0}
	for _, c := range p.cases {
		cc := *c
		if cc.Status == StatusFail {
			out := strings.TrimSpace(p.outputs[c].String())
			cc.Output = out
			cc.Message = panicMessage(out)
			if cc.Message == "" {
				cc.Message = "test failed"
			}
		}
		res.Cases = append(res.Cases, cc)
	}
	res.Cases = append(res.Cases, p.extra...)
	return res
}

// panicMessage returns the message of a Rust panic in a failed test's
// output: the line after "panicked at FILE:LINE:COL:" (or the old
// one-line form "panicked at 'msg', FILE"), else the first line.
func panicMessage(out string) string {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		_, rest, ok := strings.Cut(l, "panicked at ")
		if !ok {
			continue
		}
		if strings.HasSuffix(strings.TrimSpace(rest), ":") && i+1 < len(lines) {
			return clip.Runes(strings.TrimSpace(lines[i+1])+" (at "+strings.TrimSuffix(strings.TrimSpace(rest), ":")+")", MaxMessage)
		}
		return clip.Runes(strings.TrimSpace(rest), MaxMessage)
	}
	return FirstLine(out)
}
