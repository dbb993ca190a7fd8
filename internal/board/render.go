package board

import (
	"bytes"
	"html/template"
	"strconv"
	"strings"

	"github.com/alecthomas/chroma/v2"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"

	"github.com/orchdev/orch/internal/artifact"
)

// md renders Markdown with GitHub's tables and strikethrough. Raw HTML in
// the source is never passed through (goldmark's default: it is replaced
// by a comment), and links with a dangerous scheme (javascript:) are
// dropped: a plan is model output, untrusted.
var md = goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.TaskList))

// markdown renders src as HTML, or as escaped text when it cannot.
func markdown(src []byte) template.HTML {
	var b bytes.Buffer
	if err := md.Convert(bytes.ToValidUTF8(src, []byte("�")), &b); err != nil {
		return template.HTML("<pre>" + template.HTMLEscapeString(string(src)) + "</pre>")
	}
	return template.HTML(b.String()) // #nosec: goldmark escapes text and omits raw HTML
}

// DiffView is code/diff.patch for reading: one block per file with
// highlighted lines.
type DiffView struct {
	Present bool
	Err     string
	Files   []DiffFile
	Added   int
	Removed int
	SHA256  string
	// Cut is set when the patch was larger than the page shows.
	Cut bool
}

// DiffFile is one file of the patch.
type DiffFile struct {
	Anchor  string
	Path    string
	Op      string
	Added   int
	Removed int
	Header  []string
	Rows    []DiffRow
	Cut     bool // rows left out
}

// DiffRow is one line of a hunk: its kind (add, del, ctx, hunk, note),
// the line numbers on each side and its highlighted text.
type DiffRow struct {
	Kind string
	Old  string
	New  string
	Sign string
	Text string // the line without its sign
	HTML template.HTML
}

// Limits of the diff shown: beyond them rows are left out (the raw file
// is a link away).
const (
	maxDiffShown      = 8 << 20
	maxRowsPerFile    = 4000
	maxHighlightBytes = 512 << 10
)

// loadDiffView reads and renders the task's patch. The patch is checked
// by artifact.LoadDiff first (the same check orch next makes); an invalid
// patch is shown as the error and its escaped text.
func loadDiffView(dir string) DiffView {
	var dv DiffView
	l := artifact.LoadDiff(dir)
	dv.Present = l.Present
	if !l.Present {
		return dv
	}
	raw, err := readTaskFile(dir, artifact.DiffFile, maxDiffShown+1)
	if err != nil {
		dv.Err = err.Error()
		return dv
	}
	if len(raw) > maxDiffShown {
		raw, dv.Cut = raw[:maxDiffShown], true
	}
	if l.Err != nil {
		dv.Err = l.Err.Error()
	} else {
		dv.SHA256 = l.SHA256
	}
	dv.Files = splitDiff(string(bytes.ToValidUTF8(raw, []byte("�"))))
	ops := l.Value.Files
	for i := range dv.Files {
		f := &dv.Files[i]
		f.Anchor = "file-" + strconv.Itoa(i+1)
		if l.Err == nil && len(ops) == len(dv.Files) {
			// The checked names: the display split only finds the
			// boundaries.
			f.Path, f.Op = ops[i].Path(), ops[i].Op
		}
		highlight(f)
		dv.Added += f.Added
		dv.Removed += f.Removed
	}
	return dv
}

// splitDiff cuts a unified diff into files at each "diff --git" line, or
// at "--- " lines followed by "+++ " in a diff without git headers, and
// each file into header lines and hunk rows with line numbers. It only
// finds boundaries for display; the patch was checked by patch.Parse.
func splitDiff(s string) []DiffFile {
	lines := strings.SplitAfter(s, "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	var files []DiffFile
	var cur *DiffFile
	inHunk := false
	var oldN, newN int
	start := func() {
		files = append(files, DiffFile{})
		cur = &files[len(files)-1]
		inHunk = false
	}
	for i := 0; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], "\r\n")
		switch {
		case strings.HasPrefix(line, "diff --git "):
			start()
			cur.Header = append(cur.Header, line)
			cur.Path = gitPath(line)
			continue
		case strings.HasPrefix(line, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ ") && (cur == nil || inHunk || !headerHas(cur, "--- ")):
			if cur == nil || inHunk {
				start()
			}
			cur.Header = append(cur.Header, line, strings.TrimRight(lines[i+1], "\r\n"))
			if p := headerPath(strings.TrimRight(lines[i+1], "\r\n")[4:]); p != "" {
				cur.Path = p
			} else if p := headerPath(line[4:]); p != "" {
				cur.Path = p
			}
			i++
			continue
		}
		if cur == nil {
			start()
		}
		if strings.HasPrefix(line, "@@") {
			inHunk = true
			oldN, newN = hunkStarts(line)
			cur.Rows = append(cur.Rows, DiffRow{Kind: "hunk", Text: line})
			continue
		}
		if !inHunk {
			cur.Header = append(cur.Header, line)
			continue
		}
		if len(cur.Rows) >= maxRowsPerFile {
			cur.Cut = true
			continue
		}
		r := DiffRow{}
		switch {
		case strings.HasPrefix(line, "+"):
			r.Kind, r.Sign, r.New = "add", "+", strconv.Itoa(newN)
			newN++
			cur.Added++
		case strings.HasPrefix(line, "-"):
			r.Kind, r.Sign, r.Old = "del", "-", strconv.Itoa(oldN)
			oldN++
			cur.Removed++
		case strings.HasPrefix(line, "\\"):
			r.Kind, r.Sign = "note", "\\"
		default:
			r.Kind, r.Sign, r.Old, r.New = "ctx", " ", strconv.Itoa(oldN), strconv.Itoa(newN)
			oldN++
			newN++
		}
		// The sign is one ASCII byte; a line without one (a malformed
		// context line) is shown whole, never cut inside a character.
		if len(line) > 0 && strings.IndexByte(" +-\\", line[0]) >= 0 {
			line = line[1:]
		}
		r.Text = line
		cur.Rows = append(cur.Rows, r)
	}
	return files
}

func headerHas(f *DiffFile, prefix string) bool {
	for _, h := range f.Header {
		if strings.HasPrefix(h, prefix) {
			return true
		}
	}
	return false
}

// gitPath reads the new name of a "diff --git a/x b/x" line (names with
// spaces are ambiguous there; the checked name replaces it when the patch
// is valid).
func gitPath(line string) string {
	rest := strings.TrimPrefix(line, "diff --git ")
	if i := strings.LastIndex(rest, " b/"); i >= 0 {
		return rest[i+3:]
	}
	return rest
}

// headerPath reads a "--- a/x" or "+++ b/x" name; "" for /dev/null.
func headerPath(name string) string {
	name, _, _ = strings.Cut(name, "\t")
	if name == "/dev/null" {
		return ""
	}
	if len(name) > 2 && (name[:2] == "a/" || name[:2] == "b/") {
		return name[2:]
	}
	return name
}

// hunkStarts reads "@@ -a,b +c,d @@" into a and c (1 when absent).
func hunkStarts(line string) (int, int) {
	oldN, newN := 1, 1
	for _, f := range strings.Fields(line) {
		if len(f) < 2 || (f[0] != '-' && f[0] != '+') {
			continue
		}
		num, _, _ := strings.Cut(f[1:], ",")
		n, err := strconv.Atoi(num)
		if err != nil {
			continue
		}
		if f[0] == '-' {
			oldN = n
		} else {
			newN = n
		}
	}
	return oldN, newN
}

// highlight replaces the rows' escaped text by highlighted HTML, with the
// lexer of the file's name. The lines are tokenized together (hunk by
// hunk), so a comment or string over several lines is coloured as one.
func highlight(f *DiffFile) {
	for i := range f.Rows {
		f.Rows[i].HTML = template.HTML(esc(f.Rows[i].Text)) // #nosec: escaped
	}
	lexer := matchLexer(f.Path)
	if lexer == nil {
		return
	}
	lexer = chroma.Coalesce(lexer)
	i := 0
	for i < len(f.Rows) {
		if f.Rows[i].Kind == "hunk" || f.Rows[i].Kind == "note" {
			i++
			continue
		}
		j := i
		var src strings.Builder
		for j < len(f.Rows) && f.Rows[j].Kind != "hunk" {
			if f.Rows[j].Kind != "note" {
				src.WriteString(f.Rows[j].Text)
				src.WriteByte('\n')
			}
			j++
		}
		if src.Len() <= maxHighlightBytes {
			if lines, texts, ok := tokenLines(lexer, src.String()); ok && sameRows(f.Rows[i:j], texts) {
				k := 0
				for r := i; r < j; r++ {
					if f.Rows[r].Kind == "note" {
						continue
					}
					f.Rows[r].HTML = lines[k]
					k++
				}
			}
		}
		i = j
	}
}

// sameRows reports whether the lexer's lines (texts) are the rows' texts,
// notes left out. A lexer may change the text: chroma turns a carriage
// return into a line feed, so "\r0" became two lines and every row after
// it showed the line before it (FuzzSplitDiff found "\r0" shown as "").
// Such a hunk is shown without colours.
func sameRows(rows []DiffRow, texts []string) bool {
	k := 0
	for _, r := range rows {
		if r.Kind == "note" {
			continue
		}
		if k >= len(texts) || texts[k] != r.Text {
			return false
		}
		k++
	}
	return true
}

// tokenLines tokenizes src and renders each line's tokens as spans with
// chroma's classes; every token's text is escaped. texts are the lines'
// texts as the lexer read them.
func tokenLines(lexer chroma.Lexer, src string) (lines []template.HTML, texts []string, ok bool) {
	it, err := lexer.Tokenise(nil, src)
	if err != nil {
		return nil, nil, false
	}
	for _, line := range chroma.SplitTokensIntoLines(it.Tokens()) {
		var b, plain strings.Builder
		for _, tok := range line {
			text := strings.TrimRight(tok.Value, "\n")
			if text == "" {
				continue
			}
			plain.WriteString(text)
			if cls := tokenClass(tok.Type); cls != "" {
				b.WriteString(`<span class="` + cls + `">` + esc(text) + `</span>`)
			} else {
				b.WriteString(esc(text))
			}
		}
		lines = append(lines, template.HTML(b.String())) // #nosec: every token escaped
		texts = append(texts, plain.String())
	}
	return lines, texts, true
}

// tokenClass is chroma's CSS class of a token type (its own, else its
// nearest parent's).
func tokenClass(t chroma.TokenType) string {
	for t != 0 {
		if cls, ok := chroma.StandardTypes[t]; ok {
			return cls
		}
		t = t.Parent()
	}
	return ""
}
