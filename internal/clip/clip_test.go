package clip

import (
	"testing"
	"unicode/utf8"
)

func TestBytes(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"hello", 10, "hello"},
		{"hello", 5, "hello"},
		{"hello", 3, "hel…"},
		{"héllo", 2, "h…"}, // é is two bytes: never split
		{"日本語", 4, "日…"},
		{"日本語", 0, "…"},
		{"", 0, ""},
	} {
		if got := Bytes(tc.s, tc.n); got != tc.want {
			t.Errorf("Bytes(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}

func TestHead(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"hello", 5, "hello"},
		{"hello", 3, "hel"},
		{"héllo", 2, "h"},
		{"日本語", 5, "日"},
		{"日本語", -1, ""},
	} {
		if got := Head(tc.s, tc.n); got != tc.want {
			t.Errorf("Head(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}

func TestRunes(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"hello", 5, "hello"},
		{"hello", 10, "hello"},
		{"hello", 4, "hel…"},
		{"hello world", 5, "hell…"},
		{"ééééé", 3, "éé…"},
		{"日本語です", 3, "日本…"},
		{"a\xffb", 5, "a\uFFFDb"},
		{"abc", 0, "…"},
	} {
		if got := Runes(tc.s, tc.n); got != tc.want {
			t.Errorf("Runes(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}

func TestColumns(t *testing.T) {
	for _, tc := range []struct {
		s     string
		n     int
		want  string
		width int
	}{
		{"hello", 5, "hello", 5},
		{"hello world", 6, "hello…", 6},
		{"日本語です", 5, "日本…", 5},                       // two columns each
		{"日本語です", 4, "日…", 3},                        // 日本 would need 5 with the ellipsis
		{"e\u0301te\u0301", 3, "e\u0301te\u0301", 3}, // combining accents take no column
		{"tab\there", 20, "tab\there", 7},            // controls count 0 (the caller sanitizes)
		{"a\xffb", 5, "a\uFFFDb", 3},
		{"abc", 0, "…", 1},
	} {
		got := Columns(tc.s, tc.n)
		if got != tc.want {
			t.Errorf("Columns(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
		if w := Width(got); w != tc.width {
			t.Errorf("Width(%q) = %d, want %d", got, w, tc.width)
		}
	}
}

func FuzzClip(f *testing.F) {
	for _, s := range []string{"", "hello", "日本語", "a\xffb\xc3"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 || n > 1<<16 {
			return
		}
		b := Bytes(s, n)
		if len(s) > n && len(b) > n+len(Ellipsis) {
			t.Errorf("Bytes(%q, %d) = %q: too long", s, n, b)
		}
		if utf8.ValidString(s) && !utf8.ValidString(b) {
			t.Errorf("Bytes(%q, %d) = %q split a rune", s, n, b)
		}
		if c := Columns(s, n); !utf8.ValidString(c) || (n > 0 && Width(c) > n) {
			t.Errorf("Columns(%q, %d) = %q is %d columns", s, n, c, Width(c))
		}
		r := Runes(s, n)
		if !utf8.ValidString(r) || (n > 0 && utf8.RuneCountInString(r) > n) {
			t.Errorf("Runes(%q, %d) = %q", s, n, r)
		}
	})
}
