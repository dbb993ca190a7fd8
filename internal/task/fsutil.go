package task

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// tmpInfix marks temporary files written by writeFileAtomic: a file
// "state.json" is written as "state.json.tmp-<random>" first.
const tmpInfix = ".tmp-"

// writeAll writes data with one call. A write that reports fewer bytes
// without an error is io.ErrShortWrite: it is never continued, because the
// callers cannot tell what reached the file.
func writeAll(f file, data []byte) error {
	n, err := f.Write(data)
	if err == nil && n != len(data) {
		err = io.ErrShortWrite
	}
	return err
}

// syncDir fsyncs a directory so that entries created, renamed or removed in
// it are durable. A failed fsync is returned, never retried.
func syncDir(fsys fileSystem, dir string) error {
	d, err := fsys.OpenFile(dir, os.O_RDONLY, 0)
	if err != nil {
		return fmt.Errorf("open folder %s for fsync: %w", dir, err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("fsync folder %s: %w", dir, err)
	}
	return nil
}

// writeFileAtomic replaces dir/name with data durably: a temporary file in
// the same folder is written, fsynced and renamed over the target, then the
// folder is fsynced. Readers see either the old or the new content. When it
// fails before the rename, the target is untouched and the temporary file
// is removed (or, if even that fails, left for Recover or CleanStrays);
// when only the final folder fsync fails, the target already has the new
// content but its durability is unknown, and the error says so.
func writeFileAtomic(fsys fileSystem, dir, name string, data []byte, perm fs.FileMode) error {
	f, err := fsys.CreateTemp(dir, name+tmpInfix+"*")
	if err != nil {
		return fmt.Errorf("create temporary file for %s: %w", filepath.Join(dir, name), err)
	}
	tmp := f.Name()
	abandon := func(err error, closed bool) error {
		if !closed {
			f.Close()
		}
		fsys.Remove(tmp)
		return err
	}
	if err := f.Chmod(perm); err != nil {
		return abandon(fmt.Errorf("chmod %s: %w", tmp, err), false)
	}
	if err := writeAll(f, data); err != nil {
		return abandon(fmt.Errorf("write %s: %w", tmp, err), false)
	}
	if err := f.Sync(); err != nil {
		return abandon(fmt.Errorf("fsync %s: %w", tmp, err), false)
	}
	if err := f.Close(); err != nil {
		return abandon(fmt.Errorf("close %s: %w", tmp, err), true)
	}
	target := filepath.Join(dir, name)
	if err := fsys.Rename(tmp, target); err != nil {
		return abandon(fmt.Errorf("rename %s to %s: %w", tmp, target, err), true)
	}
	if err := syncDir(fsys, dir); err != nil {
		return fmt.Errorf("%s was replaced but may not be durable: %w", target, err)
	}
	return nil
}

// writeFileSync creates path (which must not exist) with data and fsyncs
// it. On failure after the creation the file is removed.
func writeFileSync(fsys fileSystem, path string, data []byte, perm fs.FileMode) error {
	f, err := fsys.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	err = writeAll(f, data)
	if err == nil {
		if err = f.Sync(); err != nil {
			err = fmt.Errorf("fsync: %w", err)
		}
	}
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close: %w", cerr)
	}
	if err != nil {
		fsys.Remove(path)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// mkdirAllSync creates root/rel and any missing parents, fsyncing the
// parent of every folder it creates. root must exist.
func mkdirAllSync(fsys fileSystem, root, rel string) error {
	if rel == "." || rel == "" {
		return nil
	}
	cur := root
	for _, part := range strings.Split(filepath.ToSlash(rel), "/") {
		next := filepath.Join(cur, part)
		err := fsys.Mkdir(next, 0o755)
		switch {
		case err == nil:
			if err := syncDir(fsys, cur); err != nil {
				return err
			}
		case errors.Is(err, fs.ErrExist):
			fi, serr := os.Stat(next)
			if serr != nil {
				return fmt.Errorf("stat %s: %w", next, serr)
			}
			if !fi.IsDir() {
				return fmt.Errorf("create folder %s: a file of that name exists", next)
			}
		default:
			return fmt.Errorf("create folder %s: %w", next, err)
		}
		cur = next
	}
	return nil
}

// exists reports whether path exists (without following a final symlink).
func exists(path string) (bool, error) {
	_, err := os.Lstat(path)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return false, nil
	}
	return false, fmt.Errorf("stat %s: %w", path, err)
}
