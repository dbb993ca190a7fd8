package hostile

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Snapshot records everything below root, without following symbolic
// links: each slash-separated relative path (root itself is ".") maps to
// its type and permissions, and for a regular file its size and sha256,
// for a link its target. Paths listed in skip (relative to root, slash
// separated) are left out with everything below them. Taken before and
// after an entry point runs, two snapshots prove that nothing outside the
// folders the entry point may write was created, changed or removed.
func Snapshot(root string, skip ...string) (map[string]string, error) {
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p != root {
				return nil // removed while walking: the next snapshot shows it
			}
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if slices.Contains(skip, rel) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		desc := fmt.Sprintf("%s %v", kindOf(fi.Mode()), fi.Mode().Perm())
		switch {
		case fi.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			desc += fmt.Sprintf(" %d bytes %s", len(data), hex.EncodeToString(sum[:8]))
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			desc += " -> " + target
		}
		out[rel] = desc
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", root, err)
	}
	return out, nil
}

func kindOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "dir"
	case m.IsRegular():
		return "file"
	case m&fs.ModeSymlink != 0:
		return "link"
	}
	return "special"
}

// Changes lists, sorted, what differs between two snapshots: "+ path
// (desc)" for what appeared, "- path" for what vanished and "~ path" for
// what changed. Modification times are not compared.
func Changes(before, after map[string]string) []string {
	var out []string
	for p, a := range after {
		b, ok := before[p]
		switch {
		case !ok:
			out = append(out, "+ "+p+" ("+a+")")
		case a != b:
			out = append(out, "~ "+p+" ("+b+" → "+a+")")
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			out = append(out, "- "+p)
		}
	}
	slices.Sort(out)
	return out
}

// Creatable reports whether p can be created below a folder as it is
// written, element by element, without meaning something else: every
// element is a plain file name (not empty, ".", "..", and without NUL)
// and p is not absolute. Entry-point tests use it to decide which corpus
// paths to create on disk.
func Creatable(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || strings.ContainsRune(p, 0) {
		return false
	}
	for _, e := range strings.Split(p, "/") {
		if e == "" || e == "." || e == ".." {
			return false
		}
	}
	return true
}

// JSONString quotes s as a JSON string, escaping only '"', '\' and bytes
// below 0x20: invalid UTF-8 stays as raw bytes, so a document built with it
// carries exactly the bytes of s (encoding/json would replace them).
func JSONString(s string) string {
	return quote(s, func(c byte) string {
		if c < 0x20 {
			return fmt.Sprintf(`\u%04x`, c)
		}
		return ""
	})
}

// GitQuote writes a path for a diff header: as it is when it has only
// printable ASCII other than space, '"' and '\'; otherwise C-quoted as git
// may quote it, every byte outside printable ASCII as an octal escape.
func GitQuote(s string) string {
	plain := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c >= 0x7f || c == '"' || c == '\\' {
			plain = false
		}
	}
	if plain {
		return s
	}
	return quote(s, func(c byte) string {
		if c < 0x20 || c >= 0x7f {
			return fmt.Sprintf(`\%03o`, c)
		}
		return ""
	})
}

// quote puts s between double quotes, with a backslash before '"' and '\'
// and each byte for which escape returns text replaced by that text.
func quote(s string, escape func(c byte) string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '"' || c == '\\' {
			b.WriteByte('\\')
			b.WriteByte(c)
		} else if e := escape(c); e != "" {
			b.WriteString(e)
		} else {
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
