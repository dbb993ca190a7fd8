package termtext

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// What untrusted text becomes on a terminal (docs/terminal.md): every
// control character but tab and newline is shown, never emitted, in a
// notation a person can read:
//
//	C0 controls and DEL      caret notation: ESC is ^[, CR ^M, BS ^H, DEL ^?
//	C1 controls (U+0080–9F)  \u009b
//	bidirectional overrides  \u202e (U+202A–U+202E, U+2066–U+2069)
//	invalid UTF-8            \xff, one per byte
//
// A CR before a LF is dropped (CRLF files read as lines). orch's own
// colours are added after, by orch; with colours, Style.Text shows the
// notation in reverse video so it cannot be mistaken for the text.

// Sanitize makes text written by a model, a test suite or a person safe to
// print on a terminal, keeping its newlines and tabs.
func Sanitize(s string) string { return sanitize(s, "", "", false) }

// Line is Sanitize for a one-line field (a title, a reason, a name in a
// table): newlines and tabs become blanks, runs of blanks one.
func Line(s string) string { return sanitize(s, "", "", true) }

// Text is Sanitize with the notation of each control character shown in
// reverse video when the style allows colours.
func (st Style) Text(s string) string {
	if !st.Color {
		return Sanitize(s)
	}
	return sanitize(s, sgrReverse, sgrNoReverse, false)
}

// Line is Line with the notation in reverse video when colours are allowed.
func (st Style) Line(s string) string {
	if !st.Color {
		return Line(s)
	}
	return sanitize(s, sgrReverse, sgrNoReverse, true)
}

// Safe reports whether s prints as itself: valid UTF-8 without a control
// character (but tab and newline) or a bidirectional override.
func Safe(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsFunc(s, unsafeRune)
}

// unsafeRune: a rune Sanitize never lets through as itself.
func unsafeRune(r rune) bool {
	return (r < 0x20 && r != '\t' && r != '\n') || (r >= 0x7f && r <= 0x9f) || isBidi(r)
}

// isBidi: the bidirectional embeddings, overrides and isolates ("Trojan
// Source", CVE-2021-42574) that reorder what a terminal shows.
func isBidi(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// Reverse video on and off: how the notation stands out with colours.
const (
	sgrReverse   = "\x1b[7m"
	sgrNoReverse = "\x1b[27m"
)

// markOn and markOff bracket the notation inside the Markdown and diff
// renderers: control characters, so that no sanitized text holds them,
// and zero columns wide to the layout. finishMarks turns them into reverse
// video or removes them.
const (
	markOn  = "\x01"
	markOff = "\x02"
)

// finishMarks replaces the marks in s by reverse video on and off (color)
// or removes them; a line whose reverse video is still on at its end (a
// mark cut off by wrapping) has it turned off there.
func finishMarks(s string, color bool) string {
	if !strings.Contains(s, markOn) && !strings.Contains(s, markOff) {
		return s
	}
	if !color {
		return strings.NewReplacer(markOn, "", markOff, "").Replace(s)
	}
	var b strings.Builder
	on := false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case markOn[0]:
			if !on {
				b.WriteString(sgrReverse)
			}
			on = true
		case markOff[0]:
			if on {
				b.WriteString(sgrNoReverse)
			}
			on = false
		case '\n':
			if on {
				b.WriteString(sgrNoReverse)
				on = false
			}
			b.WriteByte('\n')
		default:
			b.WriteByte(s[i])
		}
	}
	if on {
		b.WriteString(sgrNoReverse)
	}
	return b.String()
}

func sanitize(s, on, off string, oneLine bool) string {
	if Safe(s) && (!oneLine || !strings.ContainsAny(s, "\n\t")) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	mark := func(notation string) {
		b.WriteString(on)
		b.WriteString(notation)
		b.WriteString(off)
	}
	blank := false // oneLine: the last rune written was a blank
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			mark(fmt.Sprintf(`\x%02x`, s[i]))
		case r == '\r' && i+1 < len(s) && s[i+1] == '\n':
			// CRLF: the LF alone.
		case oneLine && (r == '\n' || r == '\t' || r == ' '):
			if !blank {
				b.WriteByte(' ')
			}
			blank = true
			i += size
			continue
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20:
			mark(string([]byte{'^', byte(r) + '@'}))
		case r == 0x7f:
			mark("^?")
		case r <= 0x9f && r >= 0x80, isBidi(r):
			mark(fmt.Sprintf(`\u%04x`, r))
		default:
			b.WriteRune(r)
		}
		blank = false
		i += size
	}
	if oneLine {
		return strings.TrimSpace(b.String())
	}
	return b.String()
}

// Message makes text from an artifact fit for a git commit message, which
// git log prints raw: control characters (C0 but tab and newline, DEL,
// C1), bidirectional overrides and invalid UTF-8 are removed, CRLF and a
// lone CR become LF. Subject flattens it further to one line.
func Message(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
		case r == '\r':
			if i+1 >= len(s) || s[i+1] != '\n' {
				b.WriteByte('\n')
			}
		case unsafeRune(r):
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}

// Subject is Message on one line: every run of blanks, tabs and line
// breaks becomes one blank, and the ends are trimmed.
func Subject(s string) string {
	return strings.Join(strings.Fields(Message(s)), " ")
}
