package durable

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// faultFS is the real file system with one step made to fail.
type faultFS struct {
	fail  string // "create", "chmod", "write", "short", "sync", "close", "rename", "dirsync"
	inner FS
}

var errInjected = errors.New("injected fault")

type faultFile struct {
	File
	fail string
}

func (f faultFile) Write(p []byte) (int, error) {
	switch f.fail {
	case "write":
		return 0, errInjected
	case "short":
		n, err := f.File.Write(p[:len(p)/2])
		return n, err
	}
	return f.File.Write(p)
}

func (f faultFile) Chmod(m fs.FileMode) error {
	if f.fail == "chmod" {
		return errInjected
	}
	return f.File.Chmod(m)
}

func (f faultFile) Sync() error {
	if f.fail == "sync" || f.fail == "dirsync" {
		return errInjected
	}
	return f.File.Sync()
}

func (f faultFile) Close() error {
	err := f.File.Close()
	if f.fail == "close" {
		return errInjected
	}
	return err
}

func (x faultFS) CreateTemp(dir, pattern string) (File, error) {
	if x.fail == "create" {
		return nil, errInjected
	}
	f, err := x.inner.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	fail := x.fail
	if fail == "dirsync" {
		fail = ""
	}
	return faultFile{File: f, fail: fail}, nil
}

func (x faultFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	f, err := x.inner.OpenFile(name, flag, perm)
	if err != nil || x.fail != "dirsync" {
		return f, err
	}
	return faultFile{File: f, fail: "dirsync"}, nil
}

func (x faultFS) Rename(o, n string) error {
	if x.fail == "rename" {
		return errInjected
	}
	return x.inner.Rename(o, n)
}

func (x faultFS) Remove(name string) error { return x.inner.Remove(name) }

func TestWriteFileFaults(t *testing.T) {
	for _, fail := range []string{"create", "chmod", "write", "short", "sync", "close", "rename", "dirsync"} {
		t.Run(fail, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "state.json")
			if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			err := WriteFileFS(faultFS{fail: fail, inner: OS}, path, []byte("new content"), 0o600)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), path) && !strings.Contains(err.Error(), dir) {
				t.Errorf("error %q names neither the file nor its folder", err)
			}
			got, _ := os.ReadFile(path)
			want := "old"
			if fail == "dirsync" {
				// Renamed already: the new content, durability unknown.
				want = "new content"
				if !strings.Contains(err.Error(), "may not be durable") {
					t.Errorf("error %q does not say durability is unknown", err)
				}
			}
			if string(got) != want {
				t.Errorf("target holds %q, want %q", got, want)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 {
				t.Errorf("temporary file left: %v", entries)
			}
		})
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.json")
	for _, content := range []string{"first", "second"} {
		if err := WriteFile(path, []byte(content), 0o640); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != content {
			t.Fatalf("read %q, %v; want %q", got, err, content)
		}
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v", fi.Mode())
	}
}

func TestRemoveTemps(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"advice.json.tmp-1", "advice.md.tmp-2", "plan.md.tmp-3", "advice.json", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	RemoveTemps(dir, "advice.")
	var left []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if strings.Join(left, " ") != "advice.json notes.txt plan.md.tmp-3" {
		t.Errorf("left %v", left)
	}
}

func TestWriteFunc(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "idx")
	if err := WriteFunc(path, 0o600, func(w *bufio.Writer) error { _, err := w.WriteString("streamed"); return err }); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "streamed" {
		t.Errorf("read %q", got)
	}
	// A failing producer leaves the old content and no temporary file.
	err := WriteFunc(path, 0o600, func(w *bufio.Writer) error { w.WriteString("half"); return errInjected })
	if !errors.Is(err, errInjected) {
		t.Fatalf("err = %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "streamed" {
		t.Errorf("after a failed write: %q", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("left %v", entries)
	}
}
