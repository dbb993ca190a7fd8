// Package clip shortens text for messages without splitting a character:
// Bytes bounds the length in bytes, Runes in characters. A cut is marked
// with "…". Nearest names the close match of a mistyped name.
package clip

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Ellipsis marks a cut.
const Ellipsis = "…"

// Head returns the longest prefix of s of at most n bytes that does not
// split a character (s itself when it fits).
func Head(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := max(n, 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// Bytes cuts s to at most n bytes, backing up to a rune boundary, and
// appends "…" when it cut. s is otherwise returned as it is.
func Bytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return Head(s, n) + Ellipsis
}

// Runes makes s valid UTF-8 (invalid bytes become U+FFFD) and shortens it
// to at most n runes, the last of them "…" when it cut.
func Runes(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 0 {
		return Ellipsis
	}
	i, count := 0, 0
	for i = range s {
		if count == n-1 {
			break
		}
		count++
	}
	return s[:i] + Ellipsis
}

// RuneWidth is the number of terminal columns r takes: 0 for combining
// marks, zero-width characters and controls, 2 for wide East Asian
// characters and emoji, 1 otherwise. An approximation of Unicode's East
// Asian Width that covers the ranges text here meets.
func RuneWidth(r rune) int {
	switch {
	case r < 0x20 || (r >= 0x7f && r < 0xa0):
		return 0
	case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) || r == 0x200b || r == 0x200d || r == 0xfeff:
		return 0
	case r >= 0x1100 && r <= 0x115f, // Hangul Jamo
		r >= 0x2e80 && r <= 0x303e, // CJK radicals, punctuation
		r >= 0x3041 && r <= 0x33ff, // kana, CJK symbols
		r >= 0x3400 && r <= 0x4dbf, // CJK extension A
		r >= 0x4e00 && r <= 0x9fff, // CJK unified ideographs
		r >= 0xa000 && r <= 0xa4cf, // Yi
		r >= 0xac00 && r <= 0xd7a3, // Hangul syllables
		r >= 0xf900 && r <= 0xfaff, // CJK compatibility ideographs
		r >= 0xfe30 && r <= 0xfe4f, // CJK compatibility forms
		r >= 0xff00 && r <= 0xff60, // fullwidth forms
		r >= 0xffe0 && r <= 0xffe6,
		r >= 0x1f300 && r <= 0x1f64f, // pictographs, emoticons
		r >= 0x1f900 && r <= 0x1f9ff,
		r >= 0x20000 && r <= 0x3fffd: // CJK extensions B and later
		return 2
	}
	return 1
}

// Width is the number of terminal columns s takes (see RuneWidth).
func Width(s string) int {
	n := 0
	for _, r := range s {
		n += RuneWidth(r)
	}
	return n
}

// Columns makes s valid UTF-8 and shortens it to at most n terminal
// columns, the last of them "…" when it cut.
func Columns(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if Width(s) <= n {
		return s
	}
	if n <= 0 {
		return Ellipsis
	}
	used := 0
	for i, r := range s {
		w := RuneWidth(r)
		if used+w > n-1 {
			return s[:i] + Ellipsis
		}
		used += w
	}
	return s
}
