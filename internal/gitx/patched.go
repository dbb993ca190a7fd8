package gitx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// NotRegularError says a path a patch is applied to is not a regular file
// in the commit (a symbolic link, a submodule or a folder).
type NotRegularError struct {
	Path string
	Mode string // the tree entry's mode, e.g. "120000"
}

func (e *NotRegularError) Error() string {
	what := map[string]string{"120000": "a symbolic link", "160000": "a submodule", "040000": "a folder"}[e.Mode]
	if what == "" {
		what = "of mode " + e.Mode
	}
	return fmt.Sprintf("%s is %s in the commit, not a regular file", e.Path, what)
}

// PatchedFiles applies patch to the files of commit and returns the content
// each of paths has afterwards; a path missing from the result does not
// exist once the patch is applied (the patch deletes it, or neither the
// commit nor the patch has it).
//
// Only those paths are read from the commit (`ls-tree`, `cat-file
// --batch`) into a private temporary folder, and `git apply` runs there,
// outside any repository. Nothing is written to the repository: not its
// work tree, its index, HEAD or its object store. A path that is a symbolic
// link, a submodule or a folder in the commit is a *NotRegularError; a
// patch that does not apply gives an *ApplyError (errors.Is
// ErrApplyConflict); one git cannot parse gives ErrInvalidPatch; a commit
// that does not exist gives ErrBadRevision; a file larger than maxBytes
// (in the commit or after the patch) is an error. An empty patch returns
// the commit's files.
func (r *Repo) PatchedFiles(ctx context.Context, commit string, patch []byte, paths []string, maxBytes int64) (map[string][]byte, error) {
	if err := checkPaths(paths); err != nil {
		return nil, err
	}
	sha, err := r.ResolveCommit(ctx, commit)
	if err != nil {
		return nil, err
	}
	fail := func(err error) error { return fmt.Errorf("apply the patch to %.12s: %w", sha, err) }
	var entries []TreeEntry
	for chunk := range slices.Chunk(paths, pathspecChunk) {
		out, err := r.run(ctx, call{sub: "ls-tree", args: append([]string{"-z", "--full-tree", sha, "--"}, chunk...)})
		if err != nil {
			return nil, fail(err)
		}
		es, err := parseLsTreeZ(out)
		if err != nil {
			return nil, fail(err)
		}
		entries = append(entries, es...)
	}
	want := make(map[string]bool, len(paths))
	for _, p := range paths {
		want[p] = true
	}
	var blobs []TreeEntry
	for _, e := range entries {
		if !want[e.Path] {
			continue
		}
		if e.Mode != "100644" && e.Mode != "100755" {
			return nil, &NotRegularError{Path: e.Path, Mode: e.Mode}
		}
		blobs = append(blobs, e)
	}

	tmp, err := os.MkdirTemp("", "gitx-patched-")
	if err != nil {
		return nil, fail(err)
	}
	defer os.RemoveAll(tmp)
	work := filepath.Join(tmp, "work")
	if err := os.Mkdir(work, 0o700); err != nil {
		return nil, fail(err)
	}
	root, err := os.OpenRoot(work)
	if err != nil {
		return nil, fail(err)
	}
	defer root.Close()
	shas := make([]string, len(blobs))
	for i, b := range blobs {
		shas[i] = b.SHA
	}
	err = r.CatBlobs(ctx, shas, maxBytes, func(i int, data []byte, size int64) error {
		b := blobs[i]
		if data == nil && size > 0 {
			return fmt.Errorf("%s: %d bytes in the commit, more than %d", b.Path, size, maxBytes)
		}
		if err := root.MkdirAll(filepath.Dir(filepath.FromSlash(b.Path)), 0o700); err != nil {
			return err
		}
		perm := fs.FileMode(0o644)
		if b.Mode == "100755" {
			perm = 0o755
		}
		return root.WriteFile(filepath.FromSlash(b.Path), data, perm)
	})
	if err != nil {
		return nil, fail(err)
	}

	if len(bytes.TrimSpace(patch)) > 0 {
		// git apply outside any repository works like patch(1) on the
		// folder; the ceiling keeps git from finding a repository above it.
		outside := &Repo{Dir: work, Env: r.Env}
		c := call{sub: "apply", args: applyArgs(false, ApplyOptions{}), config: applyConfig, stdin: patch,
			env: []string{"GIT_CEILING_DIRECTORIES=" + tmp}}
		if _, err := outside.run(ctx, c); err != nil {
			return nil, r.applyFailure(ctx, patch, err, false, nil)
		}
	}

	res := make(map[string][]byte, len(paths))
	for _, p := range paths {
		data, ok, err := readPatched(root, p, maxBytes)
		if err != nil {
			return nil, fail(err)
		}
		if ok {
			res[p] = data
		}
	}
	return res, nil
}

// readPatched reads a file of the patched folder: false when it does not
// exist.
func readPatched(root *os.Root, p string, maxBytes int64) ([]byte, bool, error) {
	rel := filepath.FromSlash(p)
	fi, err := root.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) || isNotDir(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if !fi.Mode().IsRegular() {
		return nil, false, &NotRegularError{Path: p, Mode: fmt.Sprintf("%o", fi.Mode())}
	}
	if fi.Size() > maxBytes {
		return nil, false, fmt.Errorf("%s: %d bytes after the patch, more than %d", p, fi.Size(), maxBytes)
	}
	f, err := root.Open(rel)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxBytes+1))
	if err != nil {
		return nil, false, err
	}
	return data, true, nil
}
