package gitx

import (
	"context"
	"fmt"
	"strings"
)

// StatusEntry is one record of `git status --porcelain=v1 -z`.
type StatusEntry struct {
	X, Y byte   // index and work-tree status letters ('?' for untracked)
	Path string // current path
	Orig string // source of a rename or copy, else ""
}

// parseStatusZ parses `git status --porcelain=v1 -z` output. In that format
// each record is "XY PATH\0"; a rename or copy is followed by one more field,
// "ORIG_PATH\0".
func parseStatusZ(b []byte) ([]StatusEntry, error) {
	fields := strings.Split(string(b), "\x00")
	if len(fields) > 0 && fields[len(fields)-1] == "" {
		fields = fields[:len(fields)-1]
	}
	var out []StatusEntry
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if len(f) < 4 || f[2] != ' ' {
			return nil, fmt.Errorf("status record %q: want \"XY path\"", f)
		}
		e := StatusEntry{X: f[0], Y: f[1], Path: f[3:]}
		if isRenameOrCopy(e.X) || isRenameOrCopy(e.Y) {
			if i+1 >= len(fields) || fields[i+1] == "" {
				return nil, fmt.Errorf("status record %q: rename without its source path", f)
			}
			i++
			e.Orig = fields[i]
		}
		out = append(out, e)
	}
	return out, nil
}

func isRenameOrCopy(c byte) bool { return c == 'R' || c == 'C' }

// DirtyPaths returns those of paths that have staged or unstaged changes or
// are untracked (ignored files are not reported). A rename counts for both
// its source and its destination. A path also counts as dirty when it is a
// directory holding a dirty path. The result keeps the order of paths,
// without duplicates.
func (r *Repo) DirtyPaths(ctx context.Context, paths []string) ([]string, error) {
	if err := checkPaths(paths); err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, nil
	}
	out, err := r.run(ctx, call{sub: "status", args: []string{
		"--porcelain=v1", "-z", "--untracked-files=all", "--renames", "--ignore-submodules=none",
	}})
	if err != nil {
		return nil, fmt.Errorf("status of %s: %w", r.Dir, err)
	}
	entries, err := parseStatusZ(out)
	if err != nil {
		return nil, fmt.Errorf("status of %s: %w", r.Dir, err)
	}
	dirty := make(map[string]bool, 2*len(entries))
	mark := func(p string) {
		dirty[p] = true
		for _, d := range parentDirs(p) {
			dirty[d] = true
		}
	}
	for _, e := range entries {
		if e.X == '!' {
			continue
		}
		mark(strings.TrimSuffix(e.Path, "/"))
		if e.Orig != "" {
			mark(e.Orig)
		}
	}
	var res []string
	seen := make(map[string]bool, len(paths))
	for _, p := range paths {
		if dirty[p] && !seen[p] {
			seen[p] = true
			res = append(res, p)
		}
	}
	return res, nil
}
