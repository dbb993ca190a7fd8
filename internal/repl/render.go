package repl

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"charm.land/glamour/v2"
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

// sanitize makes text written by a model or a person safe to print on a
// terminal: invalid UTF-8 becomes U+FFFD, CRLF becomes LF, and every
// control character but tab and newline (ESC included, so no escape
// sequence survives) is shown in caret notation (^[) or, for C1 controls,
// as U+FFFD.
func sanitize(s string) string {
	if !strings.ContainsFunc(s, unsafeRune) && utf8.ValidString(s) && !strings.Contains(s, "\r") {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\r' || (r < 0x20 && r != '\t' && r != '\n'):
			b.WriteByte('^')
			b.WriteByte(byte(r) + '@')
		case r == 0x7f:
			b.WriteString("^?")
		case r >= 0x80 && r <= 0x9f:
			b.WriteRune('\uFFFD')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func unsafeRune(r rune) bool {
	return (r < 0x20 && r != '\t' && r != '\n') || (r >= 0x7f && r <= 0x9f)
}

// style says how to print for the session's output.
type style struct {
	terminal bool // output is a terminal: Markdown is rendered
	color    bool // ANSI colours allowed
	width    int  // columns
}

// markdown renders Markdown text for the terminal: with glamour's
// GLAMOUR_STYLE (default dark) when colours are allowed, its notty style
// (layout, no escape codes) when not, and as plain text without a terminal.
func markdown(text string, st style) string {
	text = sanitize(text)
	if !st.terminal {
		return text
	}
	wrap := st.width - 2
	if wrap > 120 {
		wrap = 120
	}
	if wrap < 20 {
		wrap = 20
	}
	styleOpt := glamour.WithEnvironmentConfig()
	if !st.color {
		styleOpt = glamour.WithStandardStyle("notty")
	}
	r, err := glamour.NewTermRenderer(styleOpt, glamour.WithWordWrap(wrap))
	if err == nil {
		var out string
		if out, err = r.Render(text); err == nil {
			return trimPadding(out)
		}
	}
	// An unknown GLAMOUR_STYLE or a renderer failure: the text as it is.
	return text
}

// trimPadding removes the blanks (and the colour codes around them) that
// glamour pads every line with up to the wrap width, ending a line that
// had colour codes with a reset.
func trimPadding(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		coloured := strings.Contains(l, "\x1b[")
		for {
			t := strings.TrimRight(l, " ")
			if j := strings.LastIndex(t, "\x1b["); j >= 0 && isSGR(t[j:]) {
				t = t[:j]
			}
			if t == l {
				break
			}
			l = t
		}
		if coloured && l != "" {
			l += sgrReset
		}
		lines[i] = l
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n") + "\n"
}

// isSGR reports whether s is exactly one SGR sequence (ESC [ digits; m).
func isSGR(s string) bool {
	if len(s) < 3 || s[len(s)-1] != 'm' {
		return false
	}
	for _, c := range s[2 : len(s)-1] {
		if (c < '0' || c > '9') && c != ';' {
			return false
		}
	}
	return true
}

// showMarkdown prints the Markdown file at path, rendered.
func showMarkdown(w io.Writer, path string, st style) error {
	data, truncated, err := readCapped(path, maxMarkdownBytes)
	if err != nil {
		return err
	}
	fmt.Fprint(w, markdown(string(data), st))
	if truncated {
		fmt.Fprintf(w, "… (cut at %d bytes: read the rest in %s)\n", maxMarkdownBytes, path)
	}
	return nil
}

// showDiff prints the unified diff at path, coloured when st allows.
func showDiff(w io.Writer, path string, st style) error {
	data, truncated, err := readCapped(path, maxDiffBytes)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	for line := range strings.Lines(sanitize(string(data))) {
		line = strings.TrimSuffix(line, "\n")
		if c := diffColor(line); st.color && c != "" {
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

// readCapped reads at most limit bytes of the regular file at path.
func readCapped(path string, limit int64) (data []byte, truncated bool, err error) {
	// Stat first: opening a FIFO planted in the task folder would block.
	if fi, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, false, fmt.Errorf("%s: %w", path, errMissing)
	} else if err != nil {
		return nil, false, err
	} else if !fi.Mode().IsRegular() {
		return nil, false, fmt.Errorf("%s is not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, fmt.Errorf("stat %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, false, fmt.Errorf("%s is not a regular file", path)
	}
	data, err = io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return data[:limit], true, nil
	}
	return data, false, nil
}
