package task

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/orchdev/orch/internal/durable"
)

// durableFS is the store's seam as package durable's.
type durableFS struct{ fsys fileSystem }

func (d durableFS) CreateTemp(dir, pattern string) (durable.File, error) {
	return d.fsys.CreateTemp(dir, pattern)
}

func (d durableFS) OpenFile(name string, flag int, perm fs.FileMode) (durable.File, error) {
	return d.fsys.OpenFile(name, flag, perm)
}

func (d durableFS) Rename(oldpath, newpath string) error { return d.fsys.Rename(oldpath, newpath) }
func (d durableFS) Remove(name string) error             { return d.fsys.Remove(name) }

// syncDir fsyncs a folder through the store's seam (durable.SyncDir).
func syncDir(fsys fileSystem, dir string) error { return durable.SyncDir(durableFS{fsys}, dir) }

// writeFileAtomic replaces dir/name with data durably through the store's
// seam (durable.WriteFileFS).
func writeFileAtomic(fsys fileSystem, dir, name string, data []byte, perm fs.FileMode) error {
	return durable.WriteFileFS(durableFS{fsys}, filepath.Join(dir, name), data, perm)
}

// writeFileSync creates path (which must not exist) with data and fsyncs
// it. On failure after the creation the file is removed.
func writeFileSync(fsys fileSystem, path string, data []byte, perm fs.FileMode) error {
	f, err := fsys.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	err = durable.WriteAll(f, data)
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
