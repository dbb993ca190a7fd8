package strictjson

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLoneSurrogate(t *testing.T) {
	cases := []struct {
		raw  string
		want string
	}{
		{`"plain"`, ""},
		{`"\ud83d\ude00"`, ""},       // a pair: U+1F600
		{`"\\ud800"`, ""},            // an escaped backslash, then text
		{`"\\\ud800"`, `\ud800`},     // an escaped backslash, then a lone escape
		{`"a\ud800"`, `\ud800`},      // high half at the end
		{`"\ud800x"`, `\ud800`},      // high half before text
		{`"\ud800\u0041"`, `\ud800`}, // high half before a non-surrogate escape
		{`"\udc00"`, `\udc00`},       // low half alone
		{`"\ude00\ud83d"`, `\ude00`}, // reversed pair
		{`"\uD800"`, `\uD800`},       // upper-case hex
		{`"\u12"`, ""},               // malformed: the decoder refuses it
	}
	for _, tc := range cases {
		got, bad := LoneSurrogate([]byte(tc.raw))
		if got != tc.want || bad != (tc.want != "") {
			t.Errorf("LoneSurrogate(%s) = %q, %v; want %q", tc.raw, got, bad, tc.want)
		}
	}
}

// FuzzLoneSurrogate checks loneSurrogate against encoding/json: a JSON
// string it lets through decodes without a U+FFFD the text did not
// already spell, and one it refuses holds an escaped surrogate half.
func FuzzLoneSurrogate(f *testing.F) {
	for _, s := range []string{`"a"`, `"\ud83d\ude00"`, `"\ud800"`, `"\\ud800"`, `"\udc00\ud800"`, `"\ud800\u0041"`, `"\uFFFD"`, `"�"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		esc, bad := LoneSurrogate(raw)
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return // not one JSON string: the decoder refuses it anyway
		}
		spelled := bytes.Contains(raw, []byte("\uFFFD")) || bytes.Contains(bytes.ToLower(raw), []byte(`\ufffd`)) || !utf8.Valid(raw)
		switch {
		case !bad && strings.ContainsRune(s, utf8.RuneError) && !spelled:
			t.Errorf("%q decodes to %q with U+FFFD, but no lone surrogate was found", raw, s)
		case bad && (len(esc) != 6 || !strings.HasPrefix(strings.ToLower(esc), `\ud`)):
			t.Errorf("%q: reported escape %q", raw, esc)
		}
	})
}
