package clip

import "testing"

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"commnd", "command", 1}, {"sandboxx", "sandbox", 1}, {"abc", "xyz", 3}, {"", "ab", 2}, {"stauts", "status", 2}} {
		if got := EditDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// Nearest: within two edits, the nearest, the first on a tie; else "".
func TestNearest(t *testing.T) {
	names := []string{"sandbox", "timeout", "test"}
	for _, tc := range []struct{ in, want string }{
		{"sandbx", "sandbox"}, {"tset", "test"}, {"timeuot", "timeout"}, {"frobnicate", ""}, {"", ""},
	} {
		if got := Nearest(tc.in, names); got != tc.want {
			t.Errorf("Nearest(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
