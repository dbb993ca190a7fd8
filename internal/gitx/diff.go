package gitx

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// tempIndexConfig keeps a throw-away index self-contained and plain.
var tempIndexConfig = []string{"core.splitIndex=false", "index.sparse=false", "core.fsmonitor=false"}

// diffConfig pins every setting that changes the text of a diff, so the
// output depends only on the contents.
var diffConfig = []string{
	"core.quotePath=true",
	"diff.noprefix=false",
	"diff.mnemonicPrefix=false",
	"diff.suppressBlankEmpty=false",
	"diff.orderFile=/dev/null",
}

// diffArgs are the flags of every patch gitx produces.
var diffArgs = []string{
	"--no-color", "--no-ext-diff", "--no-textconv", "--no-renames", "--no-relative",
	"--full-index", "--binary", "--unified=3", "--diff-algorithm=myers", "--indent-heuristic",
	"--src-prefix=a/", "--dst-prefix=b/",
}

// DiffFiles returns the patch that turns the tree of base into that tree with
// files (path → desired full content) written and deletes removed. git
// computes it in a temporary index (read-tree base, hash-object -w,
// update-index), so `git apply` accepts it against base; the work tree and
// the real index are never touched. The result is deterministic.
//
// New files get mode 100644; an updated file keeps its mode at base (an
// executable stays executable). Content is stored byte for byte (no clean
// filters or line-ending conversion). Text files give a plain text diff;
// only binary content gets git's binary patch format. Deleting a path that
// base does not have is a no-op. Errors: ErrBadPath for an invalid path or
// one named both in files and deletes; an error when a path is a directory,
// symlink or submodule at base, or would need a file to become a directory
// (or the reverse). An empty result means no change.
func (r *Repo) DiffFiles(ctx context.Context, base string, files map[string][]byte, deletes []string) ([]byte, error) {
	paths := slices.Sorted(maps.Keys(files))
	if err := checkPaths(paths); err != nil {
		return nil, err
	}
	if err := checkPaths(deletes); err != nil {
		return nil, err
	}
	deleted := make(map[string]bool, len(deletes))
	for _, p := range deletes {
		if _, ok := files[p]; ok {
			return nil, fmt.Errorf("%w: %q is both written and deleted", ErrBadPath, p)
		}
		deleted[p] = true
	}
	baseSHA, err := r.ResolveCommit(ctx, base)
	if err != nil {
		return nil, err
	}
	out, err := r.run(ctx, call{sub: "ls-tree", args: []string{"-r", "-t", "-z", "--full-tree", baseSHA}})
	if err != nil {
		return nil, fmt.Errorf("diff against %s: %w", base, err)
	}
	entries, err := parseLsTreeZ(out)
	if err != nil {
		return nil, fmt.Errorf("diff against %s: %w", base, err)
	}
	tree := make(map[string]TreeEntry, len(entries))
	for _, e := range entries {
		tree[e.Path] = e
	}
	if err := checkShape(paths, files, deleted, tree); err != nil {
		return nil, fmt.Errorf("diff against %s: %w", base, err)
	}

	tmp, err := os.MkdirTemp("", "gitx-diff-")
	if err != nil {
		return nil, fmt.Errorf("diff against %s: %w", base, err)
	}
	defer os.RemoveAll(tmp)
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(tmp, "index")}
	git := func(c call) ([]byte, error) {
		c.env = env
		c.config = append(slices.Clone(tempIndexConfig), c.config...)
		return r.run(ctx, c)
	}

	if _, err := git(call{sub: "read-tree", args: []string{baseSHA}}); err != nil {
		return nil, fmt.Errorf("diff against %s: %w", base, err)
	}
	shas, err := r.hashFiles(ctx, tmp, paths, files)
	if err != nil {
		return nil, fmt.Errorf("diff against %s: %w", base, err)
	}
	var info bytes.Buffer
	for i, p := range paths {
		mode := "100644"
		if e, ok := tree[p]; ok && e.Mode == "100755" {
			mode = "100755"
		}
		fmt.Fprintf(&info, "%s %s\t%s\x00", mode, shas[i], p)
	}
	for _, p := range deletes {
		if _, ok := tree[p]; ok {
			fmt.Fprintf(&info, "0 %s\t%s\x00", strings.Repeat("0", len(baseSHA)), p)
		}
	}
	if info.Len() > 0 {
		if _, err := git(call{sub: "update-index", args: []string{"-z", "--index-info"}, stdin: info.Bytes()}); err != nil {
			return nil, fmt.Errorf("diff against %s: %w", base, err)
		}
	}
	args := append([]string{"--cached"}, diffArgs...)
	args = append(args, baseSHA, "--")
	patch, err := git(call{sub: "diff", args: args, config: diffConfig})
	if err != nil {
		return nil, fmt.Errorf("diff against %s: %w", base, err)
	}
	return patch, nil
}

// checkShape refuses changes DiffFiles cannot express as plain file edits.
func checkShape(paths []string, files map[string][]byte, deleted map[string]bool, tree map[string]TreeEntry) error {
	for _, p := range paths {
		if e, ok := tree[p]; ok {
			switch e.Mode {
			case "100644", "100755":
			case "040000":
				return fmt.Errorf("%s is a directory at base", p)
			case "120000":
				return fmt.Errorf("%s is a symbolic link at base; refusing to replace it with a file", p)
			case "160000":
				return fmt.Errorf("%s is a submodule at base", p)
			default:
				return fmt.Errorf("%s has unsupported mode %s at base", p, e.Mode)
			}
		}
		for _, d := range parentDirs(p) {
			if _, ok := files[d]; ok {
				return fmt.Errorf("%s needs %s to be a directory, but it is written as a file", p, d)
			}
			if e, ok := tree[d]; ok && e.Type != "tree" && !deleted[d] {
				return fmt.Errorf("%s needs %s to be a directory, but it is a file at base (delete it too)", p, d)
			}
		}
	}
	for d := range deleted {
		if e, ok := tree[d]; ok && e.Type == "tree" {
			return fmt.Errorf("%s is a directory at base; delete its files instead", d)
		}
	}
	return nil
}

// hashFiles stores each content as a blob (`git hash-object -w --no-filters
// --stdin-paths`, one process for all files) and returns the blob ids in
// the order of paths.
func (r *Repo) hashFiles(ctx context.Context, tmp string, paths []string, files map[string][]byte) ([]string, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	dir := filepath.Join(tmp, "blobs")
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("hash files: %w", err)
	}
	var list bytes.Buffer
	for i, p := range paths {
		name := filepath.Join(dir, strconv.Itoa(i))
		if strings.ContainsAny(name, "\n\r") {
			return nil, fmt.Errorf("hash files: temporary path %q contains a line break", name)
		}
		if err := os.WriteFile(name, files[p], 0o600); err != nil {
			return nil, fmt.Errorf("hash %s: %w", p, err)
		}
		list.WriteString(name)
		list.WriteByte('\n')
	}
	out, err := r.run(ctx, call{sub: "hash-object", args: []string{"-w", "--no-filters", "--stdin-paths"}, stdin: list.Bytes()})
	if err != nil {
		return nil, fmt.Errorf("hash files: %w", err)
	}
	shas := strings.Fields(string(out))
	if len(shas) != len(paths) {
		return nil, fmt.Errorf("hash files: git returned %d ids for %d files", len(shas), len(paths))
	}
	for _, s := range shas {
		if !isHex(s) {
			return nil, fmt.Errorf("hash files: unexpected id %q", s)
		}
	}
	return shas, nil
}
