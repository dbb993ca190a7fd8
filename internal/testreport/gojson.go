package testreport

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/clip"
)

// maxJSONLine bounds one line of a `go test -json` stream. Longer lines
// (a test printing megabytes without a newline) are dropped with a marker.
const maxJSONLine = 1 << 20

// Names of the cases made for package-level failures of go test.
const (
	CaseBuildFailed   = "[build failed]"
	CasePackageFailed = "[package failed]"
)

// goEvent is one test2json event (see `go doc test2json`).
type goEvent struct {
	Action      string
	Package     string
	Test        string
	Elapsed     float64
	Output      *string
	FailedBuild string
	ImportPath  string
}

// ParseGoTestJSON reads a `go test -json` stream and returns one case per
// test and subtest (pass, fail, skip) plus an error case for every package
// that failed without a failing test (build failure, TestMain exit, panic in
// init) and for every build failure no package claimed. Output is kept per
// case, bounded, and only for cases that did not pass. Lines that are not
// JSON events are tolerated. The error is only for a failing reader.
func ParseGoTestJSON(r io.Reader) ([]artifact.Case, artifact.Summary, error) {
	p := NewGoParser(nil)
	err := p.Consume(r)
	cases := p.Finish()
	return cases, Summarize(cases), err
}

type goCase struct {
	c      artifact.Case
	out    BoundedBuf
	done   bool
	outEnd bool // output after the result is no longer interesting
}

type goPackage struct {
	out       BoundedBuf
	failed    bool // a test of the package failed
	errorCase bool // an error case was made for the package
}

type GoParser struct {
	onOutput func(string) // live text output, may be nil
	cases    map[[2]string]*goCase
	order    []*goCase
	pkgs     map[string]*goPackage
	builds   map[string]*BoundedBuf // build output per ImportPath
	buildOrd []string
	failed   map[string]bool // ImportPaths whose build failed
	claimed  map[string]bool // ImportPaths a package fail pointed to
	extra    []artifact.Case // package-level error cases in order
	cached   map[string]bool // packages whose results came from go's test cache
}

func NewGoParser(onOutput func(string)) *GoParser {
	return &GoParser{
		onOutput: onOutput,
		cases:    map[[2]string]*goCase{},
		pkgs:     map[string]*goPackage{},
		builds:   map[string]*BoundedBuf{},
		failed:   map[string]bool{},
		claimed:  map[string]bool{},
		cached:   map[string]bool{},
	}
}

// Cached is the number of packages whose results go test took from its
// test cache ("ok  pkg  (cached)"): the same test binary with the same
// inputs (files and environment variables it read) passed before, and go
// replayed its output. Their tests are counted as the replay reports
// them.
func (p *GoParser) Cached() int {
	return len(p.cached)
}

// consume reads lines until EOF.
func (p *GoParser) Consume(r io.Reader) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	tooLong := 0
	for {
		chunk, err := br.ReadSlice('\n')
		switch {
		case tooLong > 0:
			tooLong += len(chunk)
		case len(line)+len(chunk) > maxJSONLine:
			tooLong = len(line) + len(chunk)
			line = line[:0]
		default:
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if tooLong > 0 {
			p.text(fmt.Sprintf("[orch: dropped an over-long output line of %d bytes]\n", tooLong))
			tooLong = 0
		} else if len(line) > 0 {
			p.line(line)
		}
		line = line[:0]
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read go test -json stream: %w", err)
		}
	}
}

func (p *GoParser) text(s string) {
	if p.onOutput != nil {
		p.onOutput(s)
	}
}

func (p *GoParser) line(line []byte) {
	trimmed := bytes.TrimSpace(line)
	var ev goEvent
	if len(trimmed) == 0 || trimmed[0] != '{' || json.Unmarshal(trimmed, &ev) != nil || ev.Action == "" {
		p.text(string(line))
		return
	}
	p.event(ev)
}

func (p *GoParser) pkg(name string) *goPackage {
	pk := p.pkgs[name]
	if pk == nil {
		pk = &goPackage{}
		p.pkgs[name] = pk
	}
	return pk
}

func (p *GoParser) testCase(pkg, test string) *goCase {
	key := [2]string{pkg, test}
	gc := p.cases[key]
	if gc == nil {
		gc = &goCase{c: artifact.Case{Name: test, Package: pkg}}
		p.cases[key] = gc
		p.order = append(p.order, gc)
	}
	return gc
}

func (p *GoParser) event(ev goEvent) {
	out := ""
	if ev.Output != nil {
		out = *ev.Output
	}
	switch {
	case ev.Action == "build-output":
		p.text(out)
		b := p.builds[ev.ImportPath]
		if b == nil {
			b = &BoundedBuf{}
			p.builds[ev.ImportPath] = b
			p.buildOrd = append(p.buildOrd, ev.ImportPath)
		}
		b.WriteString(out)
	case ev.Action == "build-fail":
		if !p.failed[ev.ImportPath] {
			p.failed[ev.ImportPath] = true
			if p.builds[ev.ImportPath] == nil {
				p.builds[ev.ImportPath] = &BoundedBuf{}
				p.buildOrd = append(p.buildOrd, ev.ImportPath)
			}
		}
	case ev.Test != "":
		p.testEvent(ev, out)
	case ev.Package != "":
		p.packageEvent(ev, out)
	default:
		p.text(out)
	}
}

func (p *GoParser) testEvent(ev goEvent, out string) {
	gc := p.testCase(ev.Package, ev.Test)
	switch ev.Action {
	case "output":
		p.text(out)
		if !gc.outEnd {
			gc.out.WriteString(out)
		}
	case "pass", "fail", "skip":
		gc.done = true
		gc.c.Status = ev.Action // test2json's pass, fail and skip are our statuses
		gc.c.Elapsed = ev.Elapsed
		if ev.Action == "pass" {
			// A passing test keeps no output; late output is not kept.
			gc.outEnd = true
			gc.out = BoundedBuf{}
		}
		if ev.Action == "fail" {
			p.pkg(ev.Package).failed = true
		}
	}
}

func (p *GoParser) packageEvent(ev goEvent, out string) {
	pk := p.pkg(ev.Package)
	switch ev.Action {
	case "output":
		p.text(out)
		pk.out.WriteString(out)
		if f := strings.Fields(out); len(f) == 3 && f[0] == "ok" && f[2] == "(cached)" {
			p.cached[ev.Package] = true
		}
	case "fail":
		p.packageFailed(ev, pk)
	}
}

func (p *GoParser) packageFailed(ev goEvent, pk *goPackage) {
	// Tests still running when their package failed (a panic, a timeout)
	// failed with it.
	for _, gc := range p.order {
		if gc.c.Package == ev.Package && !gc.done {
			gc.done = true
			gc.c.Status = StatusFail
			gc.c.Message = "test did not finish: its package failed"
			pk.failed = true
		}
	}
	if pk.failed || pk.errorCase {
		return
	}
	pk.errorCase = true
	c := artifact.Case{Name: CasePackageFailed, Package: ev.Package, Status: StatusError, Elapsed: ev.Elapsed}
	if ev.FailedBuild != "" {
		p.claimed[ev.FailedBuild] = true
		c.Name = CaseBuildFailed
		c.Message = "build failed: " + ev.FailedBuild
		if b := p.builds[ev.FailedBuild]; b != nil && b.Len() > 0 {
			c.Output = b.String()
			if m := firstMeaningful(c.Output); m != "" {
				c.Message = "build failed: " + m
			}
		}
		c.Message = clip.Runes(c.Message, MaxMessage)
	} else {
		c.Output = pk.out.String()
		c.Message = "package failed without a failing test"
		if m := FirstLine(c.Output); m != "" && m != "FAIL" {
			c.Message += ": " + m
		}
		c.Message = clip.Runes(c.Message, MaxMessage)
	}
	p.extra = append(p.extra, c)
}

// firstMeaningful returns the first line of compiler output that is not the
// "# package" header.
func firstMeaningful(s string) string {
	return FirstLine(stripHashLines(s))
}

func stripHashLines(s string) string {
	var b bytes.Buffer
	for line := range bytes.Lines([]byte(s)) {
		if bytes.HasPrefix(line, []byte("# ")) {
			continue
		}
		b.Write(line)
	}
	return b.String()
}

// Finish turns the collected events into cases.
func (p *GoParser) Finish() []artifact.Case {
	cases := make([]artifact.Case, 0, len(p.order)+len(p.extra))
	for _, gc := range p.order {
		c := gc.c
		if !gc.done {
			c.Status = StatusError
			c.Message = "no result: the test run ended before this test finished"
		}
		if c.Status != StatusPass {
			c.Output = gc.out.String()
			if c.Message == "" {
				c.Message = FirstLine(c.Output)
			}
			if c.Message == "" && c.Status == StatusFail {
				c.Message = "test failed" // a parent whose subtests failed says no more
			}
		}
		cases = append(cases, c)
	}
	cases = append(cases, p.extra...)
	for _, ip := range p.buildOrd {
		if !p.failed[ip] || p.claimed[ip] {
			continue
		}
		out := p.builds[ip].String()
		msg := "build failed: " + ip
		if m := firstMeaningful(out); m != "" {
			msg = "build failed: " + m
		}
		cases = append(cases, artifact.Case{Name: CaseBuildFailed, Package: ip, Status: StatusError, Message: clip.Runes(msg, MaxMessage), Output: out})
	}
	return cases
}
