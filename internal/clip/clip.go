// Package clip shortens text for messages without splitting a character:
// Bytes bounds the length in bytes, Runes in characters. A cut is marked
// with "…".
package clip

import (
	"strings"
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
