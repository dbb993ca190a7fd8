// Package termtext prints orch's text for a person at a terminal: Markdown
// (headings, emphasis, code, lists, tables) laid out and unified diffs
// coloured in a terminal, plain without one; and Sanitize, the one place
// that turns text written by a model, a test suite or a person into
// terminal text (no control character of theirs reaches the terminal; see
// docs/terminal.md). Colours are used only when the caller's
// Style allows them: ColorAllowed says whether the environment does
// (NO_COLOR, TERM=dumb).
package termtext

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/orchdev/orch/internal/clip"
	"github.com/orchdev/orch/internal/safepath"
)

// Bounds on what the session prints of an artifact.
const (
	maxMarkdownBytes = 1 << 20
	maxDiffBytes     = 8 << 20
)

// ANSI sequences of the diff colours.
const (
	sgrReset = "\x1b[0m"
	sgrBold  = "\x1b[1m"
	sgrRed   = "\x1b[31m"
	sgrGreen = "\x1b[32m"
	sgrCyan  = "\x1b[36m"
)

// Colour is one of orch's own colours (the palette Writer lets through).
type Colour string

// orch's colours for its own text: status marks, log lines.
const (
	Bold   Colour = sgrBold
	Dim    Colour = "\x1b[2m"
	Red    Colour = sgrRed
	Green  Colour = sgrGreen
	Yellow Colour = "\x1b[33m"
	Cyan   Colour = sgrCyan
)

// Paint colours s (orch's own text, or text already sanitized) when the
// style allows colours, and returns it unchanged otherwise.
func (st Style) Paint(s string, c Colour) string { return paint(s, string(c), st) }

// ErrMissing: an artifact to show does not exist (yet).
var ErrMissing = errors.New("missing")

// Style says how to print for an output.
type Style struct {
	Terminal bool // the output is a terminal: Markdown is laid out
	Color    bool // ANSI colours allowed
	Width    int  // columns; below 20 means 80
	// Slash shows the orch commands an artifact names in inline code
	// (`orch answer q1 TEXT`) as the REPL's slash commands (`/answer q1
	// TEXT`): the syntax of where the text is read.
	Slash bool
}

// ColorAllowed follows NO_COLOR (https://no-color.org: set to anything
// non-empty turns colours off) and TERM=dumb.
func ColorAllowed(getenv func(string) string) bool {
	return getenv("NO_COLOR") == "" && getenv("TERM") != "dumb"
}

// Markdown renders Markdown text for the terminal: headings, emphasis,
// inline code, lists, quotes, rules, code blocks and tables laid out for
// reading (coloured when colours are allowed), and the text as written
// (sanitized) without a terminal. It is a small renderer on purpose: the
// big ones register hundreds of syntax lexers at start-up, which every
// orch command would pay for.
func Markdown(text string, st Style) string {
	// The notation of control characters is marked (markOn, markOff)
	// through the layout, and shown in reverse video at the end.
	text = sanitize(text, markOn, markOff, false)
	if st.Slash {
		text = strings.ReplaceAll(text, "`orch ", "`/")
	}
	if !st.Terminal {
		return finishMarks(text, st.Color)
	}
	width := st.Width
	if width < 20 {
		width = 80
	}
	wrap := min(width-2, 120)
	var b strings.Builder
	inCode := false
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			inCode = !inCode
			continue
		}
		if inCode {
			b.WriteString("    " + paint(line, sgrCyan, st) + "\n")
			continue
		}
		if isTableRow(trimmed) && i+1 < len(lines) && isDelimiterRow(lines[i+1]) {
			j := i + 2
			for j < len(lines) && isTableRow(strings.TrimSpace(lines[j])) {
				j++
			}
			writeTable(&b, lines[i], lines[i+1], lines[i+2:j], wrap, st)
			i = j - 1
			continue
		}
		indent := strings.Repeat(" ", len(line)-len(strings.TrimLeft(line, " ")))
		switch {
		case strings.HasPrefix(trimmed, "#"):
			title := strings.TrimSpace(strings.TrimLeft(trimmed, "#"))
			b.WriteString(paint(inline(title, st), sgrBold, st) + "\n")
		case isRule(trimmed):
			b.WriteString(strings.Repeat("─", min(wrap, 40)) + "\n")
		case strings.HasPrefix(trimmed, "- "), strings.HasPrefix(trimmed, "* "), strings.HasPrefix(trimmed, "+ "):
			item := trimmed[2:]
			bullet := "• "
			if rest, ok := strings.CutPrefix(item, "[ ] "); ok {
				item, bullet = rest, "☐ "
			} else if rest, ok := cutPrefixFold(item, "[x] "); ok {
				item, bullet = rest, "☑ "
			}
			writeWrapped(&b, indent+bullet, indent+"  ", inline(item, st), wrap)
		case orderedItem(trimmed) > 0:
			n := orderedItem(trimmed)
			writeWrapped(&b, indent+trimmed[:n], indent+strings.Repeat(" ", n), inline(trimmed[n:], st), wrap)
		case strings.HasPrefix(trimmed, ">"):
			writeWrapped(&b, indent+"│ ", indent+"│ ", inline(strings.TrimSpace(trimmed[1:]), st), wrap)
		case trimmed == "":
			b.WriteString("\n")
		default:
			writeWrapped(&b, indent, indent, inline(trimmed, st), wrap)
		}
	}
	return finishMarks(strings.TrimRight(b.String(), "\n")+"\n", st.Color)
}

// isRule: a thematic break (---, ***, ___).
func isRule(s string) bool {
	s = strings.ReplaceAll(s, " ", "")
	if len(s) < 3 {
		return false
	}
	return strings.Trim(s, "-") == "" || strings.Trim(s, "*") == "" || strings.Trim(s, "_") == ""
}

// orderedItem returns the length of an ordered list item's marker and the
// blank after it ("12. " is 4), or 0 when s is none.
func orderedItem(s string) int {
	i := 0
	for i < len(s) && i < 9 && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 || i+1 >= len(s) || (s[i] != '.' && s[i] != ')') || s[i+1] != ' ' {
		return 0
	}
	return i + 2
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// inline renders **bold**, *emphasis*/_emphasis_ and `code` spans.
func inline(s string, st Style) string {
	var b strings.Builder
	for len(s) > 0 {
		switch {
		case strings.HasPrefix(s, "**"):
			if end := strings.Index(s[2:], "**"); end > 0 {
				b.WriteString(paint(s[2:2+end], sgrBold, st))
				s = s[4+end:]
				continue
			}
		case s[0] == '`':
			if end := strings.IndexByte(s[1:], '`'); end > 0 {
				b.WriteString(paint(s[1:1+end], sgrCyan, st))
				s = s[2+end:]
				continue
			}
		}
		r, size := utf8.DecodeRuneInString(s)
		b.WriteRune(r)
		s = s[size:]
	}
	return b.String()
}

// paint wraps s in an SGR colour when colours are allowed.
func paint(s, sgr string, st Style) string {
	if !st.Color || s == "" {
		return s
	}
	return sgr + s + sgrReset
}

// writeWrapped writes text word-wrapped at width (escape codes are not
// counted), the first line after first, the others after rest.
func writeWrapped(b *strings.Builder, first, rest, text string, width int) {
	line, n := first, visibleLen(first)
	empty := true
	for _, w := range strings.Fields(text) {
		wl := visibleLen(w)
		if !empty && n+1+wl > width {
			b.WriteString(line + "\n")
			line, n, empty = rest, visibleLen(rest), true
		}
		if !empty {
			line += " "
			n++
		}
		line += w
		n += wl
		empty = false
	}
	b.WriteString(line + "\n")
}

// visibleLen counts the terminal columns of s outside SGR escape
// sequences.
func visibleLen(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if s[i] == 0x1b {
			if j := strings.IndexByte(s[i:], 'm'); j > 0 {
				i += j + 1
				continue
			}
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		n += clip.RuneWidth(r)
	}
	return n
}

// showMarkdown prints the Markdown file at path, rendered.
func ShowMarkdown(w io.Writer, path string, st Style) error {
	data, truncated, err := ReadCapped(path, maxMarkdownBytes)
	if err != nil {
		return err
	}
	fmt.Fprint(w, Markdown(string(data), st))
	if truncated {
		fmt.Fprintf(w, "… (cut at %d bytes: read the rest in %s)\n", maxMarkdownBytes, path)
	}
	return nil
}

// showDiff prints the unified diff at path, coloured when st allows.
func ShowDiff(w io.Writer, path string, st Style) error {
	data, truncated, err := ReadCapped(path, maxDiffBytes)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	for line := range strings.Lines(sanitize(string(data), markOn, markOff, false)) {
		line = finishMarks(strings.TrimSuffix(line, "\n"), st.Color)
		if c := diffColor(line); st.Color && c != "" {
			line = c + line + sgrReset
		}
		bw.WriteString(line)
		bw.WriteByte('\n')
	}
	if truncated {
		fmt.Fprintf(bw, "… (cut at %d bytes: read the rest in %s)\n", maxDiffBytes, path)
	}
	return bw.Flush()
}

// diffColor is the colour of a line of a unified diff.
func diffColor(line string) string {
	switch {
	case strings.HasPrefix(line, "diff --git "), strings.HasPrefix(line, "index "),
		strings.HasPrefix(line, "--- "), strings.HasPrefix(line, "+++ "),
		strings.HasPrefix(line, "new file mode"), strings.HasPrefix(line, "deleted file mode"),
		strings.HasPrefix(line, "rename "), strings.HasPrefix(line, "similarity "):
		return sgrBold
	case strings.HasPrefix(line, "@@"):
		return sgrCyan
	case strings.HasPrefix(line, "+"):
		return sgrGreen
	case strings.HasPrefix(line, "-"):
		return sgrRed
	}
	return ""
}

// ReadCapped reads at most limit bytes of the regular file at path
// through the bounded reader (safepath.ReadPart: never a symbolic link,
// never blocking on a named pipe planted in the task folder), and whether
// the file holds more. A missing file is ErrMissing.
func ReadCapped(path string, limit int64) (data []byte, truncated bool, err error) {
	data, size, err := safepath.ReadPart(filepath.Dir(path), filepath.Base(path), limit, safepath.Head)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, false, fmt.Errorf("%s: %w", path, ErrMissing)
	case err != nil:
		return nil, false, fmt.Errorf("%s: %w", path, err)
	}
	return data, size > limit, nil
}
