package gitx

import (
	"bytes"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"
)

// checkPath reports whether p is a clean, relative, slash-separated path
// inside the work tree that does not enter .git.
func checkPath(p string) error {
	switch {
	case p == "" || p == ".":
		return fmt.Errorf("%w: %q is empty", ErrBadPath, p)
	case !utf8.ValidString(p) || strings.ContainsRune(p, 0):
		return fmt.Errorf("%w: %q is not valid UTF-8 text", ErrBadPath, p)
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("%w: %q is absolute", ErrBadPath, p)
	case path.Clean(p) != p:
		return fmt.Errorf("%w: %q is not clean (empty, . or .. element, or trailing /)", ErrBadPath, p)
	}
	for elem := range strings.SplitSeq(p, "/") {
		if elem == ".." {
			return fmt.Errorf("%w: %q leaves the repository", ErrBadPath, p)
		}
		if strings.EqualFold(elem, ".git") {
			return fmt.Errorf("%w: %q is inside .git", ErrBadPath, p)
		}
	}
	return nil
}

func checkPaths(paths []string) error {
	for _, p := range paths {
		if err := checkPath(p); err != nil {
			return err
		}
	}
	return nil
}

// checkRev refuses revisions git could read as an option.
func checkRev(rev string) error {
	if rev == "" || strings.HasPrefix(rev, "-") || strings.ContainsAny(rev, "\x00\n") {
		return fmt.Errorf("%w: %q", ErrBadRevision, rev)
	}
	return nil
}

// splitNUL splits NUL-terminated records (git's -z output). A missing final
// terminator is tolerated; empty records are dropped.
func splitNUL(b []byte) []string {
	var out []string
	for len(b) > 0 {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			i = len(b)
		}
		if i > 0 {
			out = append(out, string(b[:i]))
		}
		if i == len(b) {
			break
		}
		b = b[i+1:]
	}
	return out
}

// parentDirs returns the parent directories of p, shortest first:
// "a/b/c" gives ["a", "a/b"].
func parentDirs(p string) []string {
	var dirs []string
	for i := 0; i < len(p); i++ {
		if p[i] == '/' {
			dirs = append(dirs, p[:i])
		}
	}
	return dirs
}
