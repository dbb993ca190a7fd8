package task

import (
	"io"
	"io/fs"
	"os"
)

// fileSystem is the seam between the store and the operating system: every
// write, fsync, rename, truncation, creation and removal the store performs
// goes through it, so that tests can make any one of them fail (ENOSPC, EIO,
// EROFS, a short write) and check what the store guarantees then. Reads that
// change nothing (ReadState, Transcript, Verify, List) use the os package
// directly. Production code uses osFS; a nil fileSystem field means osFS.
type fileSystem interface {
	// OpenFile is os.OpenFile.
	OpenFile(name string, flag int, perm fs.FileMode) (file, error)
	// CreateTemp is os.CreateTemp.
	CreateTemp(dir, pattern string) (file, error)
	// MkdirTemp is os.MkdirTemp.
	MkdirTemp(dir, pattern string) (string, error)
	// Mkdir is os.Mkdir.
	Mkdir(name string, perm fs.FileMode) error
	// Chmod is os.Chmod.
	Chmod(name string, mode fs.FileMode) error
	// Rename is os.Rename.
	Rename(oldpath, newpath string) error
	// Remove is os.Remove.
	Remove(name string) error
	// RemoveAll is os.RemoveAll.
	RemoveAll(name string) error
	// OpenRoot is os.OpenRoot: names below it cannot escape dir.
	OpenRoot(dir string) (root, error)
}

// file is the part of *os.File the store uses.
type file interface {
	io.Writer
	io.ReaderAt
	Name() string
	Stat() (fs.FileInfo, error)
	Sync() error
	Truncate(size int64) error
	Chmod(mode fs.FileMode) error
	Close() error
}

// root is the part of *os.Root the store uses.
type root interface {
	Open(name string) (file, error)
	Lstat(name string) (fs.FileInfo, error)
	Stat(name string) (fs.FileInfo, error)
	Mkdir(name string, perm fs.FileMode) error
	Rename(oldpath, newpath string) error
	Close() error
}

// osFS is the real file system.
type osFS struct{}

func (osFS) OpenFile(name string, flag int, perm fs.FileMode) (file, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (osFS) CreateTemp(dir, pattern string) (file, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (osFS) MkdirTemp(dir, pattern string) (string, error) { return os.MkdirTemp(dir, pattern) }
func (osFS) Mkdir(name string, perm fs.FileMode) error     { return os.Mkdir(name, perm) }
func (osFS) Chmod(name string, mode fs.FileMode) error     { return os.Chmod(name, mode) }
func (osFS) Rename(oldpath, newpath string) error          { return os.Rename(oldpath, newpath) }
func (osFS) Remove(name string) error                      { return os.Remove(name) }
func (osFS) RemoveAll(name string) error                   { return os.RemoveAll(name) }

func (osFS) OpenRoot(dir string) (root, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return osRoot{r}, nil
}

// osRoot adapts *os.Root, whose Open returns *os.File, to root.
type osRoot struct{ *os.Root }

func (r osRoot) Open(name string) (file, error) {
	f, err := r.Root.Open(name)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// fsys returns the task's file system.
func (t *Task) fsys() fileSystem {
	if t.fs == nil {
		return osFS{}
	}
	return t.fs
}

// fsys returns the project's file system.
func (p *Project) fsys() fileSystem {
	if p.fs == nil {
		return osFS{}
	}
	return p.fs
}
