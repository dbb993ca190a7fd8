// Package patch reads unified diffs (code/diff.patch) as a stream and
// refuses what git apply would accept but orch must not: unsafe paths,
// symlinks, submodules, mode changes, binary and combined diffs, a path
// touched twice.
package patch

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/orchdev/orch/internal/clip"
	"github.com/orchdev/orch/internal/safepath"
)

// Error says where and why a patch is refused. It matches
// ErrInvalid, and also Err (for example safepath.ErrUnsafe) when set.
type Error struct {
	Line   int // 1-based line of the patch; 0 when not tied to one line
	Reason string
	Err    error
}

func (e *Error) Error() string {
	msg := e.Reason
	if e.Line > 0 {
		msg = "line " + strconv.Itoa(e.Line) + ": " + msg
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns ErrInvalid and the cause, if any.
func (e *Error) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrInvalid, e.Err}
	}
	return []error{ErrInvalid}
}

// ErrInvalid: the patch cannot be parsed or is refused.
var ErrInvalid = errors.New("invalid diff")

// Entry is one file touched by a unified diff.
//
// Op is one of OpCreate, OpUpdate, OpDelete, OpRename. For an update both
// paths are set and equal; for a rename both are set (the old path goes
// away, so a scope check must look at both). A git copy ("copy from/to") is
// reported as a create of the new path: its source is not changed.
type Entry struct {
	OldPath string // "" for a created file
	NewPath string // "" for a deleted file
	Op      string // create, update, delete, rename
}

// Path returns the path the change lands on (the new path, or the old one
// for a deletion).
func (d Entry) Path() string {
	if d.NewPath != "" {
		return d.NewPath
	}
	return d.OldPath
}

// Diff is what a patch touches, as Parse reads it.
type Diff struct {
	Files []Entry
	Bytes int64
	// Added and Removed count the added and removed hunk lines.
	Added, Removed int
}

// Operations of a Entry.
const (
	OpCreate = "create"
	OpUpdate = "update"
	OpDelete = "delete"
	OpRename = "rename"
)

// maxHeaderLine bounds a line the parser must read whole (a header); hunk
// body lines may be of any length.
const maxHeaderLine = 64 << 10

type diffState uint8

const (
	stPreamble   diffState = iota // before the first file header: text is ignored
	stGitHeader                   // after "diff --git", reading extended headers
	stAfterMinus                  // after "--- ", expecting "+++ "
	stHunks                       // after a file header or a hunk
	stInHunk                      // inside a hunk body
)

// fileHeader collects what the header lines of one file say.
type fileHeader struct {
	line                 int // line of the first header line
	git                  bool
	gitA, gitB           string
	gitNamesOK           bool
	minus, plus          string // raw names of the ---/+++ lines
	haveMinus, havePlus  bool
	renameFrom, renameTo string
	copyFrom, copyTo     string
	newFile, deletedFile bool
	oldMode, newMode     string
	oldModeLine          int
	hunks                int
}

type diffParser struct {
	r       *bufio.Reader
	lineNo  int
	n       int64
	st      diffState
	cur     *fileHeader
	files   []Entry
	seen    map[string]int // path → line of the header that touched it
	content bool           // saw a non-blank line

	oldLeft, newLeft int64
	added, removed   int // hunk lines, over all files
	hunkStart        int
	prevHunkLine     bool // the previous line was a hunk body line
	minusFrom        diffState
	scratch          []byte
}

// Parse reads a unified diff (git-style "diff --git" with extended
// headers, or plain "---"/"+++" headers) line by line without holding it
// in memory, and returns the files it touches. Diff.Bytes is the number of
// bytes read.
//
// Text before the first file header is ignored. After it every line must
// belong to a header or a hunk, and hunk bodies must match the counts of
// their "@@ -a,b +c,d @@" header. Refused, with the line number: a hunk
// before any file header, malformed or mismatched hunks, symlinks (mode
// 120000), submodules (160000), any mode change, binary patches, combined
// diffs, inconsistent or unsafe names (after removing the a/ and b/
// prefixes every name must pass safepath.Check) and a path touched twice.
// A patch that is empty or only white space has no files and no error.
func Parse(r io.Reader) (Diff, error) {
	p := &diffParser{r: bufio.NewReaderSize(r, maxHeaderLine), seen: map[string]int{}}
	for {
		line, truncated, err := p.readLine()
		if len(line) > 0 || truncated {
			p.lineNo++
			if herr := p.handle(line, truncated); herr != nil {
				return Diff{}, herr
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return Diff{}, fmt.Errorf("read patch: %w", err)
		}
	}
	if err := p.finish(); err != nil {
		return Diff{}, err
	}
	if len(p.files) == 0 && p.content {
		return Diff{}, &Error{Reason: "no file header (diff --git or ---/+++) found"}
	}
	return Diff{Files: p.files, Bytes: p.n, Added: p.added, Removed: p.removed}, nil
}

// readLine returns the next line including its "\n". A line longer than the
// buffer is consumed whole but only its start is returned, with truncated
// set.
func (p *diffParser) readLine() (line []byte, truncated bool, err error) {
	line, err = p.r.ReadSlice('\n')
	p.n += int64(len(line))
	if !errors.Is(err, bufio.ErrBufferFull) {
		return line, false, err
	}
	p.scratch = append(p.scratch[:0], line[:256]...)
	for errors.Is(err, bufio.ErrBufferFull) {
		line, err = p.r.ReadSlice('\n')
		p.n += int64(len(line))
	}
	return p.scratch, true, err
}

func (p *diffParser) errorf(format string, args ...any) error {
	return &Error{Line: p.lineNo, Reason: fmt.Sprintf(format, args...)}
}

func (p *diffParser) handle(line []byte, truncated bool) error {
	if p.st == stInHunk {
		return p.hunkBody(line)
	}
	if !p.content && len(bytes.TrimSpace(line)) > 0 {
		p.content = true
	}
	if p.st == stAfterMinus {
		if bytes.HasPrefix(line, []byte("+++ ")) {
			if truncated {
				return p.errorf("header line longer than %d bytes", maxHeaderLine)
			}
			return p.plusLine(trimEOL(line))
		}
		if p.minusFrom != stPreamble {
			return p.errorf("a \"---\" line must be followed by a \"+++\" line")
		}
		// A "---" in the preamble that is not a file header: ignore it.
		p.st, p.cur = stPreamble, nil
	}
	l := trimEOL(line)
	if truncated && (p.st != stPreamble || isHeaderStart(l)) {
		return p.errorf("header line longer than %d bytes", maxHeaderLine)
	}
	switch {
	case bytes.HasPrefix(l, []byte("diff --git ")):
		if err := p.finish(); err != nil {
			return err
		}
		return p.gitLine(l)
	case bytes.HasPrefix(l, []byte("diff --cc ")), bytes.HasPrefix(l, []byte("diff --combined ")):
		return p.errorf("combined diffs are not supported")
	case bytes.HasPrefix(l, []byte("GIT binary patch")), bytes.HasPrefix(l, []byte("Binary files ")):
		return p.errorf("binary patches are not supported")
	case bytes.HasPrefix(l, []byte("--- ")):
		return p.minusLine(l)
	case bytes.HasPrefix(l, []byte("@@")):
		switch p.st {
		case stPreamble:
			return p.errorf("hunk before any file header")
		case stGitHeader:
			return p.errorf("hunk without \"---\" and \"+++\" lines")
		}
		return p.hunkHeader(l)
	case p.st == stGitHeader:
		return p.extendedHeader(l)
	case p.st == stHunks:
		switch {
		case len(l) > 0 && l[0] == '\\' && p.prevHunkLine:
			p.prevHunkLine = false
			return nil
		case len(bytes.TrimSpace(l)) == 0:
			p.prevHunkLine = false
			return nil
		}
		return p.errorf("unexpected line outside a hunk (do the hunk line counts match the @@ header?): %q", clip.Bytes(string(l), 60))
	}
	return nil // preamble text
}

func isHeaderStart(l []byte) bool {
	for _, pre := range []string{"diff ", "--- ", "+++ ", "@@"} {
		if bytes.HasPrefix(l, []byte(pre)) {
			return true
		}
	}
	return false
}

func (p *diffParser) gitLine(l []byte) error {
	p.cur = &fileHeader{line: p.lineNo, git: true}
	a, b, ok, err := gitHeaderNames(string(l[len("diff --git "):]))
	if err != nil {
		return p.errorf("malformed \"diff --git\" line: %v", err)
	}
	p.cur.gitA, p.cur.gitB, p.cur.gitNamesOK = a, b, ok
	p.st = stGitHeader
	return nil
}

func (p *diffParser) minusLine(l []byte) error {
	name, err := headerName(string(l[len("--- "):]))
	if err != nil {
		return p.errorf("malformed \"---\" line: %v", err)
	}
	if from := p.st; from != stGitHeader {
		if err := p.finish(); err != nil {
			return err
		}
		p.minusFrom = from
		p.cur = &fileHeader{line: p.lineNo}
	} else {
		p.minusFrom = stGitHeader
	}
	p.cur.minus, p.cur.haveMinus = name, true
	p.st = stAfterMinus
	return nil
}

func (p *diffParser) plusLine(l []byte) error {
	name, err := headerName(string(l[len("+++ "):]))
	if err != nil {
		return p.errorf("malformed \"+++\" line: %v", err)
	}
	p.cur.plus, p.cur.havePlus = name, true
	if p.cur.minus == devNull && p.cur.plus == devNull {
		return p.errorf("both names are /dev/null")
	}
	p.st = stHunks
	p.prevHunkLine = false
	return nil
}

// extendedHeader handles one line of a git header block.
func (p *diffParser) extendedHeader(l []byte) error {
	s := string(l)
	h := p.cur
	cut := func(prefix string) (string, bool) {
		if len(s) >= len(prefix) && s[:len(prefix)] == prefix {
			return s[len(prefix):], true
		}
		return "", false
	}
	name := func(v, what string) (string, error) {
		n, err := headerName(v)
		if err != nil {
			return "", p.errorf("malformed %q line: %v", what, err)
		}
		return n, nil
	}
	var err error
	if v, ok := cut("new file mode "); ok {
		h.newFile = true
		return p.checkMode(v, "new file mode")
	}
	if v, ok := cut("deleted file mode "); ok {
		h.deletedFile = true
		return p.checkMode(v, "deleted file mode")
	}
	if v, ok := cut("old mode "); ok {
		h.oldMode, h.oldModeLine = v, p.lineNo
		return p.checkMode(v, "old mode")
	}
	if v, ok := cut("new mode "); ok {
		if err := p.checkMode(v, "new mode"); err != nil {
			return err
		}
		if h.oldMode == "" {
			return p.errorf("\"new mode\" without \"old mode\": mode changes are not allowed")
		}
		if h.oldMode != v {
			return p.errorf("mode change from %s to %s is not allowed", h.oldMode, v)
		}
		h.newMode = v
		return nil
	}
	if v, ok := cut("index "); ok {
		return p.indexLine(v)
	}
	for _, pre := range []string{"similarity index ", "dissimilarity index "} {
		if _, ok := cut(pre); ok {
			return nil
		}
	}
	for _, f := range []struct {
		prefix string
		dst    *string
	}{
		{"rename from ", &h.renameFrom}, {"rename old ", &h.renameFrom},
		{"rename to ", &h.renameTo}, {"rename new ", &h.renameTo},
		{"copy from ", &h.copyFrom}, {"copy to ", &h.copyTo},
	} {
		if v, ok := cut(f.prefix); ok {
			if *f.dst, err = name(v, f.prefix[:len(f.prefix)-1]); err != nil {
				return err
			}
			return nil
		}
	}
	return p.errorf("unexpected line in the header of the file at line %d: %q", h.line, clip.Bytes(s, 60))
}

// indexLine checks "index <sha>..<sha>[ <mode>]".
func (p *diffParser) indexLine(v string) error {
	hashes, mode, hasMode := cutByte(v, ' ')
	if !bytes.Contains([]byte(hashes), []byte("..")) {
		return p.errorf("malformed \"index\" line")
	}
	if hasMode {
		return p.checkMode(mode, "index")
	}
	return nil
}

func cutByte(s string, sep byte) (before, after string, found bool) {
	if i := bytes.IndexByte([]byte(s), sep); i >= 0 {
		return s[:i], s[i+1:], true
	}
	return s, "", false
}

// checkMode accepts the modes of regular files only.
func (p *diffParser) checkMode(mode, what string) error {
	switch mode {
	case "100644", "100755":
		return nil
	case "120000":
		return p.errorf("%s %s: symbolic links are not allowed", what, mode)
	case "160000":
		return p.errorf("%s %s: submodules are not allowed", what, mode)
	}
	return p.errorf("%s %q: only regular file modes 100644 and 100755 are allowed", what, clip.Bytes(mode, 20))
}

// hunkHeader starts a hunk: "@@ -a[,b] +c[,d] @@[ text]".
func (p *diffParser) hunkHeader(l []byte) error {
	oldCount, newCount, ok := parseHunkHeader(l)
	if !ok {
		return p.errorf("malformed hunk header %q (expected \"@@ -a,b +c,d @@\")", clip.Bytes(string(l), 60))
	}
	h := p.cur
	creates := h.newFile || h.minus == devNull
	deletes := h.deletedFile || h.plus == devNull
	switch {
	case oldCount == 0 && newCount == 0:
		return p.errorf("empty hunk")
	case creates && oldCount != 0:
		return p.errorf("the file is created but the hunk has %d old line(s)", oldCount)
	case deletes && newCount != 0:
		return p.errorf("the file is deleted but the hunk has %d new line(s)", newCount)
	}
	h.hunks++
	p.oldLeft, p.newLeft = oldCount, newCount
	p.hunkStart = p.lineNo
	p.prevHunkLine = false
	p.st = stInHunk
	return nil
}

// parseHunkHeader returns the line counts of a hunk header.
func parseHunkHeader(l []byte) (oldCount, newCount int64, ok bool) {
	rest, ok := bytes.CutPrefix(l, []byte("@@ -"))
	if !ok {
		return 0, 0, false
	}
	var okOld, okNew bool
	if _, oldCount, rest, okOld = parseRange(rest); !okOld {
		return 0, 0, false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(" +")); !ok {
		return 0, 0, false
	}
	if _, newCount, rest, okNew = parseRange(rest); !okNew {
		return 0, 0, false
	}
	if !bytes.Equal(rest, []byte(" @@")) && !bytes.HasPrefix(rest, []byte(" @@ ")) {
		return 0, 0, false
	}
	return oldCount, newCount, true
}

// parseRange reads "start[,count]" (count defaults to 1).
func parseRange(b []byte) (start, count int64, rest []byte, ok bool) {
	start, b, ok = parseNumber(b)
	if !ok {
		return 0, 0, nil, false
	}
	count = 1
	if after, found := bytes.CutPrefix(b, []byte{','}); found {
		if count, b, ok = parseNumber(after); !ok {
			return 0, 0, nil, false
		}
	}
	return start, count, b, true
}

func parseNumber(b []byte) (int64, []byte, bool) {
	i := 0
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	if i == 0 || i > 9 {
		return 0, nil, false
	}
	n, err := strconv.ParseInt(string(b[:i]), 10, 64)
	return n, b[i:], err == nil
}

// hunkBody consumes one line of a hunk body.
func (p *diffParser) hunkBody(line []byte) error {
	c := byte('\n')
	if len(line) > 0 {
		c = line[0]
	}
	switch c {
	case ' ', '\n':
		if p.oldLeft > 0 && p.newLeft > 0 {
			p.oldLeft--
			p.newLeft--
			break
		}
		return p.mismatch("a context line")
	case '-':
		if p.oldLeft > 0 {
			p.oldLeft--
			p.removed++
			break
		}
		return p.mismatch("a removed line")
	case '+':
		if p.newLeft > 0 {
			p.newLeft--
			p.added++
			break
		}
		return p.mismatch("an added line")
	case '\\':
		if !p.prevHunkLine {
			return p.mismatch(`a "\" line that follows no hunk line`)
		}
		p.prevHunkLine = false
		return nil
	default:
		return p.mismatch(fmt.Sprintf("%q", clip.Bytes(string(trimEOL(line)), 40)))
	}
	p.prevHunkLine = true
	if p.oldLeft == 0 && p.newLeft == 0 {
		p.st = stHunks
	}
	return nil
}

func (p *diffParser) mismatch(got string) error {
	return p.errorf("the hunk at line %d does not match its header: expected %d more old and %d more new line(s), got %s",
		p.hunkStart, p.oldLeft, p.newLeft, got)
}

// finish closes the current file, if any, and records its entry.
func (p *diffParser) finish() error {
	h := p.cur
	switch {
	case p.st == stInHunk:
		return p.mismatch("the end of the file")
	case p.st == stAfterMinus && p.minusFrom == stPreamble:
		p.cur = nil // preamble text that looked like a header
		return nil
	case p.st == stAfterMinus:
		return p.errorf("a \"---\" line must be followed by a \"+++\" line")
	case h == nil:
		return nil
	}
	p.cur = nil
	e, err := h.entry()
	if err != nil {
		var de *Error
		if errors.As(err, &de) {
			if de.Line == 0 {
				de.Line = h.line
			}
			return de
		}
		return &Error{Line: h.line, Reason: err.Error()}
	}
	if !h.git && h.hunks == 0 {
		return &Error{Line: h.line, Reason: "file header without any hunk"}
	}
	if h.git && h.hunks == 0 && e.Op == OpUpdate && h.copyTo == "" {
		return &Error{Line: h.line, Reason: "file header of " + safepath.Quote(e.NewPath) + " without any change"}
	}
	for _, path := range []string{e.OldPath, e.NewPath} {
		if path == "" {
			continue
		}
		if first, dup := p.seen[path]; dup && first != h.line {
			return &Error{Line: h.line, Reason: fmt.Sprintf("%s is changed twice (also at line %d)", safepath.Quote(path), first)}
		}
		p.seen[path] = h.line
	}
	p.files = append(p.files, e)
	return nil
}
