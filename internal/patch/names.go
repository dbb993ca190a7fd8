package patch

import (
	"bytes"
	"errors"
	"strings"

	"github.com/orchdev/orch/internal/safepath"
)

const devNull = "/dev/null"

// unquoteC decodes a git C-style quoted name at the start of s (which must
// start with '"') and returns it with the rest of s after the closing quote.
func unquoteC(s string) (name, rest string, err error) {
	if s == "" || s[0] != '"' {
		return "", s, errors.New("missing opening quote")
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			return b.String(), s[i+1:], nil
		case '\\':
			i++
			if i >= len(s) {
				return "", "", errors.New("unterminated escape in quoted name")
			}
			switch e := s[i]; e {
			case 'a':
				b.WriteByte('\a')
			case 'b':
				b.WriteByte('\b')
			case 't':
				b.WriteByte('\t')
			case 'n':
				b.WriteByte('\n')
			case 'v':
				b.WriteByte('\v')
			case 'f':
				b.WriteByte('\f')
			case 'r':
				b.WriteByte('\r')
			case '"', '\\':
				b.WriteByte(e)
			case '0', '1', '2', '3':
				if i+2 >= len(s) || !isOctal(s[i+1]) || !isOctal(s[i+2]) {
					return "", "", errors.New("bad octal escape in quoted name")
				}
				b.WriteByte((e-'0')<<6 | (s[i+1]-'0')<<3 | (s[i+2] - '0'))
				i += 2
			default:
				return "", "", errors.New("unknown escape \\" + string(e) + " in quoted name")
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", "", errors.New("unterminated quoted name")
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// headerName reads the name of a ---/+++/rename/copy line: a quoted name,
// or the text up to the first tab (git adds a tab after names holding a
// space; other tools put a time stamp there).
func headerName(s string) (string, error) {
	if strings.HasPrefix(s, `"`) {
		name, rest, err := unquoteC(s)
		if err != nil {
			return "", err
		}
		if rest != "" && rest[0] != '\t' && strings.TrimSpace(rest) != "" {
			return "", errors.New("unexpected text after the quoted name")
		}
		return name, nil
	}
	if i := strings.IndexByte(s, '\t'); i >= 0 {
		s = s[:i]
	}
	if s == "" {
		return "", errors.New("missing file name")
	}
	return s, nil
}

// gitHeaderNames splits the rest of a "diff --git " line into its two
// names (prefixes kept). ok is false when unquoted names cannot be told
// apart; the other header lines must then supply them.
func gitHeaderNames(rest string) (a, b string, ok bool, err error) {
	if strings.HasPrefix(rest, `"`) {
		a, tail, err := unquoteC(rest)
		if err != nil {
			return "", "", false, err
		}
		if !strings.HasPrefix(tail, " ") || len(tail) < 2 {
			return "", "", false, errors.New("missing second name")
		}
		tail = tail[1:]
		if strings.HasPrefix(tail, `"`) {
			b, after, err := unquoteC(tail)
			if err != nil {
				return "", "", false, err
			}
			if after != "" {
				return "", "", false, errors.New("unexpected text after the second name")
			}
			return a, b, true, nil
		}
		return a, tail, true, nil
	}
	if strings.HasSuffix(rest, `"`) {
		for i := strings.Index(rest, ` "`); i >= 0; {
			if b, after, err := unquoteC(rest[i+1:]); err == nil && after == "" {
				return rest[:i], b, true, nil
			}
			j := strings.Index(rest[i+1:], ` "`)
			if j < 0 {
				break
			}
			i += 1 + j
		}
		return "", "", false, errors.New("cannot parse the quoted second name")
	}
	// Unquoted: "a/X b/X" with the same X is the common case.
	if n := len(rest); n >= 7 && (n-5)%2 == 0 {
		x := (n - 5) / 2
		if strings.HasPrefix(rest, "a/") && rest[2+x:5+x] == " b/" && rest[2:2+x] == rest[5+x:] {
			return rest[:2+x], rest[3+x:], true, nil
		}
	}
	if strings.Count(rest, " b/") == 1 {
		i := strings.Index(rest, " b/")
		return rest[:i], rest[i+1:], true, nil
	}
	return "", "", false, nil
}

// stripPrefix removes the "a/" or "b/" prefix of a patch name.
func stripPrefix(name, prefix string) (string, error) {
	if !strings.HasPrefix(name, prefix) {
		return "", errors.New("expected the name " + safepath.Quote(name) + " to start with " + prefix +
			" (git applies patches with one leading folder stripped: make plain diffs with `diff -u a/PATH b/PATH` or `git diff --no-index`)")
	}
	return name[len(prefix):], nil
}

// trimEOL removes a trailing "\n" and then a "\r" from a line.
func trimEOL(line []byte) []byte {
	line = bytes.TrimSuffix(line, []byte{'\n'})
	return bytes.TrimSuffix(line, []byte{'\r'})
}
