// Package durable replaces files atomically and durably: a temporary file
// in the same folder is written, fsynced and renamed over the target, then
// the folder is fsynced (google/renameio's recipe plus the folder fsync it
// leaves out). Readers see the old content or the new, never a mix. Every
// file orch rewrites in place goes through WriteFile.
package durable

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// TempInfix marks temporary files: "state.json" is written as
// "state.json.tmp-<random>" first. A crash can leave one behind; RemoveTemps
// cleans them.
const TempInfix = ".tmp-"

// File is the part of *os.File a write uses.
type File interface {
	io.Writer
	Name() string
	Sync() error
	Chmod(mode fs.FileMode) error
	Close() error
}

// FS is the seam to the operating system, so that tests can make any step
// fail. OS is the real one.
type FS interface {
	CreateTemp(dir, pattern string) (File, error)
	OpenFile(name string, flag int, perm fs.FileMode) (File, error)
	Rename(oldpath, newpath string) error
	Remove(name string) error
}

// OS is the real file system.
var OS FS = osFS{}

type osFS struct{}

func (osFS) CreateTemp(dir, pattern string) (File, error) { return os.CreateTemp(dir, pattern) }
func (osFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	return os.OpenFile(name, flag, perm)
}
func (osFS) Rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }
func (osFS) Remove(name string) error             { return os.Remove(name) }

// WriteFile replaces path with data on the real file system.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	return WriteFileFS(OS, path, data, perm)
}

// WriteFileFS replaces path with data durably through fsys. When it fails
// before the rename, the target is untouched and the temporary file is
// removed (or, if even that fails, left for RemoveTemps); when only the
// final folder fsync fails, the target already has the new content but its
// durability is unknown, and the error says so.
func WriteFileFS(fsys FS, path string, data []byte, perm fs.FileMode) error {
	return replace(fsys, path, perm, func(f File) error { return WriteAll(f, data) })
}

// WriteFunc replaces path durably with what fill writes (through a
// buffer), like WriteFile, for content produced as a stream.
func WriteFunc(path string, perm fs.FileMode, fill func(w *bufio.Writer) error) error {
	return replace(OS, path, perm, func(f File) error {
		w := bufio.NewWriterSize(f, 1<<20)
		if err := fill(w); err != nil {
			return err
		}
		return w.Flush()
	})
}

// replace is the recipe: a temporary file beside path, written by write,
// fsynced, renamed over path, and the folder fsynced.
func replace(fsys FS, path string, perm fs.FileMode, write func(File) error) error {
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := fsys.CreateTemp(dir, name+TempInfix+"*")
	if err != nil {
		return fmt.Errorf("create temporary file for %s: %w", path, err)
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
	if err := write(f); err != nil {
		return abandon(fmt.Errorf("write %s: %w", tmp, err), false)
	}
	if err := f.Sync(); err != nil {
		return abandon(fmt.Errorf("fsync %s: %w", tmp, err), false)
	}
	if err := f.Close(); err != nil {
		return abandon(fmt.Errorf("close %s: %w", tmp, err), true)
	}
	if err := fsys.Rename(tmp, path); err != nil {
		return abandon(fmt.Errorf("rename %s to %s: %w", tmp, path, err), true)
	}
	if err := SyncDir(fsys, dir); err != nil {
		return fmt.Errorf("%s was replaced but may not be durable: %w", path, err)
	}
	return nil
}

// WriteAll writes data with one call. A write that reports fewer bytes
// without an error is io.ErrShortWrite: it is never continued, because the
// caller cannot tell what reached the file.
func WriteAll(w io.Writer, data []byte) error {
	n, err := w.Write(data)
	if err == nil && n != len(data) {
		err = io.ErrShortWrite
	}
	return err
}

// Opener opens files and folders (an FS, or a folder below an os.Root).
type Opener interface {
	OpenFile(name string, flag int, perm fs.FileMode) (File, error)
}

// SyncDir fsyncs a folder so that entries created, renamed or removed in it
// are durable. A failed fsync is returned, never retried.
func SyncDir(fsys Opener, dir string) error {
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

// IsTemp reports whether name is a temporary file of WriteFile for a file
// whose name starts with prefix ("" for any).
func IsTemp(name, prefix string) bool {
	return strings.HasPrefix(name, prefix) && strings.Contains(name, TempInfix)
}

// CreateCacheTemp creates the temporary file a cache writer fills and
// renames over path without syncing (a torn file fails the cache's own
// checksum): "."+base+TempInfix+random beside path, mode 0644, its folder
// made when missing. A folder that is not a folder of its own (a symbolic
// link) is refused: a cache writes nothing there.
func CreateCacheTemp(path string) (*os.File, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if fi, err := os.Lstat(dir); err != nil {
		return nil, err
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a folder", dir)
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	return os.OpenFile(filepath.Join(dir, "."+filepath.Base(path)+TempInfix+hex.EncodeToString(rnd[:])), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
}

// RemoveStaleTemps removes the temporary files that writers killed while
// replacing path left beside it: regular files named "."+base+TempInfix+"*"
// last changed more than age ago. It is for files written without a lock
// (the caches), where a live writer's temporary file is younger than age.
func RemoveStaleTemps(path string, age time.Duration) {
	strays, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+TempInfix+"*"))
	for _, p := range strays {
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && time.Since(fi.ModTime()) > age {
			os.Remove(p)
		}
	}
}

// RemoveTemps removes the temporary files WriteFile left in dir after a
// crash, for files whose names start with prefix. The caller must know
// that no write is in progress there (it holds the lock).
func RemoveTemps(dir, prefix string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() && IsTemp(e.Name(), prefix) {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
