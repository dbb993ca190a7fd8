package landing

import (
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/lifecycle"
)

// TestParseExpect: what `orch accept --expect` accepts and how it reads it.
func TestParseExpect(t *testing.T) {
	for _, c := range []struct {
		in       string
		revision int64
		hash     string
		err      string
	}{
		{"", 0, "", ""},
		{"9", 9, "", ""},
		{" 1234567 ", 1234567, "", ""},
		{"0", 0, "", "a revision is 1 or more"},
		{"-3", 0, "", "a revision is 1 or more"},
		{"12345678", 0, "12345678", ""}, // 8 digits: a hash prefix, as the board shows them
		{"ABCDEF0123", 0, "abcdef0123", ""},
		{strings.Repeat("a", 64), 0, strings.Repeat("a", 64), ""},
		{strings.Repeat("a", 65), 0, "", "65 digits"},
		{"abc", 0, "", "3 digits"},
		{"not-a-hash", 0, "", "not a hex digit"},
	} {
		e, err := ParseExpect(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseExpect(%q) = %+v, %v; want an error with %q", c.in, e, err, c.err)
			}
			continue
		}
		if err != nil || e.Revision != c.revision || e.SHA256[lifecycle.HashDiff] != c.hash {
			t.Errorf("ParseExpect(%q) = %+v, %v; want revision %d, hash %q", c.in, e, err, c.revision, c.hash)
		}
	}
}

// TestHashesDiffer: a prefix that the file's hash starts with holds; any
// other, or a file gone, is named with both hashes.
func TestHashesDiffer(t *testing.T) {
	now := map[string]string{lifecycle.HashDiff: "abcdef0123456789", lifecycle.HashPlan: "1111"}
	if d := hashesDiffer(map[string]string{lifecycle.HashDiff: "ABCDEF01"}, now); len(d) != 0 {
		t.Errorf("a matching prefix: %v", d)
	}
	d := hashesDiffer(map[string]string{lifecycle.HashDiff: "abcdef99", lifecycle.HashReport: "22222222"}, now)
	if len(d) != 2 || !strings.Contains(d[0], "code/diff.patch: shown abcdef99, now abcdef012345") || !strings.Contains(d[1], "now absent") {
		t.Errorf("differ: %v", d)
	}
}
