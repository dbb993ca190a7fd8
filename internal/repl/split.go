package repl

import (
	"strings"
	"unicode"
)

// Split breaks a command line into words the way a POSIX shell does,
// without expansions: blanks separate words; 'single quotes' keep
// everything literally; "double quotes" keep everything but \" and \\,
// which stand for " and \; outside quotes a backslash keeps the next
// character literally. Quoted parts join the unquoted text next to them
// (--override="a b" is one word), and "" is an empty word.
func Split(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == ' ' || r == '\t' || r == '\n' || r == '\r':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case r == '\\':
			if i+1 >= len(rs) {
				return nil, ErrTrailingBackslash
			}
			i++
			cur.WriteRune(rs[i])
			inWord = true
		case r == '\'':
			end := indexRune(rs, i+1, '\'')
			if end < 0 {
				return nil, ErrUnterminatedQuote
			}
			cur.WriteString(string(rs[i+1 : end]))
			i = end
			inWord = true
		case r == '"':
			j := i + 1
			for ; j < len(rs) && rs[j] != '"'; j++ {
				if rs[j] == '\\' && j+1 < len(rs) && (rs[j+1] == '"' || rs[j+1] == '\\') {
					j++
				}
				cur.WriteRune(rs[j])
			}
			if j >= len(rs) {
				return nil, ErrUnterminatedQuote
			}
			i = j
			inWord = true
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

func indexRune(rs []rune, from int, r rune) int {
	for i := from; i < len(rs); i++ {
		if rs[i] == r {
			return i
		}
	}
	return -1
}

// freeText returns the text after the leading words as typed, trimmed;
// when the whole of it is one quoted string ("…" or '…'), the quotes are
// removed (and, for double quotes, \" and \\ unescaped). Free text (an
// answer, a brief) is not split into words: an apostrophe in "don't" must
// not open a quote.
func freeText(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		if words, err := Split(s); err == nil && len(words) == 1 {
			return words[0]
		}
	}
	return s
}

// cutWord splits s into its first blank-separated word and the rest.
func cutWord(s string) (word, rest string) {
	s = strings.TrimLeftFunc(s, unicode.IsSpace)
	i := strings.IndexFunc(s, unicode.IsSpace)
	if i < 0 {
		return s, ""
	}
	return s[:i], s[i:]
}
