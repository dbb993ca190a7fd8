// Package safepath decides which paths may name a file of the user's
// repository in an artifact: plain, repository-relative, never into .git
// or .orch, under any spelling a file system may treat as those; and how
// orch reads a file it did not write itself: OpenRegular, ReadRegular and
// ReadPart, the one bounded reader of a regular file below a folder.
package safepath

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ErrUnsafe: a path is absolute, escapes the repository, points into .git
// or .orch, or is otherwise refused by Check.
var ErrUnsafe = errors.New("unsafe path")

// MaxBytes and MaxElementBytes bound repository paths.
const (
	MaxBytes        = 4096
	MaxElementBytes = 255
)

// PathError says why Check refused a path. It wraps ErrUnsafe.
type PathError struct {
	Path   string
	Reason string
}

func (e *PathError) Error() string {
	return "unsafe path " + Quote(e.Path) + ": " + e.Reason
}

// Unwrap returns ErrUnsafe.
func (e *PathError) Unwrap() error { return ErrUnsafe }

// Quote quotes a path for a message, cutting very long ones.
func Quote(p string) string {
	if len(p) > 200 {
		p = p[:200]
		return strconv.Quote(p) + "…"
	}
	return strconv.Quote(p)
}

// Reason renders a Check error as `"path" (reason)`.
func Reason(err error) string {
	var pe *PathError
	if errors.As(err, &pe) {
		return Quote(pe.Path) + " (" + pe.Reason + ")"
	}
	return err.Error()
}

// Check refuses a path that is not a plain repository-relative path.
//
// A path is refused when it is empty, longer than MaxBytes, not valid
// UTF-8, contains a control character, a bidirectional control character
// (U+202E RIGHT-TO-LEFT OVERRIDE and its kin, which make a name display as
// another) or a backslash, is absolute (a leading '/' or a Windows drive
// such as "C:"), has an empty element ("a//b", a trailing '/'), a "." or
// ".." element or an element longer than MaxElementBytes, has any
// element that a file system may treat as ".git" (case-insensitively, with
// trailing dots or spaces, an NTFS stream suffix, HFS+ ignorable
// characters, or the 8.3 short name "git~1"), or starts with an element
// that may be treated as ".orch". The error is a *PathError wrapping
// ErrUnsafe.
func Check(p string) error {
	fail := func(reason string) error { return &PathError{Path: p, Reason: reason} }
	switch {
	case p == "":
		return fail("the path is empty")
	case len(p) > MaxBytes:
		return fail("longer than " + strconv.Itoa(MaxBytes) + " bytes")
	case !utf8.ValidString(p):
		return fail("not valid UTF-8")
	}
	for _, r := range p {
		switch {
		case r == 0:
			return fail("contains a NUL byte")
		case unicode.IsControl(r):
			return fail("contains the control character " + strconv.QuoteRune(r))
		case r == '\\':
			return fail(`contains a backslash`)
		case unicode.Is(unicode.Bidi_Control, r):
			return fail(fmt.Sprintf("contains the bidirectional control character U+%04X: the name would read differently than it is", r))
		}
	}
	if p[0] == '/' {
		return fail("absolute path")
	}
	if len(p) >= 2 && p[1] == ':' && isASCIILetter(p[0]) {
		return fail("starts with a Windows drive letter")
	}
	for i, elem := range strings.Split(p, "/") {
		switch {
		case elem == "":
			return fail("empty path element")
		case elem == ".":
			return fail(`"." element`)
		case elem == "..":
			return fail(`".." element`)
		case len(elem) > MaxElementBytes:
			return fail("element longer than " + strconv.Itoa(MaxElementBytes) + " bytes")
		}
		norm := normalizeElement(elem)
		if strings.EqualFold(norm, ".git") || strings.EqualFold(norm, "git~1") {
			return fail("element " + strconv.Quote(elem) + " names the .git directory")
		}
		if i == 0 && strings.EqualFold(norm, ".orch") {
			return fail("inside the .orch directory")
		}
	}
	return nil
}

// FoldCase returns p with each character replaced by a representative of
// its Unicode simple case-folding orbit, the folding strings.EqualFold
// uses: FoldCase(a) == FoldCase(b) exactly when strings.EqualFold(a, b).
// Two paths with the same FoldCase are one file on a case-insensitive
// file system (macOS, Windows): "ſrc" is "src", the Kelvin sign is "k",
// "ς" is "σ". Lower-casing is not that: it keeps "ſ" and "s" apart and
// takes "İ" for "i". The result is a key to compare with, not a name to
// show.
func FoldCase(p string) string {
	ascii := true
	for i := 0; i < len(p); i++ {
		if p[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToUpper(p) // an ASCII letter's orbit has no other ASCII member
	}
	var b strings.Builder
	b.Grow(len(p))
	for _, r := range p {
		b.WriteRune(foldRune(r))
	}
	return b.String()
}

// foldRune returns the smallest rune of r's simple case-folding orbit.
func foldRune(r rune) rune {
	least := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		least = min(least, f)
	}
	return least
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// normalizeElement folds a path element the way case-insensitive or
// Windows/macOS file systems may see it: HFS+ ignorable code points are
// dropped, an NTFS alternate stream suffix (":stream") is cut, and trailing
// dots and spaces are trimmed.
func normalizeElement(elem string) string {
	if strings.IndexFunc(elem, isHFSIgnorable) >= 0 {
		elem = strings.Map(func(r rune) rune {
			if isHFSIgnorable(r) {
				return -1
			}
			return r
		}, elem)
	}
	if i := strings.IndexByte(elem, ':'); i >= 0 {
		elem = elem[:i]
	}
	return strings.TrimRight(elem, ". ")
}

// isHFSIgnorable reports the code points HFS+ ignores when comparing names
// (the list git itself uses in is_hfs_dotgit).
func isHFSIgnorable(r rune) bool {
	switch {
	case r >= 0x200c && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x206a && r <= 0x206f, r == 0xfeff:
		return true
	}
	return false
}
