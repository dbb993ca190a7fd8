package testreport

import (
	"bufio"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/clip"
)

// maxXMLDepth bounds element nesting in a JUnit report.
const maxXMLDepth = 256

// ParseJUnit reads a JUnit XML report: a <testsuites> or <testsuite> root,
// suites nested to any depth, <testcase> elements with <failure>, <error>
// and <skipped> children (or a ctest-style status attribute), and
// <system-out>/<system-err>. It tolerates the dialects of pytest (xunit1 and
// xunit2), jest-junit, node --test, Maven Surefire (flakyFailure and
// rerunFailure mean retries and do not decide the status), nextest and
// cargo2junit, HTML entities, and Latin-1 documents. A case with an <error>
// is "error", with a <failure> "fail", with <skipped> "skip", otherwise
// "pass". On malformed XML the cases read so far are returned with the
// error.
func ParseJUnit(r io.Reader) ([]artifact.Case, artifact.Summary, error) {
	p := junitParser{}
	err := p.parse(r)
	return p.cases, Summarize(p.cases), err
}

type junitCase struct {
	c        artifact.Case
	suite    string
	classnm  string
	status   string // decided by children: error > fail > skip
	attrStat string // ctest-style status attribute
	message  string
	detail   BoundedBuf // failure/error/skipped text
	output   BoundedBuf // system-out / system-err
	// teardown is pytest's error in a fixture's teardown ("failed on
	// teardown with ..."): its message and text, apart from the status
	// the other children give the test itself.
	teardown       bool
	teardownMsg    string
	teardownDetail BoundedBuf
	// moreCollection counts the <error>s of pytest's collection after the
	// first: a file collected twice (as a doctest module and a test
	// module) that does not import is one <testcase> with two, and two
	// errors in pytest's count.
	moreCollection int
}

type junitParser struct {
	cases   []artifact.Case
	suites  []string // names of the enclosing <testsuite> elements
	cur     *junitCase
	capture string // the child element whose text is being collected
	// inTeardown: the text being collected is a teardown error's.
	inTeardown bool
	depth      int
	// seen are the classname and name of the cases read so far.
	seen map[[2]string]bool
}

// pytestTeardown starts the message of pytest's error in a fixture's
// teardown, which runs after the test's call.
const pytestTeardown = "failed on teardown with "

// pytestCollection is the message of pytest's error for a file it could
// not collect.
const pytestCollection = "collection failure"

func (p *junitParser) parse(r io.Reader) error {
	dec := xml.NewDecoder(bufio.NewReader(r))
	dec.Strict = false
	dec.Entity = xml.HTMLEntity
	dec.CharsetReader = charsetReader
	rootSeen := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			if !rootSeen {
				return fmt.Errorf("%w: no <testsuites> or <testsuite> element", ErrNotJUnit)
			}
			p.endCase()
			return nil
		}
		if err != nil {
			p.endCase()
			return fmt.Errorf("parse JUnit XML: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			p.depth++
			if p.depth > maxXMLDepth {
				p.endCase()
				return fmt.Errorf("parse JUnit XML: elements nested deeper than %d", maxXMLDepth)
			}
			name := t.Name.Local
			if !rootSeen {
				if name != "testsuites" && name != "testsuite" {
					return fmt.Errorf("%w: root element is <%s>", ErrNotJUnit, name)
				}
				rootSeen = true
			}
			p.start(name, t.Attr)
		case xml.EndElement:
			p.depth--
			p.end(t.Name.Local)
		case xml.CharData:
			p.text(t)
		}
	}
}

func attr(attrs []xml.Attr, name string) string {
	for _, a := range attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func (p *junitParser) start(name string, attrs []xml.Attr) {
	switch name {
	case "testsuite":
		p.suites = append(p.suites, attr(attrs, "name"))
		return
	case "testcase":
		p.endCase()
		jc := &junitCase{classnm: attr(attrs, "classname"), attrStat: strings.ToLower(attr(attrs, "status"))}
		jc.c.Name = attr(attrs, "name")
		if len(p.suites) > 0 {
			jc.suite = p.suites[len(p.suites)-1]
		}
		jc.c.Elapsed = parseSeconds(attr(attrs, "time"))
		p.cur = jc
		return
	}
	if p.cur == nil {
		return
	}
	switch name {
	case "error", "failure", "skipped":
		if msg := attr(attrs, "message"); name == "error" && strings.HasPrefix(msg, pytestTeardown) && !p.cur.teardown {
			p.cur.teardown, p.cur.teardownMsg = true, msg
			p.capture, p.inTeardown = name, true
			return
		}
		if msg := attr(attrs, "message"); name == "error" && msg == pytestCollection && p.cur.status == StatusError && p.cur.message == pytestCollection {
			p.cur.moreCollection++
			return
		}
		if status := statusOf(name); rank(status) > rank(p.cur.status) {
			p.cur.status = status
			p.cur.message = attr(attrs, "message")
		}
		p.capture = name
	case "system-out", "system-err":
		p.capture = name
	}
}

// rank orders the statuses a case's children can give it.
func rank(status string) int {
	switch status {
	case StatusError:
		return 3
	case StatusFail:
		return 2
	case StatusSkip:
		return 1
	}
	return 0
}

func (p *junitParser) end(name string) {
	switch name {
	case "testsuite":
		if len(p.suites) > 0 {
			p.suites = p.suites[:len(p.suites)-1]
		}
	case "testcase":
		p.endCase()
	case p.capture:
		p.capture, p.inTeardown = "", false
	}
}

func (p *junitParser) text(data []byte) {
	if p.cur == nil || p.capture == "" {
		return
	}
	if p.inTeardown {
		p.cur.teardownDetail.WriteString(string(data))
		return
	}
	switch p.capture {
	case "error", "failure", "skipped":
		// Only the text of the child that decided the status is kept.
		if statusOf(p.capture) == p.cur.status {
			p.cur.detail.WriteString(string(data))
		}
	default:
		p.cur.output.WriteString(string(data))
	}
}

func statusOf(element string) string {
	switch element {
	case "error":
		return StatusError
	case "failure":
		return StatusFail
	}
	return StatusSkip
}

// endCase finishes the current test case, if any.
func (p *junitParser) endCase() {
	jc := p.cur
	if jc == nil {
		return
	}
	p.cur, p.capture, p.inTeardown = nil, "", false
	c := jc.c
	c.Status = jc.status
	if c.Status == "" {
		c.Status = statusFromAttr(jc.attrStat)
	}
	if strings.TrimSpace(c.Name) == "" {
		c.Name = "(unnamed)"
	}
	switch {
	case jc.classnm != "" && jc.classnm != c.Name:
		c.Package = jc.classnm
	case jc.suite != "" && jc.suite != c.Name:
		c.Package = jc.suite
	}
	c.Name = clip.Runes(strings.TrimSpace(c.Name), 1000)
	c.Package = clip.Runes(c.Package, 1000)
	key := [2]string{jc.classnm, c.Name}
	seen := p.seen[key]
	if p.seen == nil {
		p.seen = map[[2]string]bool{}
	}
	p.seen[key] = true
	if jc.teardown {
		// pytest counts a test whose fixture's teardown failed twice, as
		// its call went (passed, skipped) and as an error; its report has
		// one <testcase> with both, or, after a failed call, a second
		// <testcase> with only the teardown's error.
		e := artifact.Case{Name: c.Name, Package: c.Package, Status: StatusError, Message: clip.Runes(firstNonBlank(strings.TrimSpace(jc.teardownMsg)), MaxMessage)}
		var out BoundedBuf
		out.WriteString(strings.TrimSpace(jc.teardownDetail.String()))
		e.Output = out.String()
		if jc.status == "" && seen {
			p.cases = append(p.cases, e)
			return
		}
		defer func() { p.cases = append(p.cases, e) }()
	}
	if c.Status != StatusPass {
		detail := strings.TrimSpace(jc.detail.String())
		msg := strings.TrimSpace(jc.message)
		if msg == "" {
			msg = FirstLine(detail)
		}
		c.Message = clip.Runes(firstNonBlank(msg), MaxMessage)
		var out BoundedBuf
		out.WriteString(detail)
		if o := strings.TrimSpace(jc.output.String()); o != "" {
			if detail != "" {
				out.WriteString("\n")
			}
			out.WriteString(o)
		}
		c.Output = out.String()
	}
	p.cases = append(p.cases, c)
	for range jc.moreCollection {
		p.cases = append(p.cases, c)
	}
}

// statusFromAttr maps a ctest-style status attribute.
func statusFromAttr(s string) string {
	switch s {
	case "fail", "failed", "failure":
		return StatusFail
	case "error", "errored":
		return StatusError
	case "skip", "skipped", "notrun", "disabled", "ignored":
		return StatusSkip
	}
	return StatusPass
}

// firstNonBlank returns the first line of s that is not blank.
func firstNonBlank(s string) string {
	for line := range strings.Lines(s) {
		if t := strings.TrimSpace(line); t != "" {
			return t
		}
	}
	return ""
}

// parseSeconds reads a time attribute ("0.001", "1,234.5", "") leniently.
func parseSeconds(s string) float64 {
	s = strings.ReplaceAll(strings.TrimSpace(s), ",", "")
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f != f || f > 1e12 {
		return 0
	}
	return f
}

// charsetReader decodes the single-byte encodings JUnit writers use besides
// UTF-8.
func charsetReader(charset string, input io.Reader) (io.Reader, error) {
	switch strings.ToLower(charset) {
	case "utf-8", "utf8", "us-ascii", "ascii":
		return input, nil
	case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "windows-1252", "cp1252":
		return &latin1Reader{r: bufio.NewReader(input)}, nil
	}
	return nil, fmt.Errorf("unsupported XML encoding %q", charset)
}

// latin1Reader converts Latin-1 bytes to UTF-8.
type latin1Reader struct {
	r       *bufio.Reader
	pending []byte
}

func (l *latin1Reader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if n > 0 && len(l.pending) == 0 && l.r.Buffered() == 0 {
			break // do not block for more once something was read
		}
		if len(l.pending) > 0 {
			c := copy(p[n:], l.pending)
			l.pending = l.pending[c:]
			n += c
			continue
		}
		b, err := l.r.ReadByte()
		if err != nil {
			if n > 0 && errors.Is(err, io.EOF) {
				return n, nil
			}
			return n, err
		}
		if b < utf8.RuneSelf {
			p[n] = b
			n++
			continue
		}
		l.pending = utf8.AppendRune(l.pending[:0], rune(b))
	}
	return n, nil
}
