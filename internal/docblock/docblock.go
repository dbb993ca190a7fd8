// Package docblock keeps generated blocks of the project's docs equal to
// the code they are generated from: a test calls Check with the block's
// markers and the text the code generates now; the test fails on drift
// and, run with its package's -update flag, rewrites the block. Like Go's
// cmd/go help_test.go, the failure says which command regenerates it.
package docblock

import (
	"os"
	"strings"
	"testing"
)

// Check compares the text between begin and the first end after it in the
// file at path with want. When they differ it rewrites the block if update
// is set, and otherwise fails t naming regen, the command that rewrites it.
func Check(t testing.TB, path, begin, end, want string, update bool, regen string) {
	t.Helper()
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	s := string(doc)
	i := strings.Index(s, begin)
	j := -1
	if i >= 0 {
		j = strings.Index(s[i+len(begin):], end)
	}
	if i < 0 || j < 0 {
		t.Fatalf("%s lacks the markers %q … %q", path, begin, end)
	}
	j += i + len(begin)
	got := s[i+len(begin) : j]
	if got == want {
		return
	}
	if update {
		if err := os.WriteFile(path, []byte(s[:i+len(begin)]+want+s[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s: the generated block %s is out of date; run `%s`\n got:%s\nwant:%s", path, begin, regen, got, want)
}
