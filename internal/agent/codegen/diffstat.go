package codegen

import (
	"bufio"
	"bytes"
	"strconv"
	"strings"
)

// FileStat is one file's line counts in a patch.
type FileStat struct {
	Path    string `json:"path"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
	Binary  bool   `json:"binary,omitempty"`
}

// DiffStat counts added and removed lines per file of a git patch (as
// gitx.DiffFiles writes it: "diff --git a/X b/X" headers, no renames).
// Quoted names are unquoted.
func DiffStat(patch []byte) []FileStat {
	var out []FileStat
	var cur *FileStat
	inHunk := false
	sc := bufio.NewScanner(bytes.NewReader(patch))
	sc.Buffer(make([]byte, 64<<10), len(patch)+1)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "diff --git "):
			out = append(out, FileStat{Path: gitHeaderPath(line)})
			cur = &out[len(out)-1]
			inHunk = false
		case cur == nil:
		case strings.HasPrefix(line, "@@"):
			inHunk = true
		case strings.HasPrefix(line, "GIT binary patch"), strings.HasPrefix(line, "Binary files "):
			cur.Binary = true
		case !inHunk:
		case strings.HasPrefix(line, "+"):
			cur.Added++
		case strings.HasPrefix(line, "-"):
			cur.Removed++
		}
	}
	return out
}

// gitHeaderPath takes the b/ path of a "diff --git a/X b/X" line; a
// deleted file has the same name on both sides.
func gitHeaderPath(line string) string {
	rest := strings.TrimPrefix(line, "diff --git ")
	if strings.HasPrefix(rest, `"`) {
		// "a/x" "b/x": take the last quoted name.
		if i := strings.LastIndex(rest, ` "`); i > 0 {
			if s, err := strconv.Unquote(rest[i+1:]); err == nil {
				return strings.TrimPrefix(s, "b/")
			}
		}
		return rest
	}
	if strings.HasSuffix(rest, `"`) {
		if i := strings.LastIndex(rest, ` "`); i > 0 {
			if s, err := strconv.Unquote(rest[i+1:]); err == nil {
				return strings.TrimPrefix(s, "b/")
			}
		}
	}
	// Unquoted: both names are equal (no renames), so split in the middle.
	if n := len(rest); n%2 == 1 {
		a, b := rest[:n/2], rest[n/2+1:]
		if strings.TrimPrefix(a, "a/") == strings.TrimPrefix(b, "b/") {
			return strings.TrimPrefix(b, "b/")
		}
	}
	if i := strings.LastIndex(rest, " b/"); i >= 0 {
		return rest[i+3:]
	}
	return rest
}

// DiffTotals sums a diffstat.
func DiffTotals(stats []FileStat) (added, removed int) {
	for _, s := range stats {
		added += s.Added
		removed += s.Removed
	}
	return added, removed
}
