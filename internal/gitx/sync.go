package gitx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
)

// SyncResult reports what SyncPaths did.
type SyncResult struct {
	// Updated lists the paths whose index entry or work-tree file was
	// brought to the new commit.
	Updated []string
	// Left lists the paths whose file (or staged entry) matched neither
	// the old nor the new commit: the user's own edit, or their untracked
	// or ignored file at a path the commit creates. Their file is kept;
	// an index entry that still matched the old commit follows the new one.
	Left []string
}

// SyncPaths brings the index entries and work-tree files of paths from
// commit oldC to commit newC after a ref moved from one to the other,
// without touching any other path. For each path, the index entry (and
// then the file) is rewritten only when it still matches oldC; one that
// already matches newC is left as is, and one that matches neither (the
// user's own change) is never overwritten and is reported in Left. It is
// idempotent: a second call after an interrupted one finishes the job.
//
// Index entries are written with `git update-index --index-info`, files
// with `git checkout-index -f -u` (which also refreshes their stat data in
// the index); a path absent from newC is removed from the work tree, with
// the directories that become empty.
func (r *Repo) SyncPaths(ctx context.Context, oldC, newC string, paths []string) (SyncResult, error) {
	var res SyncResult
	if err := checkPaths(paths); err != nil {
		return res, fmt.Errorf("sync: %w", err)
	}
	if len(paths) == 0 {
		return res, nil
	}
	oldE, err := r.treeEntries(ctx, oldC, paths)
	if err != nil {
		return res, err
	}
	newE, err := r.treeEntries(ctx, newC, paths)
	if err != nil {
		return res, err
	}
	idx, err := r.indexEntries(ctx, paths)
	if err != nil {
		return res, fmt.Errorf("sync: %w", err)
	}
	wt, err := r.workTreeBlobs(ctx, paths)
	if err != nil {
		return res, fmt.Errorf("sync: %w", err)
	}
	var info bytes.Buffer
	var checkout, remove []string
	for _, p := range paths {
		o, n := oldE[p], newE[p]
		if o == n {
			continue
		}
		var ie string // "mode sha" of the stage-0 entry, "" when absent, "!" when unmerged
		for _, e := range idx[p] {
			if e.Stage != 0 {
				ie = "!"
				break
			}
			ie = e.Mode + " " + e.SHA
		}
		w := wt[p]
		idxNew, idxOld := ie == n, ie == o
		wtNew, wtOld := w == blobOf(n), w == blobOf(o)
		if !idxNew && !idxOld {
			// The user staged their own version: index and file are theirs.
			res.Left = append(res.Left, p)
			continue
		}
		if !wtNew && !wtOld {
			// The file is the user's own (an edit, or an untracked or
			// ignored file at a path the commit creates): it stays as it
			// is, but the index follows the commit, so that git status
			// shows the user's file as a change against the commit rather
			// than the commit as a staged revert.
			res.Left = append(res.Left, p)
			if idxOld {
				writeIndexEntry(&info, p, n)
			}
			continue
		}
		if idxNew && wtNew {
			continue
		}
		res.Updated = append(res.Updated, p)
		if !idxNew {
			writeIndexEntry(&info, p, n)
		}
		switch {
		case n == "" && w != "":
			remove = append(remove, p)
		case n != "":
			// Also when the file is already new: the rewrite refreshes
			// the entry's stat data.
			checkout = append(checkout, p)
		}
	}
	if info.Len() > 0 {
		if _, err := r.run(ctx, call{sub: "update-index", args: []string{"-z", "--index-info"}, stdin: info.Bytes()}); err != nil {
			return res, fmt.Errorf("sync index of %s: %w", strings.Join(slices.Concat(res.Updated, res.Left), ", "), err)
		}
	}
	if len(checkout) > 0 {
		if _, err := r.run(ctx, call{sub: "checkout-index", args: []string{"-f", "-u", "-z", "--stdin"}, stdin: nulJoin(checkout)}); err != nil {
			return res, fmt.Errorf("sync files %s: %w", strings.Join(checkout, ", "), err)
		}
	}
	if len(remove) > 0 {
		if err := removeFiles(r.Dir, remove); err != nil {
			return res, fmt.Errorf("sync: %w", err)
		}
	}
	return res, nil
}

// writeIndexEntry adds the --index-info line that sets path p's stage-0
// entry to tree entry e ("mode sha"), or removes it when e is "".
func writeIndexEntry(info *bytes.Buffer, p, e string) {
	if e == "" {
		fmt.Fprintf(info, "0 %s\t%s\x00", strings.Repeat("0", 40), p)
		return
	}
	mode, sha, _ := strings.Cut(e, " ")
	fmt.Fprintf(info, "%s %s 0\t%s\x00", mode, sha, p)
}

// blobOf turns a "mode sha" tree entry into the work-tree key that matches
// it in workTreeBlobs: "f sha" for files, "l sha" for links, "" for none.
func blobOf(e string) string {
	if e == "" {
		return ""
	}
	mode, sha, _ := strings.Cut(e, " ")
	if mode == "120000" {
		return "l " + sha
	}
	if strings.HasPrefix(mode, "100") {
		return "f " + sha
	}
	return "? " + sha
}

// treeEntries returns "mode sha" for each of paths present in commit c.
func (r *Repo) treeEntries(ctx context.Context, c string, paths []string) (map[string]string, error) {
	sha, err := r.ResolveCommit(ctx, c)
	if err != nil {
		return nil, err
	}
	res := make(map[string]string, len(paths))
	for chunk := range slices.Chunk(paths, pathspecChunk) {
		out, err := r.run(ctx, call{sub: "ls-tree", args: append([]string{"-z", "--full-tree", sha, "--"}, chunk...)})
		if err != nil {
			return nil, fmt.Errorf("entries of %.12s: %w", sha, err)
		}
		entries, err := parseLsTreeZ(out)
		if err != nil {
			return nil, fmt.Errorf("entries of %.12s: %w", sha, err)
		}
		for _, e := range entries {
			if e.Type == "blob" {
				res[e.Path] = e.Mode + " " + e.SHA
			}
		}
	}
	return res, nil
}

// workTreeBlobs returns, for each of paths, "f SHA" for a regular file
// (hashed as git would store it, `git hash-object`, attributes applied),
// "l SHA" for a symbolic link (its target hashed), "o" for anything else,
// and "" when absent.
func (r *Repo) workTreeBlobs(ctx context.Context, paths []string) (map[string]string, error) {
	root, err := os.OpenRoot(r.Dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	res := make(map[string]string, len(paths))
	var files []string
	for _, p := range paths {
		fi, err := root.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist) || isNotDir(err):
			res[p] = ""
		case err != nil:
			return nil, err
		case fi.Mode().IsRegular():
			files = append(files, p)
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := root.Readlink(p)
			if err != nil {
				return nil, err
			}
			out, err := r.run(ctx, call{sub: "hash-object", args: []string{"-t", "blob", "--no-filters", "--stdin"}, stdin: []byte(target)})
			if err != nil {
				return nil, err
			}
			res[p] = "l " + strings.TrimSpace(string(out))
		default:
			res[p] = "o"
		}
	}
	for chunk := range slices.Chunk(files, pathspecChunk) {
		out, err := r.run(ctx, call{sub: "hash-object", args: append([]string{"--"}, chunk...)})
		if err != nil {
			return nil, fmt.Errorf("hash files: %w", err)
		}
		sums := strings.Fields(string(out))
		if len(sums) != len(chunk) {
			return nil, fmt.Errorf("hash files: git printed %d ids for %d files", len(sums), len(chunk))
		}
		for i, p := range chunk {
			res[p] = "f " + sums[i]
		}
	}
	return res, nil
}

// removeFiles removes paths below dir and then the parent folders that
// became empty, as git does when a checkout deletes a file.
func removeFiles(dir string, paths []string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, p := range paths {
		if err := root.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		dirs := parentDirs(p)
		for i := len(dirs) - 1; i >= 0; i-- {
			// Deepest first; a non-empty folder stops the climb.
			if err := root.Remove(dirs[i]); err != nil {
				break
			}
		}
	}
	return nil
}
