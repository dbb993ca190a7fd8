package gitx

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
)

// revParsePaths answers each query (the arguments of one `git rev-parse`
// option that prints a path, like {"--git-path", "objects"}) with that
// path; prefix options (like "--path-format=absolute") apply to all. A
// path may hold any byte but NUL, a line break and trailing spaces
// included: git prints each path raw on its own line, so the answers are
// read in one call when they make exactly one line each, and otherwise
// (some path holds a line break) one call per query, whose output is the
// path and one line break.
func (r *Repo) revParsePaths(ctx context.Context, prefix []string, queries ...[]string) ([]string, error) {
	args := slices.Clone(prefix)
	for _, q := range queries {
		args = append(args, q...)
	}
	out, err := r.run(ctx, call{sub: "rev-parse", args: args})
	if err != nil {
		return nil, err
	}
	if !bytes.HasSuffix(out, []byte("\n")) {
		return nil, fmt.Errorf("git rev-parse %s: unexpected output %q", strings.Join(args, " "), out)
	}
	out = out[:len(out)-1]
	if len(queries) == 1 {
		return []string{string(out)}, nil
	}
	if lines := strings.Split(string(out), "\n"); len(lines) == len(queries) {
		return lines, nil
	}
	res := make([]string, len(queries))
	for i, q := range queries {
		one, err := r.revParsePaths(ctx, prefix, q)
		if err != nil {
			return nil, err
		}
		res[i] = one[0]
	}
	return res, nil
}

// GitDirs returns the absolute git directory and common directory of the
// work tree (for a linked worktree, its folder under the main repository's
// .git/worktrees and that .git), read raw by revParsePaths: either may
// hold a colon or a line break.
func (r *Repo) GitDirs(ctx context.Context) (gitDir, commonDir string, err error) {
	dirs, err := r.revParsePaths(ctx, []string{"--path-format=absolute"}, []string{"--git-dir"}, []string{"--git-common-dir"})
	if err != nil {
		return "", "", err
	}
	return dirs[0], dirs[1], nil
}
