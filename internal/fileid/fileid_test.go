package fileid

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// TestStampTrusted is the rule by which a cache keyed by a file's identity
// trusts what it read: the same identity, and mtime and ctime both older
// than the time the reading began (git's racy-timestamp rule).
func TestStampTrusted(t *testing.T) {
	id := ID{Size: 10, Mtime: 100, Ctime: 100, Ino: 7, Dev: 1, Mode: 0o100644}
	with := func(f func(*ID)) ID { c := id; f(&c); return c }
	for _, tc := range []struct {
		name    string
		stamped ID
		since   int64
		now     ID
		want    bool
	}{
		{"unchanged, read after the last change", id, 101, id, true},
		{"changed in the tick it was read (mtime = ctime = since)", id, 100, id, false},
		{"ctime not older than the reading (mtime set back)", with(func(f *ID) { f.Mtime = 50 }), 100, with(func(f *ID) { f.Mtime = 50 }), false},
		{"mtime not older than the reading (ctime older)", with(func(f *ID) { f.Ctime = 50 }), 100, with(func(f *ID) { f.Ctime = 50 }), false},
		{"mtime and ctime in the future (clock skew)", id, 99, id, false},
		{"same size, other mtime", id, 200, with(func(f *ID) { f.Mtime = 150 }), false},
		{"same size and mtime, other ctime (mtime put back)", id, 200, with(func(f *ID) { f.Ctime = 150 }), false},
		{"replaced by a rename: other inode", id, 200, with(func(f *ID) { f.Ino = 8 }), false},
		{"other device", id, 200, with(func(f *ID) { f.Dev = 2 }), false},
		{"other size", id, 200, with(func(f *ID) { f.Size = 11 }), false},
		{"other type (a named pipe)", id, 200, with(func(f *ID) { f.Mode = 0o010644 }), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := (Stamp{ID: tc.stamped, Since: tc.since}).Trusted(tc.now); got != tc.want {
				t.Fatalf("Trusted = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestStat: Lstat, LstatAt and Fstat give one file the same identity,
// Lstat does not follow a symbolic link, and a missing file's error is
// fs.ErrNotExist.
func TestStat(t *testing.T) {
	if !Supported {
		t.Skipf("no file identities on %s", runtime.GOOS)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	byPath, err := Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if byPath.Size != 3 || !byPath.IsRegular() || byPath.IsDir() || byPath.Ino == 0 || byPath.Mtime == 0 || byPath.Ctime == 0 {
		t.Fatalf("Lstat = %+v", byPath)
	}
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if at, err := LstatAt(d, "f"); err != nil || at != byPath {
		t.Fatalf("LstatAt = %+v, %v; Lstat gave %+v", at, err, byPath)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if open, err := Fstat(f); err != nil || open != byPath {
		t.Fatalf("Fstat = %+v, %v; Lstat gave %+v", open, err, byPath)
	}
	if id, err := Fstat(d); err != nil || !id.IsDir() {
		t.Fatalf("Fstat of the folder = %+v, %v", id, err)
	}
	if err := os.Symlink("f", filepath.Join(dir, "l")); err != nil {
		t.Fatal(err)
	}
	if l, err := Lstat(filepath.Join(dir, "l")); err != nil || l.IsRegular() || l.Ino == byPath.Ino {
		t.Fatalf("Lstat of a symbolic link = %+v, %v", l, err)
	}
	if _, err := Lstat(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Lstat of a missing file: %v", err)
	}
	if _, err := LstatAt(d, "missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("LstatAt of a missing file: %v", err)
	}
	// A same-size rewrite changes the identity (mtime, ctime).
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	if again, _ := Lstat(path); again == byPath {
		t.Fatal("identity unchanged after the mtime moved")
	}
}
