package board

import (
	"html"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/orchdev/orch/internal/lifecycle"
)

func TestSplitDiff(t *testing.T) {
	two := "diff --git a/a.go b/a.go\nindex 1..2 100644\n--- a/a.go\n+++ b/a.go\n@@ -3,2 +3,3 @@ func f() {\n ctx\n-old\n+new\n+more\n\\ No newline at end of file\n" +
		"diff --git a/b b.txt b/b b.txt\nnew file mode 100644\n--- /dev/null\n+++ b/b b.txt\n@@ -0,0 +1 @@\n+x\n"
	plain := "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n--- a/y.py\n+++ b/y.py\n@@ -10,0 +11,1 @@\n+c\n"
	for _, tc := range []struct {
		name  string
		diff  string
		paths []string
		adds  []int
		dels  []int
		rows  []string // the first file's rows: kind old new
	}{
		{"git", two, []string{"a.go", "b b.txt"}, []int{2, 1}, []int{1, 0}, []string{"hunk  ", "ctx 3 3", "del 4 ", "add  4", "add  5", "note  "}},
		{"plain", plain, []string{"x.py", "y.py"}, []int{1, 1}, []int{1, 0}, []string{"hunk  ", "del 1 ", "add  1"}},
		{"empty", "", nil, nil, nil, nil},
		{"no header", "@@ -1 +1 @@\n-a\n+b\n", []string{""}, []int{1}, []int{1}, []string{"hunk  ", "del 1 ", "add  1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := splitDiff(tc.diff)
			if len(files) != len(tc.paths) {
				t.Fatalf("%d files, want %d", len(files), len(tc.paths))
			}
			for i, f := range files {
				if f.Path != tc.paths[i] || f.Added != tc.adds[i] || f.Removed != tc.dels[i] {
					t.Errorf("file %d: %q +%d -%d, want %q +%d -%d", i, f.Path, f.Added, f.Removed, tc.paths[i], tc.adds[i], tc.dels[i])
				}
			}
			if len(files) > 0 {
				var rows []string
				for _, r := range files[0].Rows {
					rows = append(rows, r.Kind+" "+r.Old+" "+r.New)
				}
				if strings.Join(rows, "|") != strings.Join(tc.rows, "|") {
					t.Errorf("rows %q, want %q", rows, tc.rows)
				}
			}
		})
	}
}

// Highlighting keeps every line's text, escaped, and colours Go.
func TestHighlight(t *testing.T) {
	files := splitDiff("--- a/m.go\n+++ b/m.go\n@@ -1,2 +1,2 @@\n package m\n-// a <b> & \"c\"\n+func F() string { return \"<img src=x>\" }\n")
	f := &files[0]
	highlight(f)
	html := string(f.Rows[3].HTML)
	if !strings.Contains(html, `<span class="kd">func</span>`) && !strings.Contains(html, `<span class="k">func</span>`) {
		t.Errorf("func is not highlighted: %s", html)
	}
	if strings.Contains(html, "<img") || !strings.Contains(html, "&lt;img src=x&gt;") {
		t.Errorf("not escaped: %s", html)
	}
	if got := string(f.Rows[2].HTML); !strings.Contains(got, "&lt;b&gt; &amp;") {
		t.Errorf("comment not escaped: %s", got)
	}
}

// A line the lexer reads differently (chroma turns "\r" into a line feed)
// leaves its hunk uncoloured, each row showing its own text: the rows after
// it showed the line before them.
func TestHighlightCarriageReturn(t *testing.T) {
	files := splitDiff("--- a/m.go\n+++ b/m.go\n@@ -1,3 +1,3 @@\n a := 1\n-b\r0\n+c := 2\n@@ -9 +9 @@\n+func F() {}\n")
	f := &files[0]
	highlight(f)
	for _, r := range f.Rows {
		if r.Kind == "hunk" {
			continue
		}
		if shown := html.UnescapeString(spanTag.ReplaceAllString(string(r.HTML), "")); shown != r.Text {
			t.Errorf("row %q shown as %q", r.Text, shown)
		}
	}
	if got := string(f.Rows[5].HTML); !strings.Contains(got, "<span") {
		t.Errorf("the next hunk is not highlighted: %s", got)
	}
}

// The diagram has every phase and every edge of the table, the current
// phase and the suggested edge marked.
func TestDiagram(t *testing.T) {
	tb := lifecycle.Lifecycle()
	next := lifecycle.Test
	svg := string(diagramSVG(tb, lifecycle.Review, &next))
	for _, p := range lifecycle.Phases() {
		if !strings.Contains(svg, `data-phase="`+string(p)+`"`) {
			t.Errorf("no node for %s", p)
		}
	}
	if n := strings.Count(svg, `<path class="edge`); n != len(tb.Edges) {
		t.Errorf("%d edges drawn, the table has %d", n, len(tb.Edges))
	}
	for _, e := range tb.Edges {
		if !strings.Contains(svg, "<title>"+string(e.From)+" → "+string(e.To)) {
			t.Errorf("edge %s → %s has no title", e.From, e.To)
		}
	}
	if !strings.Contains(svg, `class="node current" data-phase="review"`) || !strings.Contains(svg, `class="node suggested" data-phase="test"`) {
		t.Error("current or suggested phase not marked")
	}
	if strings.Count(svg, `edge out take`) != 1 {
		t.Error("the suggested edge is not marked once")
	}
}

// FuzzSplitDiff: any text (a patch is model output) splits without
// panicking, and every line of a hunk lands in a row, shown as it is:
// each row's HTML, without the highlighter's <span> tags, is its text
// escaped (no markup of the patch's own, no line of another row).
// spanTag is the markup highlight adds around a token.
var spanTag = regexp.MustCompile(`<span class="[a-z0-9 -]+">|</span>`)

func FuzzSplitDiff(f *testing.F) {
	f.Add("diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-a\n+b\n")
	f.Add("diff --git a/a.go b/a.go\n--- a/a.go\n+++ b/a.go\n@@ -1,3 +1,3 @@\n package a\n-var x = \"<b>\"\n+var x = `a\n+b` // &amp;\n")
	f.Add("diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n-s = \"\"\"x\n+y\"\"\" & 1 <script>\n")
	f.Add("--- x\n+++ y\n@@ -999999999999999999999,1 +1 @@\n+\n")
	f.Add("@@\n\\\n--- \n+++ \n")
	f.Fuzz(func(t *testing.T, s string) {
		files := splitDiff(s)
		for i := range files {
			highlight(&files[i])
			for _, r := range files[i].Rows {
				if !utf8.ValidString(string(r.HTML)) && utf8.ValidString(s) {
					t.Fatalf("invalid UTF-8 out of valid input: %q", r.HTML)
				}
				if strings.Contains(string(r.HTML), "<script") {
					t.Fatalf("unescaped markup: %q", r.HTML)
				}
				if !utf8.ValidString(s) {
					continue
				}
				rest := spanTag.ReplaceAllString(string(r.HTML), "")
				if strings.ContainsAny(rest, "<>\"") {
					t.Fatalf("markup in row %q: %q", r.Text, r.HTML)
				}
				// template.HTMLEscapeString shows a NUL as U+FFFD.
				if shown := html.UnescapeString(rest); shown != strings.ReplaceAll(r.Text, "\x00", "\uFFFD") {
					t.Fatalf("row %q is shown as %q (%q)", r.Text, shown, r.HTML)
				}
			}
		}
	})
}
