// Package docblock holds what tests need of the project's Markdown docs.
// It keeps generated blocks equal to the code they are generated from: a
// test calls Check with the block's markers and the text the code
// generates now; the test fails on drift and, run with its package's
// -update flag, rewrites the block. Like Go's cmd/go help_test.go, the
// failure says which command regenerates it. Section and Fenced find the
// text and the code blocks that tests of written examples run.
package docblock

import (
	"os"
	"regexp"
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

// Section returns the text of the Markdown file at path below the heading
// line heading ("### Provider examples") up to the next heading of the
// same or a higher level; a line starting with '#' inside a fenced code
// block is not a heading. It fails t when the file has no such heading.
func Section(t testing.TB, path, heading string) string {
	t.Helper()
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	level := strings.IndexByte(heading, ' ')
	lines := strings.SplitAfter(string(doc), "\n")
	start := -1
	for i, l := range lines {
		if strings.TrimSuffix(l, "\n") == heading {
			start = i + 1
			break
		}
	}
	if level < 1 || start < 0 {
		t.Fatalf("%s has no heading %q", path, heading)
	}
	var b strings.Builder
	fence := false
	for _, l := range lines[start:] {
		if strings.HasPrefix(strings.TrimLeft(l, " "), "```") {
			fence = !fence
		}
		if !fence {
			if n := len(l) - len(strings.TrimLeft(l, "#")); n >= 1 && n <= level && strings.HasPrefix(l[n:], " ") {
				break
			}
		}
		b.WriteString(l)
	}
	return b.String()
}

// Fenced returns the bodies of the ```lang code blocks of s, in order.
func Fenced(s, lang string) []string {
	var out []string
	for _, m := range regexp.MustCompile("(?s)```"+regexp.QuoteMeta(lang)+"\n(.*?)```").FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}
