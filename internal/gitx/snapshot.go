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
	"syscall"
)

// pathspecChunk bounds how many paths go on one git command line.
const pathspecChunk = 500

// fileState is what a work-tree path held.
type fileState struct {
	kind   byte // 0 absent, 'f' regular file, 'l' symbolic link, 'o' other (left alone)
	perm   fs.FileMode
	data   []byte
	target string
}

func (a fileState) equal(b fileState) bool {
	return a.kind == b.kind && a.perm == b.perm && bytes.Equal(a.data, b.data) && a.target == b.target
}

// snapshot records the index entries and work-tree state of some paths so
// they can be put back exactly.
type snapshot struct {
	paths   []string
	index   map[string][]TreeEntry
	files   map[string]fileState
	newDirs []string // parent directories that did not exist, deepest first
}

func (r *Repo) takeSnapshot(ctx context.Context, paths []string) (*snapshot, error) {
	idx, err := r.indexEntries(ctx, paths)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(r.Dir)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	defer root.Close()
	s := &snapshot{paths: paths, index: idx, files: make(map[string]fileState, len(paths))}
	seenDir := map[string]bool{}
	for _, p := range paths {
		st, err := readState(root, p)
		if err != nil {
			return nil, fmt.Errorf("snapshot: %w", err)
		}
		s.files[p] = st
		for _, d := range parentDirs(p) {
			if seenDir[d] {
				continue
			}
			seenDir[d] = true
			if _, err := root.Lstat(d); errors.Is(err, fs.ErrNotExist) {
				s.newDirs = append(s.newDirs, d)
			}
		}
	}
	// Deepest first, so children are removed before their parents.
	slices.SortFunc(s.newDirs, func(a, b string) int {
		return strings.Count(b, "/") - strings.Count(a, "/")
	})
	return s, nil
}

func readState(root *os.Root, p string) (fileState, error) {
	fi, err := root.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) || isNotDir(err) {
		return fileState{}, nil
	}
	if err != nil {
		return fileState{}, err
	}
	switch {
	case fi.Mode().IsRegular():
		data, err := root.ReadFile(p)
		if err != nil {
			return fileState{}, err
		}
		return fileState{kind: 'f', perm: fi.Mode().Perm(), data: data}, nil
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := root.Readlink(p)
		if err != nil {
			return fileState{}, err
		}
		return fileState{kind: 'l', target: target}, nil
	default:
		return fileState{kind: 'o', perm: fi.Mode()}, nil
	}
}

// restoreSnapshot puts back the index entries and files that differ from
// the snapshot, and removes directories created since.
func (r *Repo) restoreSnapshot(ctx context.Context, s *snapshot) (err error) {
	cur, err := r.indexEntries(ctx, s.paths)
	if err != nil {
		return err
	}
	var info bytes.Buffer
	for _, p := range s.paths {
		if slices.Equal(cur[p], s.index[p]) {
			continue
		}
		zero := strings.Repeat("0", 40)
		if len(cur[p]) > 0 {
			zero = strings.Repeat("0", len(cur[p][0].SHA))
		}
		fmt.Fprintf(&info, "0 %s\t%s\x00", zero, p)
		for _, e := range s.index[p] {
			fmt.Fprintf(&info, "%s %s %d\t%s\x00", e.Mode, e.SHA, e.Stage, p)
		}
	}
	if info.Len() > 0 {
		if _, err := r.run(ctx, call{sub: "update-index", args: []string{"-z", "--index-info"}, stdin: info.Bytes()}); err != nil {
			return err
		}
	}
	defer func() {
		if info.Len() == 0 || err != nil {
			return
		}
		// Entries written by --index-info carry no stat data; refresh it
		// (contents are compared, never changed) so plumbing such as
		// `git diff-files` does not see the restored files as modified.
		if _, rerr := r.run(ctx, call{sub: "update-index", args: []string{"-q", "--refresh"}}); rerr != nil {
			err = rerr
		}
	}()

	root, err := os.OpenRoot(r.Dir)
	if err != nil {
		return err
	}
	defer root.Close()
	var errs []error
	for _, p := range s.paths {
		if err := restoreFile(root, p, s.files[p]); err != nil {
			errs = append(errs, fmt.Errorf("restore %s: %w", p, err))
		}
	}
	for _, d := range s.newDirs {
		// Only an empty directory is removed; one something else filled is kept.
		if fi, err := root.Lstat(d); err == nil && fi.IsDir() {
			_ = root.Remove(d)
		}
	}
	return errors.Join(errs...)
}

func restoreFile(root *os.Root, p string, want fileState) error {
	have, err := readState(root, p)
	if err != nil {
		return err
	}
	if have.equal(want) || want.kind == 'o' {
		return nil
	}
	if have.kind != 0 {
		if err := root.Remove(p); err != nil {
			return err
		}
	}
	switch want.kind {
	case 'f':
		if err := mkParents(root, p); err != nil {
			return err
		}
		f, err := root.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, want.perm)
		if err != nil {
			return err
		}
		_, werr := f.Write(want.data)
		cerr := f.Close()
		if werr != nil || cerr != nil {
			return errors.Join(werr, cerr)
		}
		return root.Chmod(p, want.perm) // undo the umask
	case 'l':
		if err := mkParents(root, p); err != nil {
			return err
		}
		return root.Symlink(want.target, p)
	}
	return nil
}

func mkParents(root *os.Root, p string) error {
	if i := strings.LastIndexByte(p, '/'); i > 0 {
		return root.MkdirAll(p[:i], 0o777)
	}
	return nil
}

// isNotDir reports an error from a path whose parent is not a directory.
func isNotDir(err error) bool { return errors.Is(err, syscall.ENOTDIR) }

// indexEntries returns the index entries (all stages) of each of paths.
func (r *Repo) indexEntries(ctx context.Context, paths []string) (map[string][]TreeEntry, error) {
	want := make(map[string]bool, len(paths))
	for _, p := range paths {
		want[p] = true
	}
	res := make(map[string][]TreeEntry, len(paths))
	for chunk := range slices.Chunk(paths, pathspecChunk) {
		args := append([]string{"-s", "-z", "--"}, chunk...)
		out, err := r.run(ctx, call{sub: "ls-files", args: args})
		if err != nil {
			return nil, fmt.Errorf("index entries: %w", err)
		}
		entries, err := parseLsFilesStageZ(out)
		if err != nil {
			return nil, fmt.Errorf("index entries: %w", err)
		}
		for _, e := range entries {
			if want[e.Path] {
				res[e.Path] = append(res[e.Path], e)
			}
		}
	}
	return res, nil
}
