package testreport

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/clip"
	"github.com/orchdev/orch/internal/lazyre"
)

var (
	// unittestRan is the line after the failure report: "Ran 165 tests in
	// 0.123s".
	unittestRan = lazyre.New(`^Ran (\d+) tests? in [\d.]+s$`)
	// unittestStatus is the last line: "OK", "OK (skipped=4)", "FAILED
	// (failures=1, errors=2, skipped=3, expected failures=1, unexpected
	// successes=1)", or "NO TESTS RAN" (Python 3.12 and later).
	unittestStatus = lazyre.New(`^(OK|FAILED|NO TESTS RAN)(?: \(((?:[a-z ]+=\d+(?:, )?)+)\))?$`)
	unittestCount  = lazyre.New(`([a-z ]+)=(\d+)`)
	// unittestHeader starts a failure's block after a line of "=".
	unittestHeader = lazyre.New(`^(FAIL|ERROR|UNEXPECTED SUCCESS): (.+)$`)
)

// maxCases bounds the cases a text parser keeps from one output.
const maxCases = 100_000

// ansiCodes matches terminal colour and cursor sequences.
var ansiCodes = lazyre.New(`\x1b\[[0-9;?]*[A-Za-z]`)

// unittestRule is the line of "=" before each failure's block, and
// unittestDash the line of "-" after its header and before "Ran N tests".
var (
	unittestRule = strings.Repeat("=", 70)
	unittestDash = strings.Repeat("-", 70)
)

// UnittestCollectionFailure is the message of a case for a test module
// unittest could not import (its loader's _FailedTest): the tests could
// not be collected, the runner's failure unless the change broke the
// import. The same words as pytest's collection failures.
const UnittestCollectionFailure = "collection failure"

// UnittestParser reads the output of Python's unittest runner (python -m
// unittest, with or without -v, any number of runs in one script): the
// counts come from each run's "Ran N tests" and its status line ("OK
// (skipped=4)", "FAILED (failures=1, errors=2)"), summed; the cases are
// the failures and errors of its report ("FAIL: test_x
// (pkg.mod.Class.test_x)" and the traceback after it), so doctests
// loaded by load_tests count like any test. A failure to import a test
// module (unittest.loader._FailedTest) is a case with the message
// UnittestCollectionFailure. Expected failures count as skipped, as
// pytest reports them; unexpected successes as failed.
type UnittestParser struct {
	onOutput func(string)
	cases    []artifact.Case
	cur      *artifact.Case // the failure block being read
	curOut   BoundedBuf
	inTrace  bool // past the dashes after the header
	ran      int  // tests of the finished runs
	runs     int
	pendRan  int // the last "Ran N" not yet closed by its status line
	seenRan  bool
	counts   map[string]int
}

// maxCount bounds a count read from a runner's output (the sums stay
// far from overflowing).
const maxCount = 1 << 30

// count reads a runner's count, at most maxCount.
func count(digits string) int {
	n, err := strconv.Atoi(digits)
	if err != nil || n > maxCount {
		return maxCount
	}
	return n
}

// NewUnittestParser returns a parser passing the text on to onOutput (may
// be nil).
func NewUnittestParser(onOutput func(string)) *UnittestParser {
	return &UnittestParser{onOutput: onOutput, counts: map[string]int{}}
}

// ParseUnittest reads a whole unittest output.
func ParseUnittest(r io.Reader) (Result, error) {
	p := NewUnittestParser(nil)
	err := p.Consume(r)
	return p.Finish(), err
}

// Consume reads r to its end.
func (p *UnittestParser) Consume(r io.Reader) error {
	return consumeLines(r, p.onOutput, p.line)
}

func (p *UnittestParser) line(line string) {
	plain := strings.TrimRight(ansiCodes.ReplaceAllString(line, ""), " \t")
	switch {
	case plain == unittestRule:
		p.flush()
		return
	case p.cur == nil && p.seenRan:
		if m := unittestStatus.FindStringSubmatch(plain); m != nil {
			p.runs++
			p.ran += p.pendRan
			p.seenRan = false
			for _, c := range unittestCount.FindAllStringSubmatch(m[2], -1) {
				p.counts[strings.TrimSpace(c[1])] += count(c[2])
			}
			return
		}
	}
	if m := unittestRan.FindStringSubmatch(plain); m != nil && (p.cur == nil || p.inTrace) {
		p.flush()
		p.pendRan = count(m[1])
		p.seenRan = true
		return
	}
	if p.cur == nil {
		if m := unittestHeader.FindStringSubmatch(plain); m != nil && len(p.cases) < maxCases {
			status, msg := StatusFail, "test failed"
			switch m[1] {
			case "ERROR":
				status, msg = StatusError, "test raised an error"
			case "UNEXPECTED SUCCESS":
				msg = "unexpected success (the test is marked expectedFailure)"
			}
			name := m[2]
			if strings.Contains(name, "unittest.loader._FailedTest") || strings.Contains(name, "unittest.loader.ModuleImportFailure") {
				status, msg = StatusError, UnittestCollectionFailure
			}
			p.cur = &artifact.Case{Name: clip.Runes(name, 1000), Status: status, Message: msg}
			p.curOut = BoundedBuf{}
			p.inTrace = false
		}
		return
	}
	if !p.inTrace && plain == unittestDash {
		p.inTrace = true
		return
	}
	// A doctest's failure holds lines of dashes of its own: the block
	// ends at the next line of "=" or at "Ran N tests".
	p.curOut.WriteString(line + "\n")
}

// flush ends the failure block being read: its message is the
// traceback's last line (the exception), unless it is an import failure.
func (p *UnittestParser) flush() {
	c := p.cur
	if c == nil {
		return
	}
	p.cur, p.inTrace = nil, false
	c.Output = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(p.curOut.String()), unittestDash))
	if c.Message == UnittestCollectionFailure {
		// "tests.test_x (unittest.loader._FailedTest.tests.test_x)": the
		// module's name, and the import's exception in its output.
		if i := strings.Index(c.Name, " (unittest.loader."); i > 0 {
			c.Name = c.Name[:i]
		}
	} else if exc := exceptionLine(c.Output); exc != "" {
		c.Message = clip.Runes(exc, MaxMessage)
	}
	p.cases = append(p.cases, *c)
}

// pyException matches the line of a Python traceback that names the
// exception ("AssertionError: 4 != 5", "KeyError: 'boom'").
var pyException = lazyre.New(`^[A-Za-z_][\w.]*(?:Error|Exception|Failure|Exit|Interrupt|Warning)\b(?::.*)?$`)

// exceptionLine returns the first exception line of a traceback (for a
// doctest, AssertionError's "Failed doctest test for calc.add"), else its
// last line.
func exceptionLine(out string) string {
	lines := strings.Split(out, "\n")
	last := ""
	for _, l := range lines {
		if pyException.MatchString(l) {
			return strings.TrimSpace(l)
		}
		if t := strings.TrimSpace(l); t != "" {
			last = t
		}
	}
	return last
}

// Finish returns the totals and the failing cases read.
func (p *UnittestParser) Finish() Result {
	p.flush()
	if p.runs == 0 {
		return Result{Cases: p.cases}
	}
	c := p.counts
	failed := c["failures"] + c["unexpected successes"]
	skipped := c["skipped"] + c["expected failures"]
	passed := p.ran - failed - c["errors"] - skipped
	res := Result{Cases: p.cases, Recognised: true}
	if passed < 0 {
		// Failing subtests are counted one by one, not as tests.
		res.Notes = append(res.Notes, fmt.Sprintf("unittest ran %d tests but reports %d failures, %d errors and %d skipped (subtests count apart)", p.ran, failed, c["errors"], skipped))
		passed = 0
	}
	res.Totals = &artifact.Summary{Passed: passed, Failed: failed, Skipped: skipped, Error: c["errors"]}
	if n := len(p.cases); n != failed+c["errors"] && n < maxCases {
		res.Notes = append(res.Notes, fmt.Sprintf("unittest's status lines count %d failures and errors; its report shows %d", failed+c["errors"], n))
	}
	return res
}
