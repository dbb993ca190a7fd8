package testreport

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/orchdev/orch/internal/artifact"
)

// maxTextLine bounds one line of a runner's text output. Longer lines are
// passed through but not parsed.
const maxTextLine = 64 << 10

// Result is what a text parser read from a runner's output.
type Result struct {
	// Cases are the tests read, in order.
	Cases []artifact.Case
	// Totals, when set, are the runner's own counts, and they decide the
	// suite's summary: the output names some tests (the failing ones) but
	// not all of them (node's spec reporter).
	Totals *artifact.Summary
	// Notes say what the parser could not reconcile (a runner's totals
	// that differ from the tests it listed).
	Notes []string
	// Recognised is set when the output was the parser's format (a TAP
	// version line or test point, a libtest "running N tests" line, node's
	// totals), even if it listed no test.
	Recognised bool
}

// Summary is Totals when set, else the cases counted.
func (r Result) Summary() artifact.Summary {
	if r.Totals != nil {
		return *r.Totals
	}
	return Summarize(r.Cases)
}

// TextParser reads a runner's combined output as it is produced and passes
// every byte on to the onOutput function it was made with.
type TextParser interface {
	// Consume reads r to its end. The error is only for a failing reader.
	Consume(r io.Reader) error
	// Finish returns what was read. Call it after Consume returned.
	Finish() Result
}

// NewTextParser returns the parser of a text format: "libtest", "tap" or
// "unittest".
// onOutput receives the text as read (may be nil).
func NewTextParser(format string, onOutput func(string)) (TextParser, error) {
	switch format {
	case "libtest":
		return NewLibtestParser(onOutput), nil
	case "tap":
		return NewTAPParser(onOutput), nil
	case "unittest":
		return NewUnittestParser(onOutput), nil
	}
	return nil, fmt.Errorf("no text parser for format %q", format)
}

// consumeLines reads r line by line, hands each line (without its
// newline, and without a trailing carriage return) to line and the raw
// text to text. A line longer than maxTextLine goes to text only.
func consumeLines(r io.Reader, text func(string), line func(string)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	tooLong := false
	for {
		chunk, err := br.ReadSlice('\n')
		if text != nil && len(chunk) > 0 {
			text(string(chunk))
		}
		switch {
		case tooLong:
		case len(buf)+len(chunk) > maxTextLine:
			tooLong, buf = true, buf[:0]
		default:
			buf = append(buf, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if !tooLong && len(buf) > 0 {
			s := strings.TrimSuffix(strings.TrimSuffix(string(buf), "\n"), "\r")
			line(strings.ToValidUTF8(s, "\uFFFD"))
		}
		buf, tooLong = buf[:0], false
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read the suite's output: %w", err)
		}
	}
}
