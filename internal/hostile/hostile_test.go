package hostile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestCorpusIsWellFormed: every file parses, every patch and document has
// an expectation and every expectation a file, no path is listed twice,
// and the corpus keeps its size.
func TestCorpusIsWellFormed(t *testing.T) {
	cases := PathCases()
	seen := map[string]int{}
	for _, c := range cases {
		if prev, dup := seen[c.Path]; dup {
			t.Errorf("%s: also at line %d", c, prev)
		}
		seen[c.Path] = c.Line
	}
	refuse, allow := len(Paths()), len(AllowedPaths())
	if refuse+allow != len(cases) || refuse < 150 || allow < 30 {
		t.Errorf("%d refused and %d allowed paths of %d", refuse, allow, len(cases))
	}
	m, err := parseExpect(mustRead("testdata/expect.txt"))
	if err != nil {
		t.Fatal(err)
	}
	all := map[string][]byte{}
	for _, set := range []map[string][]byte{Patches(), AcceptedPatches(), JSONDocs()} {
		for name, data := range set {
			all[name] = data
		}
	}
	for name := range all {
		if len(Expect(name)) == 0 {
			t.Errorf("%s has no line in expect.txt", name)
		}
	}
	for name := range m {
		if _, ok := all[name]; !ok {
			t.Errorf("expect.txt names %s, which does not exist", name)
		}
	}
	if n := len(Patches()); n < 60 {
		t.Errorf("%d hostile patches", n)
	}
	groups := map[string]int{"any": 30, "plan": 40, "files": 15, "answer-plan": 15, "answer-codegen": 25, "command": 15}
	for g, min := range groups {
		if n := len(JSONGroup(g)); n < min {
			t.Errorf("group %s has %d documents, want at least %d", g, n, min)
		}
	}
	total := len(cases) + len(Patches()) + len(AcceptedPatches()) + len(JSONDocs())
	t.Logf("corpus: %d paths (%d refused, %d allowed), %d hostile patches, %d accepted patches, %d JSON documents: %d cases",
		len(cases), refuse, allow, len(Patches()), len(AcceptedPatches()), len(JSONDocs()), total)
}

// TestPathCategories: the categories the corpus promises are there.
func TestPathCategories(t *testing.T) {
	has := func(what string, pred func(string) bool) {
		t.Helper()
		for _, p := range Paths() {
			if pred(p) {
				return
			}
		}
		t.Errorf("no refused path %s", what)
	}
	has("with a NUL byte", func(p string) bool { return strings.ContainsRune(p, 0) })
	has("that is not UTF-8", func(p string) bool { return !utf8.ValidString(p) })
	has("longer than 4096 bytes", func(p string) bool { return len(p) > 4096 })
	has("starting with ..", func(p string) bool { return strings.HasPrefix(p, "../") })
	has("ending with ..", func(p string) bool { return strings.HasSuffix(p, "/..") })
	has("with .. in the middle", func(p string) bool { return strings.Contains(p, "/../") })
	has("that is absolute", func(p string) bool { return strings.HasPrefix(p, "/") })
	has("spelling .git in upper case", func(p string) bool { return strings.HasPrefix(p, ".GIT") })
	has("naming git~1", func(p string) bool { return strings.Contains(strings.ToLower(p), "git~1") })
	has("with a right-to-left override", func(p string) bool { return strings.ContainsRune(p, '\u202e') })
	has("with an HFS+ ignorable character", func(p string) bool { return strings.ContainsRune(p, '\u200c') })
	for _, c := range PathCases() {
		if c.Verdict == Allow && !utf8.ValidString(c.Path) {
			t.Errorf("%s: an allowed path must be UTF-8", c)
		}
	}
}

func TestParsePathsErrors(t *testing.T) {
	for _, in := range []string{
		`maybe "x"`,
		`refuse x`,
		`refuse "x" trailing`,
		`refuse "\q"`,
		`refuse`,
	} {
		if _, err := parsePaths([]byte(in + "\n")); err == nil {
			t.Errorf("parsePaths(%q) accepted", in)
		}
	}
	got, err := parsePaths([]byte("# c\n\nallow  \"a\\x00\"  # note\n"))
	if err != nil || len(got) != 1 || got[0].Path != "a\x00" || got[0].Note != "note" || got[0].Line != 3 || got[0].Verdict != Allow {
		t.Errorf("parsePaths: %+v, %v", got, err)
	}
	if _, err := parseExpect([]byte("a\tb\na\tc\n")); err == nil {
		t.Error("duplicate expectation accepted")
	}
	if _, err := parseExpect([]byte("no tab\n")); err == nil {
		t.Error("line without a tab accepted")
	}
}

func TestMatches(t *testing.T) {
	name := "patches/traversal-create.patch"
	if !Matches(name, `unsafe path "../pwned": ".." element`) || Matches(name, "something else") {
		t.Errorf("Matches(%s) with fragments %q", name, Expect(name))
	}
	if !Matches("not/in/the/corpus", "anything") {
		t.Error("a name without expectation must match anything")
	}
	if s := (PathCase{Path: strings.Repeat("a", 100), Line: 7}).String(); !strings.HasPrefix(s, "paths.txt:7 ") || len(s) > 80 {
		t.Errorf("String() = %q", s)
	}
}

func FuzzParsePaths(f *testing.F) {
	f.Add([]byte(mustRead("testdata/paths.txt")[:2000]))
	f.Add([]byte("refuse \"\\xff\"  # n\nallow \"a\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cases, err := parsePaths(data)
		if err != nil {
			return
		}
		for _, c := range cases {
			if c.Verdict != Refuse && c.Verdict != Allow || c.Line < 1 {
				t.Errorf("bad case %+v", c)
			}
		}
	})
}

func TestSnapshotAndChanges(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, content string) {
		t.Helper()
		p := dir + "/" + rel
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a/b.txt", "one")
	write("skip/x", "x")
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	before, err := Snapshot(dir, "skip")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := before["skip/x"]; ok || !strings.Contains(before["link"], "-> /etc/passwd") || !strings.HasPrefix(before["a/b.txt"], "file ") {
		t.Fatalf("snapshot: %v", before)
	}
	write("a/b.txt", "two")
	write("new.txt", "n")
	write("skip/y", "ignored")
	if err := os.Remove(filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	after, err := Snapshot(dir, "skip")
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(Changes(before, after), "\n")
	for _, want := range []string{"+ new.txt", "- link", "~ a/b.txt"} {
		if !strings.Contains(got, want) {
			t.Errorf("changes %q lack %q", got, want)
		}
	}
	if len(Changes(after, after)) != 0 {
		t.Error("a snapshot differs from itself")
	}
}

func TestCreatableAndQuoting(t *testing.T) {
	for p, want := range map[string]bool{"a/b": true, "../x": false, "/x": false, "a//b": false, "a\x00": false, "": false, "./x": false, "..x": true} {
		if Creatable(p) != want {
			t.Errorf("Creatable(%q) = %v", p, !want)
		}
	}
	if got := JSONString("a\"\\\x00\xff"); got != `"a\"\\\u0000`+"\xff\"" {
		t.Errorf("JSONString = %q", got)
	}
	for in, want := range map[string]string{
		"a/b.go":      "a/b.go",
		"a b.go":      `"a b.go"`,
		"caf\xc3\xa9": `"caf\303\251"`,
		"q\"\\\t\x7f": `"q\"\\\011\177"`,
	} {
		if got := GitQuote(in); got != want {
			t.Errorf("GitQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

// Every terminal case parses and is hostile: as written it would reach a
// terminal as a control sequence (TerminalViolation names it), so a test
// that lets one through fails.
func TestTerminalCases(t *testing.T) {
	cases := TerminalCases()
	if len(cases) < 20 {
		t.Fatalf("only %d terminal cases", len(cases))
	}
	for _, c := range cases {
		if TerminalViolation(c.Text) == "" {
			t.Errorf("%s is not hostile: %q", c, c.Text)
		}
	}
	for _, ok := range []string{"", "plain\ttext\n", "\x1b[1;31mred\x1b[0m", "^[]52 \\u202e", "日本語"} {
		if v := TerminalViolation(ok); v != "" {
			t.Errorf("TerminalViolation(%q) = %s", ok, v)
		}
	}
	if _, err := parseTerminal([]byte("x \"a\"\nx \"b\"\n")); err == nil {
		t.Error("a name listed twice is accepted")
	}
	if _, err := parseTerminal([]byte("x 'a'\n")); err == nil {
		t.Error("an unquoted text is accepted")
	}
}
