package repl

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		err  error
	}{
		{"", nil, nil},
		{"   ", nil, nil},
		{"next", []string{"next"}, nil},
		{`--override "I accept the risk" --to test`, []string{"--override", "I accept the risk", "--to", "test"}, nil},
		{`--override 'single quoted "inner"'`, []string{"--override", `single quoted "inner"`}, nil},
		{`--override="a b"`, []string{"--override=a b"}, nil},
		{`a\ b c`, []string{"a b", "c"}, nil},
		{`"say \"hi\" \\ \n"`, []string{`say "hi" \ \n`}, nil},
		{`'it'"'"'s'`, []string{"it's"}, nil},
		{`"" x`, []string{"", "x"}, nil},
		{"a\tb\n c", []string{"a", "b", "c"}, nil},
		{`"unterminated`, nil, ErrUnterminatedQuote},
		{`don't`, nil, ErrUnterminatedQuote},
		{`trailing\`, nil, ErrTrailingBackslash},
		{`"a\"`, nil, ErrUnterminatedQuote},
		{`héllo "wörld"`, []string{"héllo", "wörld"}, nil},
	}
	for _, tt := range tests {
		got, err := Split(tt.in)
		if !errors.Is(err, tt.err) {
			t.Errorf("Split(%q) error = %v, want %v", tt.in, err, tt.err)
			continue
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("Split(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFreeText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"  five attempts  ", "five attempts"},
		{`"five attempts"`, "five attempts"},
		{`'five attempts'`, "five attempts"},
		{"don't retry on 4xx", "don't retry on 4xx"},
		{`"a" and "b"`, `"a" and "b"`},
		{`"say \"hi\""`, `say "hi"`},
		{`"`, `"`},
		{"", ""},
	}
	for _, tt := range tests {
		if got := freeText(tt.in); got != tt.want {
			t.Errorf("freeText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// quote writes w so that Split reads it back as one word.
func quote(w string) string {
	return "'" + strings.ReplaceAll(w, "'", `'"'"'`) + "'"
}

// FuzzSplit: Split never panics, and words quoted back and joined split
// into the same words.
func FuzzSplit(f *testing.F) {
	for _, s := range []string{"", `--override "I accept" --to test`, `'a'"b"\c`, `"unterminated`, `x\`, "a\x00b", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words, err := Split(s)
		if err != nil {
			return
		}
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = quote(w)
		}
		again, err := Split(strings.Join(quoted, " "))
		if err != nil {
			t.Fatalf("re-split of %q: %v", quoted, err)
		}
		if !slices.Equal(words, again) {
			t.Fatalf("Split(%q) = %q, but the quoted words split into %q", s, words, again)
		}
	})
}
