package hostile

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// TerminalCase is one line of testdata/terminal.txt: text that must never
// reach a terminal as a control sequence.
type TerminalCase struct {
	Name string
	Text string
	Line int
}

func (c TerminalCase) String() string { return fmt.Sprintf("terminal.txt:%d %s", c.Line, c.Name) }

// TerminalCases returns every case of testdata/terminal.txt in file order.
// It panics if the embedded file is malformed (a test of this package
// keeps it well-formed).
func TerminalCases() []TerminalCase {
	cases, err := parseTerminal(mustRead("testdata/terminal.txt"))
	if err != nil {
		panic(err)
	}
	return cases
}

// TerminalText is every case's text, one after the other, each on a line
// of its own: the payload to put into one field.
func TerminalText() string {
	var b strings.Builder
	for _, c := range TerminalCases() {
		b.WriteString(c.Text)
		b.WriteByte('\n')
	}
	return b.String()
}

// TerminalViolation says what in out (what a program wrote for a
// terminal, CRLF already turned into LF) could drive the terminal, or ""
// when nothing can: an ESC that does not start one of orch's own SGR
// colour codes (ESC [ params m, each param one of orch's palette: reset,
// bold, dim, reverse, red, green, yellow, cyan and their ends; so no
// concealed or black-on-black text), any other C0 control but tab and
// newline, DEL, a C1 control, a bidirectional override or isolate
// (U+202A–U+202E, U+2066–U+2069), or invalid UTF-8.
func TerminalViolation(out string) string {
	for i := 0; i < len(out); {
		c := out[i]
		if c == 0x1b {
			n := sgrAt(out[i:])
			if n == 0 {
				return fmt.Sprintf("ESC at byte %d not starting one of orch's SGR codes: %q", i, around(out, i))
			}
			i += n
			continue
		}
		r, size := utf8.DecodeRuneInString(out[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			return fmt.Sprintf("invalid UTF-8 at byte %d: %q", i, around(out, i))
		case r < 0x20 && r != '\n' && r != '\t', r == 0x7f:
			return fmt.Sprintf("control character %q at byte %d: %q", r, i, around(out, i))
		case r >= 0x80 && r <= 0x9f:
			return fmt.Sprintf("C1 control U+%04X at byte %d: %q", r, i, around(out, i))
		case (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069):
			return fmt.Sprintf("bidirectional override U+%04X at byte %d: %q", r, i, around(out, i))
		}
		i += size
	}
	return ""
}

// orchSGR are the SGR parameters orch's own output uses.
var orchSGR = map[string]bool{"": true, "0": true, "1": true, "2": true, "7": true, "22": true, "27": true, "31": true, "32": true, "33": true, "36": true, "39": true}

// sgrAt returns the length of the orch SGR code at the start of s, or 0.
func sgrAt(s string) int {
	params, ok := strings.CutPrefix(s, "\x1b[")
	if !ok {
		return 0
	}
	end := strings.IndexByte(params, 'm')
	if end < 0 || end > 32 {
		return 0
	}
	for _, p := range strings.Split(params[:end], ";") {
		if !orchSGR[p] {
			return 0
		}
	}
	return len("\x1b[") + end + 1
}

func around(s string, i int) string {
	return s[max(0, i-20):min(len(s), i+20)]
}

// parseTerminal reads terminal.txt: blank lines and lines starting with
// '#' are skipped; every other line is `NAME "quoted text"`.
func parseTerminal(data []byte) ([]TerminalCase, error) {
	var out []TerminalCase
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, rest, ok := strings.Cut(line, " ")
		if !ok || name == "" {
			return nil, fmt.Errorf("terminal.txt:%d: expected NAME \"text\"", n)
		}
		rest = strings.TrimSpace(rest)
		if !strings.HasPrefix(rest, `"`) {
			return nil, fmt.Errorf("terminal.txt:%d: expected a double-quoted text after %s", n, name)
		}
		text, err := strconv.Unquote(rest)
		if err != nil {
			return nil, fmt.Errorf("terminal.txt:%d: expected a Go-quoted text after %s: %w", n, name, err)
		}
		if seen[name] {
			return nil, fmt.Errorf("terminal.txt:%d: %s listed twice", n, name)
		}
		seen[name] = true
		out = append(out, TerminalCase{Name: name, Text: text, Line: n})
	}
	return out, sc.Err()
}
