package evidence

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/fileid"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/patch"
)

// The cache file's format (docs/artifacts.md, "The observation cache"):
// lines of space-separated fields, paths Go-quoted, numbers in decimal:
//
//	orch observations 1
//	plan SINCE ID SHA256 TITLE NQ NF             then NQ and NF lines:
//	question ID TEXT BLOCKING ANSWER             ANSWER "-" for null, else quoted
//	planned PATH INTENT SUMMARY
//	diff SINCE ID SHA256 BYTES ADDED REMOVED N   then N lines:
//	entry OP OLDPATH NEWPATH
//	dir PATH SINCE ID                            task-relative folder
//	file PATH SINCE ID SHA256                    repository path under code/files/
//	agreed DIFF_SHA256 FILES_DIGEST BASE
//	hash PATH SINCE ID SHA256                    task-relative file hashed whole
//	log SINCE ID N                               transcript.jsonl, then N lines:
//	gate SEQ KIND FROM TO NH                     KIND transition, override or redo;
//	                                             then NH lines:
//	bound KEY SHA256                             KEY and SHA256 quoted
//	sum SHA256                                   of every byte before this line
//
// where ID is SIZE MTIME CTIME INODE DEVICE MODE. Anything else — another
// header, a bad field, a path that is not safe, a duplicate, a wrong sum —
// makes the whole file invalid: it is ignored and rebuilt.
const cacheHeader = "orch observations 1"

// errCache is wrapped by every reason a cache file is refused.
var errCache = errors.New("invalid observation cache")

// encodeObservations writes o in the cache file's format.
func encodeObservations(o observations) []byte {
	var b bytes.Buffer
	b.WriteString(cacheHeader + "\n")
	id := func(s stamp) string {
		return fmt.Sprintf("%d %d %d %d %d %d %d", s.Since, s.ID.Size, s.ID.Mtime, s.ID.Ctime, s.ID.Ino, s.ID.Dev, s.ID.Mode)
	}
	if p := o.Plan; p != nil {
		fmt.Fprintf(&b, "plan %s %s %s %d %d\n", id(p.stamp), p.SHA256, strconv.Quote(p.Title), len(p.Questions), len(p.FilePlan))
		for _, q := range p.Questions {
			answer := "-"
			if q.Answer != nil {
				answer = strconv.Quote(*q.Answer)
			}
			fmt.Fprintf(&b, "question %s %s %t %s\n", strconv.Quote(q.ID), strconv.Quote(q.Text), q.Blocking, answer)
		}
		for _, e := range p.FilePlan {
			fmt.Fprintf(&b, "planned %s %s %s\n", strconv.Quote(e.Path), e.Intent, strconv.Quote(e.Summary))
		}
	}
	if d := o.Diff; d != nil {
		fmt.Fprintf(&b, "diff %s %s %d %d %d %d\n", id(d.stamp), d.SHA256, d.Diff.Bytes, d.Diff.Added, d.Diff.Removed, len(d.Diff.Files))
		for _, e := range d.Diff.Files {
			fmt.Fprintf(&b, "entry %s %s %s\n", e.Op, strconv.Quote(e.OldPath), strconv.Quote(e.NewPath))
		}
	}
	for _, rel := range slices.Sorted(maps.Keys(o.Dirs)) {
		fmt.Fprintf(&b, "dir %s %s\n", strconv.Quote(rel), id(o.Dirs[rel]))
	}
	for _, p := range slices.Sorted(maps.Keys(o.Files)) {
		f := o.Files[p]
		fmt.Fprintf(&b, "file %s %s %s\n", strconv.Quote(p), id(f.stamp), f.SHA256)
	}
	for _, k := range o.Agreed {
		fmt.Fprintf(&b, "agreed %s %s %s\n", k.Diff, k.Files, k.Base)
	}
	for _, rel := range slices.Sorted(maps.Keys(o.Hashes)) {
		h := o.Hashes[rel]
		fmt.Fprintf(&b, "hash %s %s %s\n", strconv.Quote(rel), id(h.stamp), h.SHA256)
	}
	if l := o.Log; l != nil {
		fmt.Fprintf(&b, "log %s %d\n", id(l.stamp), len(l.Events))
		for _, e := range l.Events {
			kind := "transition"
			switch {
			case e.Redo:
				kind = "redo"
			case e.Override:
				kind = "override"
			}
			fmt.Fprintf(&b, "gate %d %s %s %s %d\n", e.Seq, kind, e.From, e.To, len(e.Hashes))
			for _, k := range slices.Sorted(maps.Keys(e.Hashes)) {
				fmt.Fprintf(&b, "bound %s %s\n", strconv.Quote(k), strconv.Quote(e.Hashes[k]))
			}
		}
	}
	sum := sha256.Sum256(b.Bytes())
	fmt.Fprintf(&b, "sum %s\n", hex.EncodeToString(sum[:]))
	return b.Bytes()
}

// parseObservations reads a cache file; any error means it is not to be
// trusted at all. Every `orch status` and board refresh reads it, so it
// allocates little beyond what it returns: the fields of a line are
// substrings of one copy of the file, kept in one reused slice.
func parseObservations(data []byte) (observations, error) {
	var o observations
	i := bytes.LastIndex(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	if i < 0 || !bytes.HasSuffix(data, []byte("\n")) {
		return o, fmt.Errorf("%w: no sum line", errCache)
	}
	body, last := data[:i+1], data[i+1:len(data)-1]
	sum := sha256.Sum256(body)
	var want [len("sum ") + 2*sha256.Size]byte
	copy(want[:], "sum ")
	hex.Encode(want[len("sum "):], sum[:])
	if !bytes.Equal(last, want[:]) {
		return o, fmt.Errorf("%w: the sum does not match", errCache)
	}
	text := string(body)
	lines := newLineReader(text)
	if header, _ := lines.next(); header != cacheHeader {
		return o, fmt.Errorf("%w: header %q, expected %q", errCache, header, cacheHeader)
	}
	var f []string // the current line's fields, reused
	for {
		line, ok := lines.next()
		if !ok {
			break
		}
		n := lines.n
		bad := func(what string) error { return fmt.Errorf("%w: line %d: %s", errCache, n, what) }
		var err error
		if f, err = splitFields(f[:0], line); err != nil {
			return o, bad(err.Error())
		}
		switch f[0] {
		case "plan":
			if o.Plan != nil || len(f) != 12 {
				return o, bad("a second or malformed plan line")
			}
			s, err := parseStamp(f[1:8])
			if err != nil || !isSHA256(f[8]) {
				return o, bad("malformed plan line")
			}
			nq, err1 := strconv.ParseInt(f[10], 10, 64)
			nf, err2 := strconv.ParseInt(f[11], 10, 64)
			if err1 != nil || err2 != nil || nq < 0 || nf < 0 || nq+nf > int64(lines.left()) {
				return o, bad("malformed plan counts")
			}
			p := &planObs{stamp: s, SHA256: f[8], Title: f[9]}
			if nq > 0 {
				p.Questions = make([]artifact.Question, 0, nq)
			}
			for range nq {
				line, _ := lines.next()
				n = lines.n
				q, err := splitFields(f[:0], line)
				if err != nil || len(q) != 5 || q[0] != "question" || (q[3] != "true" && q[3] != "false") {
					return o, bad("malformed question line")
				}
				var answer *string
				if q[4] != "-" || strings.HasSuffix(line, "\"-\"") {
					a := q[4]
					answer = &a
				}
				p.Questions = append(p.Questions, artifact.Question{ID: q[1], Text: q[2], Blocking: q[3] == "true", Answer: answer})
			}
			if nf > 0 {
				p.FilePlan = make([]artifact.FileEntry, 0, nf)
			}
			seen := make(map[string]struct{}, nf)
			for range nf {
				line, _ := lines.next()
				n = lines.n
				e, err := splitFields(f[:0], line)
				if err != nil || len(e) != 4 || e[0] != "planned" || !localPath(e[1]) ||
					(e[2] != "create" && e[2] != "update" && e[2] != "delete") {
					return o, bad("malformed planned line")
				}
				if _, dup := seen[e[1]]; dup {
					return o, bad("malformed planned line")
				}
				seen[e[1]] = struct{}{}
				p.FilePlan = append(p.FilePlan, artifact.FileEntry{Path: e[1], Intent: e[2], Summary: e[3]})
			}
			o.Plan = p
		case "diff":
			if o.Diff != nil || len(f) != 13 {
				return o, bad("a second or malformed diff line")
			}
			s, err := parseStamp(f[1:8])
			if err != nil || !isSHA256(f[8]) {
				return o, bad("malformed diff line")
			}
			var nums [4]int64
			for k := range nums {
				if nums[k], err = strconv.ParseInt(f[9+k], 10, 64); err != nil {
					return o, bad("malformed diff counts")
				}
			}
			if nums[3] > int64(lines.left()) {
				return o, bad("malformed diff counts")
			}
			d := &diffObs{stamp: s, SHA256: f[8], Diff: patch.Diff{Bytes: nums[0], Added: int(nums[1]), Removed: int(nums[2])}}
			if nums[3] > 0 {
				d.Diff.Files = make([]patch.Entry, 0, nums[3])
			}
			for range nums[3] {
				line, _ := lines.next()
				n = lines.n
				e, err := splitFields(f[:0], line)
				if err != nil || len(e) != 4 || e[0] != "entry" || !validEntry(e[1], e[2], e[3]) {
					return o, bad("malformed entry line")
				}
				d.Diff.Files = append(d.Diff.Files, patch.Entry{Op: e[1], OldPath: e[2], NewPath: e[3]})
			}
			o.Diff = d
		case "dir":
			if len(f) != 9 || !validDir(f[1]) {
				return o, bad("malformed dir line")
			}
			s, err := parseStamp(f[2:9])
			if err != nil {
				return o, bad(err.Error())
			}
			if o.Dirs == nil {
				o.Dirs = make(map[string]stamp, strings.Count(text, "\ndir "))
			}
			if _, dup := o.Dirs[f[1]]; dup {
				return o, bad("duplicate dir")
			}
			o.Dirs[f[1]] = s
		case "file":
			if o.Files == nil {
				o.Files = make(map[string]fileObs, strings.Count(text, "\nfile "))
			}
			if msg := addFileObs(o.Files, "file", f); msg != "" {
				return o, bad(msg)
			}
		case "agreed":
			if len(f) != 4 || !isSHA256(f[1]) || !isSHA256(f[2]) || !cacheable(f[3]) {
				return o, bad("malformed agreed line")
			}
			o.Agreed = append(o.Agreed, agreeKey{Diff: f[1], Files: f[2], Base: f[3]})
		case "hash":
			if o.Hashes == nil {
				o.Hashes = map[string]fileObs{}
			}
			if msg := addFileObs(o.Hashes, "hash", f); msg != "" {
				return o, bad(msg)
			}
		case "log":
			if o.Log != nil || len(f) != 9 {
				return o, bad("a second or malformed log line")
			}
			s, err := parseStamp(f[1:8])
			if err != nil {
				return o, bad(err.Error())
			}
			n, err := strconv.ParseInt(f[8], 10, 64)
			if err != nil || n < 0 || n > int64(lines.left()) {
				return o, bad("malformed log count")
			}
			l := &logObs{stamp: s, Events: make([]lifecycle.GateEvent, 0, n)}
			for range n {
				line, _ := lines.next()
				n := lines.n
				g, err := splitFields(f[:0], line)
				if err != nil || len(g) != 6 || g[0] != "gate" {
					return o, fmt.Errorf("%w: line %d: malformed gate line", errCache, n)
				}
				seq, err1 := strconv.ParseInt(g[1], 10, 64)
				nh, err2 := strconv.ParseInt(g[5], 10, 64)
				e := lifecycle.GateEvent{Seq: seq, Override: g[2] == "override", Redo: g[2] == "redo", From: lifecycle.Phase(g[3]), To: lifecycle.Phase(g[4])}
				if err1 != nil || err2 != nil || nh < 0 || nh > int64(lines.left()) || !e.From.Valid() || !e.To.Valid() ||
					(g[2] != "transition" && g[2] != "override" && g[2] != "redo") {
					return o, fmt.Errorf("%w: line %d: malformed gate line", errCache, n)
				}
				if nh > 0 {
					e.Hashes = make(map[string]string, nh)
				}
				for range nh {
					line, _ := lines.next()
					h, err := splitFields(f[:0], line)
					if err != nil || len(h) != 3 || h[0] != "bound" || h[2] == "" {
						return o, fmt.Errorf("%w: line %d: malformed bound line", errCache, lines.n)
					}
					if _, dup := e.Hashes[h[1]]; dup {
						return o, fmt.Errorf("%w: line %d: duplicate bound key", errCache, lines.n)
					}
					e.Hashes[h[1]] = h[2]
				}
				l.Events = append(l.Events, e)
			}
			o.Log = l
		default:
			return o, bad("unknown line " + strconv.Quote(f[0]))
		}
	}
	// Folders and files come together, with code/ and code/files/.
	if o.Dirs != nil || o.Files != nil {
		for _, rel := range []string{"code", artifact.CodeFilesDir} {
			if _, ok := o.Dirs[rel]; !ok {
				return o, fmt.Errorf("%w: no dir line for %s", errCache, rel)
			}
		}
		if o.Files == nil {
			o.Files = map[string]fileObs{}
		}
	}
	return o, nil
}

// lineReader hands out the lines of a text that ends in a newline, without
// the newline, counting them (n is the number of the last line given).
type lineReader struct {
	rest string
	n    int
}

func newLineReader(text string) *lineReader { return &lineReader{rest: text} }

func (r *lineReader) next() (string, bool) {
	if r.rest == "" {
		return "", false
	}
	r.n++
	j := strings.IndexByte(r.rest, '\n')
	if j < 0 {
		line := r.rest
		r.rest = ""
		return line, true
	}
	line := r.rest[:j]
	r.rest = r.rest[j+1:]
	return line, true
}

// left is at most the number of lines not handed out yet (the number of
// newlines left, which is exact for a text ending in one).
func (r *lineReader) left() int { return strings.Count(r.rest, "\n") }

// splitFields splits a line at single spaces, unquoting the fields that
// start with a double quote, and appends the fields to dst. Every field
// must be non-empty.
func splitFields(dst []string, line string) ([]string, error) {
	out := dst
	for line != "" {
		var field string
		if line[0] == '"' {
			// Most paths need no escapes: take them as they are.
			if j := strings.IndexAny(line[1:], "\"\\"); j >= 0 && line[1+j] == '"' {
				field, line = line[1:1+j], line[2+j:]
			} else {
				q, err := strconv.QuotedPrefix(line)
				if err != nil {
					return nil, errors.New("bad quoted field")
				}
				field, _ = strconv.Unquote(q)
				line = line[len(q):]
			}
		} else {
			j := strings.IndexByte(line, ' ')
			if j < 0 {
				j = len(line)
			}
			field, line = line[:j], line[j:]
			if field == "" {
				return nil, errors.New("empty field")
			}
		}
		out = append(out, field)
		if line != "" {
			if line[0] != ' ' || len(line) == 1 {
				return nil, errors.New("fields must be separated by one space")
			}
			line = line[1:]
		}
	}
	if len(out) == len(dst) {
		return nil, errors.New("empty line")
	}
	return out, nil
}

// errIdentity and errMode are parseStamp's errors.
var (
	errIdentity = errors.New("malformed identity")
	errMode     = errors.New("malformed mode")
)

// parseStamp reads SINCE SIZE MTIME CTIME INODE DEVICE MODE.
// addFileObs adds to m the observation of a "file" or "hash" line (kind):
// a path, its stamp and its sha256. It returns why the line is refused,
// or "".
func addFileObs(m map[string]fileObs, kind string, f []string) string {
	if len(f) != 10 || !localPath(f[1]) || !isSHA256(f[9]) {
		return "malformed " + kind + " line"
	}
	s, err := parseStamp(f[2:9])
	if err != nil {
		return err.Error()
	}
	if _, dup := m[f[1]]; dup {
		return "duplicate " + kind
	}
	m[f[1]] = fileObs{stamp: s, SHA256: f[9]}
	return ""
}

func parseStamp(f []string) (stamp, error) {
	bad := errIdentity
	if len(f) != 7 {
		return stamp{}, bad
	}
	var n [4]int64
	for i := range n {
		v, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return stamp{}, bad
		}
		n[i] = v
	}
	if n[1] < 0 {
		return stamp{}, bad
	}
	var u [3]uint64
	for i := range u {
		v, err := strconv.ParseUint(f[4+i], 10, 64)
		if err != nil {
			return stamp{}, bad
		}
		u[i] = v
	}
	if u[2] > 1<<32-1 {
		return stamp{}, errMode
	}
	return stamp{Since: n[0], ID: fileid.ID{Size: n[1], Mtime: n[2], Ctime: n[3], Ino: u[0], Dev: u[1], Mode: uint32(u[2])}}, nil
}

// validEntry checks a patch entry as patch.Parse would give it.
func validEntry(op, oldPath, newPath string) bool {
	safe := localPath
	switch op {
	case patch.OpCreate:
		return oldPath == "" && safe(newPath)
	case patch.OpDelete:
		return safe(oldPath) && newPath == ""
	case patch.OpUpdate:
		return safe(oldPath) && oldPath == newPath
	case patch.OpRename:
		return safe(oldPath) && safe(newPath)
	}
	return false
}

// validDir checks a task-relative folder of the code/files/ tree.
func validDir(rel string) bool {
	if rel == "code" || rel == artifact.CodeFilesDir {
		return true
	}
	p, ok := strings.CutPrefix(rel, artifact.CodeFilesDir+"/")
	return ok && localPath(p)
}

// localPath reports whether p is a clean relative slash-separated path of
// valid UTF-8 without "." or ".." elements (fs.ValidPath): what the cache
// holds was checked when it was observed, and a path of it is only ever
// looked at below the task folder.
func localPath(p string) bool {
	return p != "." && fs.ValidPath(p) && !strings.ContainsAny(p, "\x00\\")
}

func isSHA256(s string) bool {
	return len(s) == 64 && strings.Trim(s, "0123456789abcdef") == ""
}
