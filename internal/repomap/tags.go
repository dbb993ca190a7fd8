package repomap

import (
	"bytes"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/orchdev/orch/internal/clip"
)

// Def is one definition found in a file.
type Def struct {
	Name string // the defined identifier
	Kind string // func, method, type, class, interface, field, const, var, module, macro
	Line int    // 1-based line of the name
	Sig  string // the definition's head on one line ("func (c *Command) Execute() error")
}

// Ref is an identifier a file uses, with how often.
type Ref struct {
	Name  string
	Count int
}

// maxSigBytes bounds one signature line.
const maxSigBytes = 160

// fileTags is what indexing one blob yields; cached by blob and language.
type fileTags struct {
	Lang Lang
	Defs []Def
	Refs []Ref
}

func sortDefs(defs []Def) {
	sort.SliceStable(defs, func(i, j int) bool { return defs[i].Line < defs[j].Line })
}

// signatureText is the head of the definition spanning src[start:end]
// on one line: up to its body when it has one (body > start, else -1),
// else its first line; whitespace collapsed, and Go's type, const and var
// specs prefixed with their keyword.
func signatureText(l Lang, kind string, src []byte, start, end, body int) string {
	if body > start {
		end = body
	} else if i := bytes.IndexByte(src[min(start, len(src)):min(max(start, end), len(src))], '\n'); i >= 0 {
		end = start + i
	}
	if end > len(src) || start < 0 || start > end {
		return ""
	}
	s := oneLine(src[start:end])
	s = strings.TrimRight(s, " {(:=;,")
	if l == LangGo {
		switch kind {
		case KindType:
			if !strings.HasPrefix(s, "type ") {
				s = "type " + s
			}
		case KindConst, KindVar:
			s = kind + " " + s
		}
	}
	return cutUTF8(s, maxSigBytes)
}

// oneLine is b as printable text with its whitespace collapsed: the
// words of printable(b) joined by single spaces. Source text that is
// printable ASCII (nearly every signature) takes one pass and one
// allocation.
func oneLine(b []byte) string {
	for _, c := range b {
		if (c < 0x20 || c > 0x7e) && !asciiSpace(c) {
			return strings.Join(strings.Fields(printable(b)), " ")
		}
	}
	out := make([]byte, 0, len(b))
	for _, c := range b {
		if asciiSpace(c) {
			if len(out) > 0 && out[len(out)-1] != ' ' {
				out = append(out, ' ')
			}
			continue
		}
		out = append(out, c)
	}
	if n := len(out); n > 0 && out[n-1] == ' ' {
		out = out[:n-1]
	}
	return string(out)
}

// asciiSpace is the ASCII white space strings.Fields splits at.
func asciiSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// isIdent reports whether s is an ASCII identifier the index keeps as a
// definition.
func isIdent(s string) bool {
	if len(s) < minDefIdent || len(s) > maxIdent {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// cutUTF8 cuts s to at most n bytes on a rune boundary, marking the cut.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return clip.Bytes(s, n-len(clip.Ellipsis))
}

// printable turns source bytes into text for a prompt: invalid UTF-8 and
// control characters other than whitespace become U+FFFD.
func printable(b []byte) string {
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && !unicode.IsSpace(r) || unicode.Is(unicode.Bidi_Control, r) {
			return '\uFFFD'
		}
		return r
	}, s)
}

// showPath writes a repository path for the map, quoted when it holds
// anything that could break a line or read differently than it is.
func showPath(p string) string {
	if !utf8.ValidString(p) || strings.IndexFunc(p, func(r rune) bool {
		return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
	}) >= 0 {
		return strconv.Quote(p)
	}
	return p
}
