package task

import (
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// Kinds of operations a faultFS records and can make fail. Reads (stat,
// read, opening for reading) pass through unrecorded.
const (
	opCreate   = "create"   // OpenFile with O_CREATE, CreateTemp, MkdirTemp
	opOpen     = "open"     // OpenFile of an existing file for writing
	opWrite    = "write"    // File.Write
	opFsync    = "fsync"    // File.Sync of a file
	opDirSync  = "dirsync"  // File.Sync of a folder
	opClose    = "close"    // File.Close of a file opened for writing
	opTruncate = "truncate" // File.Truncate
	opChmod    = "chmod"    // File.Chmod, Chmod
	opRename   = "rename"   // Rename, Root.Rename
	opMkdir    = "mkdir"    // Mkdir, Root.Mkdir
	opRemove   = "remove"   // Remove, RemoveAll
)

// op is one recorded operation; Path is absolute (for a rename, the target).
type op struct {
	Kind, Path string
}

// fault is what happens to the failing operation.
type fault struct {
	name   string
	errno  syscall.Errno // the error; 0 with short
	short  bool          // a write writes half of its bytes and reports no error
	half   bool          // a failing write writes half of its bytes before the error
	sticky bool          // every later operation fails too (a file system gone read-only)
}

// faults lists the faults injected into an operation of that kind.
func faults(kind string) []fault {
	fs := []fault{
		{name: "ENOSPC", errno: syscall.ENOSPC, half: true},
		{name: "EIO", errno: syscall.EIO},
		{name: "EROFS", errno: syscall.EROFS},
		{name: "EROFS-sticky", errno: syscall.EROFS, sticky: true},
	}
	if kind == opWrite {
		fs = append(fs, fault{name: "short", short: true})
	}
	return fs
}

// faultFS is a fileSystem over the real one that records every operation
// that changes or syncs something and fails the one that fail selects.
// It also records an fsync of a path whose fsync failed before: a retry.
type faultFS struct {
	real  fileSystem
	fail  func(i int, o op) bool // nil: nothing fails
	fault fault

	mu         sync.Mutex
	ops        []op
	failed     []int // indexes of the operations that failed
	syncFailed map[string]bool
	retried    []op
}

func newFaultFS(fail func(i int, o op) bool, f fault) *faultFS {
	return &faultFS{real: osFS{}, fail: fail, fault: f, syncFailed: map[string]bool{}}
}

// failAt fails the operation with that index.
func failAt(idx int) func(int, op) bool {
	return func(i int, _ op) bool { return i == idx }
}

// step records an operation and returns its error; short is true when a
// write is to be cut short without an error.
func (ff *faultFS) step(kind, path string) (short bool, err error) {
	ff.mu.Lock()
	defer ff.mu.Unlock()
	i := len(ff.ops)
	o := op{Kind: kind, Path: path}
	ff.ops = append(ff.ops, o)
	isSync := kind == opFsync || kind == opDirSync
	if isSync && ff.syncFailed[path] {
		ff.retried = append(ff.retried, o)
	}
	hit := ff.fail != nil && ff.fail(i, o)
	if !hit && ff.fault.sticky && len(ff.failed) > 0 {
		hit = true
	}
	if !hit {
		return false, nil
	}
	ff.failed = append(ff.failed, i)
	if ff.fault.short {
		return kind == opWrite, nil
	}
	if isSync {
		ff.syncFailed[path] = true
	}
	return false, &fs.PathError{Op: kind, Path: path, Err: ff.fault.errno}
}

// recorded returns a copy of the operations so far.
func (ff *faultFS) recorded() []op {
	ff.mu.Lock()
	defer ff.mu.Unlock()
	return append([]op(nil), ff.ops...)
}

func writeFlags(flag int) bool {
	return flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND) != 0
}

func (ff *faultFS) OpenFile(name string, flag int, perm fs.FileMode) (file, error) {
	if !writeFlags(flag) {
		f, err := ff.real.OpenFile(name, flag, perm)
		if err != nil {
			return nil, err
		}
		return ff.wrap(f, filepath.Clean(name), false)
	}
	kind := opOpen
	if flag&os.O_CREATE != 0 {
		kind = opCreate
	}
	if _, err := ff.step(kind, filepath.Clean(name)); err != nil {
		return nil, err
	}
	f, err := ff.real.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return ff.wrap(f, filepath.Clean(name), true)
}

func (ff *faultFS) CreateTemp(dir, pattern string) (file, error) {
	if _, err := ff.step(opCreate, filepath.Join(dir, pattern)); err != nil {
		return nil, err
	}
	f, err := ff.real.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	return ff.wrap(f, f.Name(), true)
}

func (ff *faultFS) MkdirTemp(dir, pattern string) (string, error) {
	if _, err := ff.step(opCreate, filepath.Join(dir, pattern)); err != nil {
		return "", err
	}
	return ff.real.MkdirTemp(dir, pattern)
}

func (ff *faultFS) Mkdir(name string, perm fs.FileMode) error {
	if _, err := ff.step(opMkdir, filepath.Clean(name)); err != nil {
		return err
	}
	return ff.real.Mkdir(name, perm)
}

func (ff *faultFS) Chmod(name string, mode fs.FileMode) error {
	if _, err := ff.step(opChmod, filepath.Clean(name)); err != nil {
		return err
	}
	return ff.real.Chmod(name, mode)
}

func (ff *faultFS) Rename(oldpath, newpath string) error {
	if _, err := ff.step(opRename, filepath.Clean(newpath)); err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err.(*fs.PathError).Err}
	}
	return ff.real.Rename(oldpath, newpath)
}

func (ff *faultFS) Remove(name string) error {
	if _, err := ff.step(opRemove, filepath.Clean(name)); err != nil {
		return err
	}
	return ff.real.Remove(name)
}

func (ff *faultFS) RemoveAll(name string) error {
	if _, err := ff.step(opRemove, filepath.Clean(name)); err != nil {
		return err
	}
	return ff.real.RemoveAll(name)
}

func (ff *faultFS) OpenRoot(dir string) (root, error) {
	r, err := ff.real.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &faultRoot{ff: ff, r: r, dir: filepath.Clean(dir)}, nil
}

func (ff *faultFS) wrap(f file, path string, writable bool) (file, error) {
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &faultFile{file: f, ff: ff, path: path, isDir: fi.IsDir(), writable: writable}, nil
}

// faultFile routes a file's writes, syncs, truncations and closes through
// its faultFS; reads pass through.
type faultFile struct {
	file
	ff       *faultFS
	path     string
	isDir    bool
	writable bool
	closed   bool
}

func (f *faultFile) Write(b []byte) (int, error) {
	short, err := f.ff.step(opWrite, f.path)
	if short {
		return f.file.Write(b[:len(b)/2])
	}
	if err != nil {
		n := 0
		if f.ff.fault.half {
			n, _ = f.file.Write(b[:len(b)/2])
		}
		return n, err
	}
	return f.file.Write(b)
}

// Sync of a failing fsync leaves the written data in the page cache (the
// real file), as the kernel does, and reports the error.
func (f *faultFile) Sync() error {
	kind := opFsync
	if f.isDir {
		kind = opDirSync
	}
	if _, err := f.ff.step(kind, f.path); err != nil {
		return err
	}
	return f.file.Sync()
}

func (f *faultFile) Truncate(size int64) error {
	if _, err := f.ff.step(opTruncate, f.path); err != nil {
		return err
	}
	return f.file.Truncate(size)
}

func (f *faultFile) Chmod(mode fs.FileMode) error {
	if _, err := f.ff.step(opChmod, f.path); err != nil {
		return err
	}
	return f.file.Chmod(mode)
}

// Close always releases the descriptor; a failing close of a written file
// reports the error afterwards (as NFS does).
func (f *faultFile) Close() error {
	if !f.writable || f.closed {
		return f.file.Close()
	}
	f.closed = true
	_, err := f.ff.step(opClose, f.path)
	cerr := f.file.Close()
	if err != nil {
		return err
	}
	return cerr
}

// faultRoot routes a root's mkdirs and renames through its faultFS.
type faultRoot struct {
	ff  *faultFS
	r   root
	dir string
}

func (r *faultRoot) Open(name string) (file, error) {
	f, err := r.r.Open(name)
	if err != nil {
		return nil, err
	}
	return r.ff.wrap(f, filepath.Join(r.dir, name), false)
}

func (r *faultRoot) Lstat(name string) (fs.FileInfo, error) { return r.r.Lstat(name) }
func (r *faultRoot) Stat(name string) (fs.FileInfo, error)  { return r.r.Stat(name) }
func (r *faultRoot) Close() error                           { return r.r.Close() }

func (r *faultRoot) Mkdir(name string, perm fs.FileMode) error {
	if _, err := r.ff.step(opMkdir, filepath.Join(r.dir, name)); err != nil {
		return err
	}
	return r.r.Mkdir(name, perm)
}

func (r *faultRoot) Rename(oldpath, newpath string) error {
	if _, err := r.ff.step(opRename, filepath.Join(r.dir, newpath)); err != nil {
		return &os.LinkError{Op: "renameat", Old: oldpath, New: newpath, Err: err.(*fs.PathError).Err}
	}
	return r.r.Rename(oldpath, newpath)
}
