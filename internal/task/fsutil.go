package task

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// tmpInfix marks temporary files written by writeFileAtomic: a file
// "state.json" is written as "state.json.tmp-<random>" first.
const tmpInfix = ".tmp-"

// syncDir fsyncs a directory so that entries created, renamed or removed in
// it are durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
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
// folder is fsynced. Readers see either the old or the new content.
func writeFileAtomic(dir, name string, data []byte, perm fs.FileMode) (err error) {
	f, err := os.CreateTemp(dir, name+tmpInfix+"*")
	if err != nil {
		return fmt.Errorf("create temporary file for %s: %w", filepath.Join(dir, name), err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err = f.Chmod(perm); err != nil {
		return fmt.Errorf("chmod %s: %w", tmp, err)
	}
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", tmp, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp, err)
	}
	target := filepath.Join(dir, name)
	if err = os.Rename(tmp, target); err != nil {
		return fmt.Errorf("rename %s to %s: %w", tmp, target, err)
	}
	return syncDir(dir)
}

// writeFileSync creates path (which must not exist) with data and fsyncs it.
func writeFileSync(path string, data []byte, perm fs.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// mkdirAllSync creates root/rel and any missing parents, fsyncing the
// parent of every folder it creates. root must exist.
func mkdirAllSync(root, rel string) error {
	if rel == "." || rel == "" {
		return nil
	}
	cur := root
	for _, part := range strings.Split(filepath.ToSlash(rel), "/") {
		next := filepath.Join(cur, part)
		err := os.Mkdir(next, 0o755)
		switch {
		case err == nil:
			if err := syncDir(cur); err != nil {
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
