package termtext

import (
	"strings"
	"unicode/utf8"

	"github.com/orchdev/orch/internal/clip"
)

// Markdown tables (GitHub's pipe tables), laid out in columns with box
// drawing characters; a table wider than the terminal wraps the text of its
// widest columns inside their cells.

// isTableRow: a line that can be a row of a pipe table.
func isTableRow(trimmed string) bool {
	return strings.HasPrefix(trimmed, "|") && len(trimmed) > 1
}

// isDelimiterRow: the row under a table's header (| --- | :-: | --: |).
func isDelimiterRow(line string) bool {
	cells := splitRow(line)
	if len(cells) == 0 {
		return false
	}
	for _, c := range cells {
		c = strings.TrimSpace(c)
		c = strings.TrimPrefix(strings.TrimSuffix(c, ":"), ":")
		if c == "" || strings.Trim(c, "-") != "" {
			return false
		}
	}
	return true
}

// splitRow splits a table row into its cells: at each | that is not
// escaped (\|) and not inside a `code span`, without the outer pipes.
func splitRow(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	if strings.HasSuffix(line, "|") && !strings.HasSuffix(line, `\|`) {
		line = line[:len(line)-1]
	}
	var cells []string
	var cur strings.Builder
	inCode := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\\' && i+1 < len(line) && line[i+1] == '|':
			cur.WriteByte('|')
			i++
		case c == '`':
			inCode = !inCode
			cur.WriteByte(c)
		case c == '|' && !inCode:
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

type align int

const (
	alignLeft align = iota
	alignCenter
	alignRight
)

// writeTable lays out a table within width columns.
func writeTable(b *strings.Builder, header, delimiter string, rows []string, width int, st Style) {
	aligns := []align{}
	for _, c := range splitRow(delimiter) {
		c = strings.TrimSpace(c)
		switch {
		case strings.HasPrefix(c, ":") && strings.HasSuffix(c, ":"):
			aligns = append(aligns, alignCenter)
		case strings.HasSuffix(c, ":"):
			aligns = append(aligns, alignRight)
		default:
			aligns = append(aligns, alignLeft)
		}
	}
	ncol := len(aligns)
	cellsOf := func(line string) []string {
		cells := splitRow(line)
		for len(cells) < ncol {
			cells = append(cells, "")
		}
		cells = cells[:ncol]
		for i, c := range cells {
			cells[i] = inline(c, st)
		}
		return cells
	}
	head := cellsOf(header)
	body := make([][]string, len(rows))
	for i, r := range rows {
		body[i] = cellsOf(r)
	}
	widths := columnWidths(head, body, width)

	sep := " │ "
	writeRow := func(cells []string, bold bool) {
		wrapped := make([][]string, ncol)
		height := 1
		for i, c := range cells {
			wrapped[i] = wrapCell(c, widths[i])
			height = max(height, len(wrapped[i]))
		}
		for l := 0; l < height; l++ {
			var line strings.Builder
			for i := range cells {
				text := ""
				if l < len(wrapped[i]) {
					text = wrapped[i][l]
				}
				if i > 0 {
					line.WriteString(sep)
				}
				pad := widths[i] - visibleLen(text)
				if bold {
					text = paint(text, sgrBold, st)
				}
				switch aligns[i] {
				case alignRight:
					line.WriteString(strings.Repeat(" ", pad) + text)
				case alignCenter:
					line.WriteString(strings.Repeat(" ", pad/2) + text + strings.Repeat(" ", pad-pad/2))
				default:
					line.WriteString(text + strings.Repeat(" ", pad))
				}
			}
			b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
		}
	}
	writeRow(head, true)
	var rule strings.Builder
	for i, w := range widths {
		if i > 0 {
			rule.WriteString("─┼─")
		}
		rule.WriteString(strings.Repeat("─", w))
	}
	b.WriteString(rule.String() + "\n")
	for _, r := range body {
		writeRow(r, false)
	}
}

// columnWidths gives each column the width of its widest cell, then, while
// the table is wider than width, takes a column from the widest column
// (no column goes below 8, or its widest word when that is narrower).
func columnWidths(head []string, body [][]string, width int) []int {
	ncol := len(head)
	widths := make([]int, ncol)
	floor := make([]int, ncol)
	for _, row := range append([][]string{head}, body...) {
		for i, c := range row {
			widths[i] = max(widths[i], visibleLen(c))
			for _, w := range strings.Fields(c) {
				floor[i] = max(floor[i], min(visibleLen(w), 8))
			}
		}
	}
	for i := range floor {
		floor[i] = max(floor[i], min(widths[i], 3))
	}
	total := func() int {
		t := 3 * (ncol - 1)
		for _, w := range widths {
			t += w
		}
		return t
	}
	for total() > width {
		widest := -1
		for i, w := range widths {
			if w > floor[i] && (widest < 0 || w > widths[widest]) {
				widest = i
			}
		}
		if widest < 0 {
			break // as narrow as it goes: the terminal wraps the rest
		}
		widths[widest]--
	}
	return widths
}

// wrapCell word-wraps a cell's text into lines of at most width columns;
// a word longer than width is cut into pieces.
func wrapCell(text string, width int) []string {
	var lines []string
	line, n := "", 0
	for _, w := range strings.Fields(text) {
		for visibleLen(w) > width && width > 0 {
			head, rest := splitVisible(w, width)
			if n > 0 {
				lines = append(lines, line)
			}
			lines = append(lines, head)
			line, n, w = "", 0, rest
		}
		wl := visibleLen(w)
		if n > 0 && n+1+wl > width {
			lines = append(lines, line)
			line, n = "", 0
		}
		if n > 0 {
			line += " "
			n++
		}
		line += w
		n += wl
	}
	if n > 0 || len(lines) == 0 {
		lines = append(lines, line)
	}
	return lines
}

// splitVisible splits s after width visible columns, keeping escape
// sequences whole (a colour spanning the cut is closed and reopened).
func splitVisible(s string, width int) (head, rest string) {
	n, open := 0, ""
	for i := 0; i < len(s); {
		if s[i] == 0x1b {
			if j := strings.IndexByte(s[i:], 'm'); j > 0 {
				seq := s[i : i+j+1]
				if seq == sgrReset {
					open = ""
				} else {
					open = seq
				}
				i += j + 1
				continue
			}
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		w := clip.RuneWidth(r)
		if n+w > width && n > 0 { // at least one rune, so a cut always moves on
			if open != "" {
				return s[:i] + sgrReset, open + s[i:]
			}
			return s[:i], s[i:]
		}
		n += w
		i += size
	}
	return s, ""
}
