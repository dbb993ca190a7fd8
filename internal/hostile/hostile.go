// Package hostile is the shared corpus of hostile inputs that every entry
// point of orch is tested against: repository paths (file plans,
// code/files, diff.patch, model answers), patches and JSON documents
// (artifacts, model answers, the command provider's output).
//
// The corpus is data, embedded from testdata/ so that any package's tests
// can load it without knowing where this package lives:
//
//	testdata/paths.txt          one path per line: VERDICT "go-quoted path" [# note]
//	testdata/patches/*.patch    patches every diff reader must refuse
//	testdata/patches-ok/*.patch odd patches that are fine (CRLF, quoted names…)
//	testdata/json/GROUP/*.json  JSON documents, grouped by the reader they target
//	testdata/expect.txt         NAME<TAB>fragments: what the refusal should say
//	testdata/terminal.txt       NAME "text": text that must never drive a terminal
//
// JSON groups: "any" (no JSON reader may accept them), "plan"
// (planning/planning.ai.json), "files" (planning/plan.files.json),
// "answer-plan" and "answer-codegen" (model answers of the planner and of
// codegen), "command" (stdout of a command provider).
//
// TerminalCases and TerminalViolation serve the terminal-safety tests
// (docs/terminal.md).
package hostile

import (
	"bufio"
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
)

//go:embed testdata
var corpus embed.FS

// Verdict says what must happen to a corpus path.
type Verdict string

const (
	// Refuse: artifact.CheckPath and every entry point must refuse it.
	Refuse Verdict = "refuse"
	// Allow: an odd but contained name. CheckPath accepts it; wherever it
	// is accepted it may only ever land inside the work tree.
	Allow Verdict = "allow"
)

// PathCase is one line of testdata/paths.txt.
type PathCase struct {
	Path    string
	Verdict Verdict
	// Note is the line's comment, if any; Line its 1-based line number.
	Note string
	Line int
}

// String names the case for test names and messages: the line number and
// the quoted path, cut when long.
func (c PathCase) String() string {
	q := strconv.Quote(c.Path)
	if len(q) > 60 {
		q = q[:60] + "…"
	}
	return fmt.Sprintf("paths.txt:%d %s", c.Line, q)
}

// PathCases returns every case of testdata/paths.txt in file order. It
// panics if the embedded file is malformed (a test of this package keeps
// it well-formed).
func PathCases() []PathCase {
	cases, err := parsePaths(mustRead("testdata/paths.txt"))
	if err != nil {
		panic(err)
	}
	return cases
}

// Paths returns the paths that must be refused, in file order.
func Paths() []string {
	var out []string
	for _, c := range PathCases() {
		if c.Verdict == Refuse {
			out = append(out, c.Path)
		}
	}
	return out
}

// AllowedPaths returns the odd but contained paths, in file order.
func AllowedPaths() []string {
	var out []string
	for _, c := range PathCases() {
		if c.Verdict == Allow {
			out = append(out, c.Path)
		}
	}
	return out
}

// Patches returns the patches every diff reader must refuse, by name
// ("patches/traversal-create.patch").
func Patches() map[string][]byte { return readDir("testdata/patches", ".patch") }

// AcceptedPatches returns odd patches that must be accepted (and, when
// applied, touch exactly the files they name), by name
// ("patches-ok/crlf-content.patch").
func AcceptedPatches() map[string][]byte { return readDir("testdata/patches-ok", ".patch") }

// JSONDocs returns every JSON document, by name ("json/plan/dup-top-key.json").
func JSONDocs() map[string][]byte { return readDir("testdata/json", ".json") }

// JSONGroup returns the documents of one group ("plan", "command", …), by
// full name.
func JSONGroup(group string) map[string][]byte {
	out := map[string][]byte{}
	prefix := "json/" + group + "/"
	for name, data := range JSONDocs() {
		if strings.HasPrefix(name, prefix) {
			out[name] = data
		}
	}
	return out
}

// Expect returns the fragments one of which the refusal of the named case
// should contain (testdata/expect.txt), or nil when none is recorded.
func Expect(name string) []string {
	m, err := parseExpect(mustRead("testdata/expect.txt"))
	if err != nil {
		panic(err)
	}
	return m[name]
}

// Matches reports whether msg contains one of the fragments Expect
// returns for name (true when none is recorded).
func Matches(name, msg string) bool {
	frags := Expect(name)
	if len(frags) == 0 {
		return true
	}
	for _, f := range frags {
		if strings.Contains(msg, f) {
			return true
		}
	}
	return false
}

// Names returns the keys of a corpus map, sorted, so that tests run in a
// stable order.
func Names(m map[string][]byte) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func mustRead(name string) []byte {
	data, err := corpus.ReadFile(name)
	if err != nil {
		panic(fmt.Sprintf("hostile corpus: %v", err))
	}
	return data
}

// readDir reads every file ending in ext below dir, keyed by its path
// relative to testdata/.
func readDir(dir, ext string) map[string][]byte {
	out := map[string][]byte{}
	err := fs.WalkDir(corpus, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Ext(p) != ext {
			return err
		}
		data, err := corpus.ReadFile(p)
		if err != nil {
			return err
		}
		out[strings.TrimPrefix(p, "testdata/")] = data
		return nil
	})
	if err != nil {
		panic(fmt.Sprintf("hostile corpus: %v", err))
	}
	return out
}

// parsePaths reads paths.txt: blank lines and lines starting with '#' are
// skipped; every other line is `VERDICT "quoted path"` with an optional
// `# note` after it.
func parsePaths(data []byte) ([]PathCase, error) {
	var out []PathCase
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		verdict, rest, ok := strings.Cut(line, " ")
		if !ok || (Verdict(verdict) != Refuse && Verdict(verdict) != Allow) {
			return nil, fmt.Errorf("paths.txt:%d: expected refuse or allow, got %q", n, verdict)
		}
		rest = strings.TrimLeft(rest, " ")
		quoted, err := strconv.QuotedPrefix(rest)
		if err != nil {
			return nil, fmt.Errorf("paths.txt:%d: expected a Go-quoted path: %w", n, err)
		}
		p, err := strconv.Unquote(quoted)
		if err != nil {
			return nil, fmt.Errorf("paths.txt:%d: %w", n, err)
		}
		c := PathCase{Path: p, Verdict: Verdict(verdict), Line: n}
		if tail := strings.TrimSpace(rest[len(quoted):]); tail != "" {
			note, ok := strings.CutPrefix(tail, "#")
			if !ok {
				return nil, fmt.Errorf("paths.txt:%d: unexpected text after the path: %q", n, tail)
			}
			c.Note = strings.TrimSpace(note)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("paths.txt: %w", err)
	}
	return out, nil
}

// parseExpect reads expect.txt: NAME<TAB>fragment[|fragment...].
func parseExpect(data []byte) (map[string][]string, error) {
	m := map[string][]string{}
	for i, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, frags, ok := strings.Cut(line, "\t")
		if !ok || name == "" || frags == "" {
			return nil, fmt.Errorf("expect.txt:%d: expected NAME<TAB>fragments", i+1)
		}
		if _, dup := m[name]; dup {
			return nil, fmt.Errorf("expect.txt:%d: %s listed twice", i+1, name)
		}
		m[name] = strings.Split(frags, "|")
	}
	return m, nil
}
