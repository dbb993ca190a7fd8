package artifact

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// codeDir returns taskDir/code/files, created.
func codeDir(t *testing.T, taskDir string) string {
	t.Helper()
	d := filepath.Join(taskDir, "code", "files")
	mkdirAll(t, d)
	return d
}

func TestScanCodeFilesListsSorted(t *testing.T) {
	dir := t.TempDir()
	for _, rel := range []string{"z.go", "a/b/c.txt", "a/a.go", "m/.gitignore", "a/b/deep/er/x", ".github/ci.yml", "sp ace/ü.md"} {
		writeFile(t, dir, CodeFilesDir+"/"+rel, "x")
	}
	mkdirAll(t, filepath.Join(dir, "code", "files", "empty", "dir"))
	l := ScanCodeFiles(dir)
	want := []string{".github/ci.yml", "a/a.go", "a/b/c.txt", "a/b/deep/er/x", "m/.gitignore", "sp ace/ü.md", "z.go"}
	if !l.OK() || !reflect.DeepEqual(l.Value, want) {
		t.Errorf("ScanCodeFiles = %+v, want %v", l, want)
	}
	if l.SHA256 != "" {
		t.Errorf("a scan has no SHA256, got %q", l.SHA256)
	}
}

func TestScanCodeFilesAbsentAndEmpty(t *testing.T) {
	dir := t.TempDir()
	if l := ScanCodeFiles(dir); l.Present || l.Err != nil {
		t.Errorf("no code/: %+v", l)
	}
	mkdirAll(t, filepath.Join(dir, "code"))
	if l := ScanCodeFiles(dir); l.Present || l.Err != nil {
		t.Errorf("no code/files: %+v", l)
	}
	if l := ScanCodeFiles(filepath.Join(dir, "missing")); l.Present || l.Err != nil {
		t.Errorf("no task folder: %+v", l)
	}
	codeDir(t, dir)
	if l := ScanCodeFiles(dir); !l.OK() || l.Value == nil || len(l.Value) != 0 {
		t.Errorf("empty code/files: %+v", l)
	}
}

func TestScanCodeFilesRefuses(t *testing.T) {
	outside := t.TempDir()
	writeFile(t, outside, "passwd", "root:x:0:0")
	cases := []struct {
		name  string
		setup func(t *testing.T, taskDir, files string)
		is    error
		msg   string
	}{
		{"symlink to a file inside", func(t *testing.T, _, files string) {
			writeFile(t, files, "real.go", "x")
			symlink(t, "real.go", filepath.Join(files, "link.go"))
		}, ErrUnsafePath, "code/files/link.go: expected a regular file or a directory, got a symbolic link"},
		{"symlink to a file outside", func(t *testing.T, _, files string) {
			mkdirAll(t, filepath.Join(files, "etc"))
			symlink(t, filepath.Join(outside, "passwd"), filepath.Join(files, "etc", "passwd"))
		}, ErrUnsafePath, "code/files/etc/passwd: expected a regular file or a directory, got a symbolic link"},
		{"dangling symlink", func(t *testing.T, _, files string) {
			symlink(t, "/nonexistent", filepath.Join(files, "dangling"))
		}, ErrUnsafePath, "code/files/dangling: expected a regular file or a directory, got a symbolic link"},
		{"symlink to a directory", func(t *testing.T, _, files string) {
			symlink(t, outside, filepath.Join(files, "dir"))
		}, ErrUnsafePath, "code/files/dir: expected a regular file or a directory, got a symbolic link"},
		{"code/files is a symlink", func(t *testing.T, taskDir, files string) {
			if err := os.RemoveAll(files); err != nil {
				t.Fatal(err)
			}
			symlink(t, outside, files)
		}, ErrUnsafePath, "code/files: expected a directory, got a symbolic link"},
		{"code is a symlink", func(t *testing.T, taskDir, _ string) {
			code := filepath.Join(taskDir, "code")
			if err := os.RemoveAll(code); err != nil {
				t.Fatal(err)
			}
			mkdirAll(t, filepath.Join(outside, "files"))
			symlink(t, outside, code)
		}, ErrUnsafePath, "code: expected a directory, got a symbolic link"},
		{"code/files is a file", func(t *testing.T, taskDir, files string) {
			if err := os.RemoveAll(files); err != nil {
				t.Fatal(err)
			}
			writeFile(t, taskDir, CodeFilesDir, "x")
		}, ErrNotRegular, "code/files: expected a directory, got a regular file"},
		{"named pipe", func(t *testing.T, _, files string) {
			mkdirAll(t, filepath.Join(files, "sub"))
			mkfifo(t, filepath.Join(files, "sub", "pipe"))
		}, ErrNotRegular, "code/files/sub/pipe: expected a regular file or a directory, got a named pipe"},
		{".git directory", func(t *testing.T, _, files string) {
			writeFile(t, files, ".git/hooks/post-checkout", "#!/bin/sh")
		}, ErrUnsafePath, `code/files: expected safe repository-relative file names, got ".git" (element ".git" names the .git directory)`},
		{"nested .GIT", func(t *testing.T, _, files string) {
			writeFile(t, files, "vendor/x/.GIT/config", "x")
		}, ErrUnsafePath, `"vendor/x/.GIT" (element ".GIT" names the .git directory)`},
		{".orch at the top", func(t *testing.T, _, files string) {
			writeFile(t, files, ".orch/current", "x")
		}, ErrUnsafePath, `".orch" (inside the .orch directory)`},
		{"newline in a name", func(t *testing.T, _, files string) {
			writeFile(t, files, "a\nb", "x")
		}, ErrUnsafePath, `"a\nb" (contains the control character '\n')`},
		{"backslash in a name", func(t *testing.T, _, files string) {
			writeFile(t, files, `..\evil`, "x")
		}, ErrUnsafePath, `contains a backslash`},
		{"invalid UTF-8 name", func(t *testing.T, _, files string) {
			writeFile(t, files, "bad\xff.go", "x")
		}, ErrUnsafePath, `(not valid UTF-8)`},
		{"file too large", func(t *testing.T, _, files string) {
			p := writeFile(t, files, "big.bin", "")
			if err := os.Truncate(p, MaxCodeFileBytes+1); err != nil {
				t.Fatal(err)
			}
		}, ErrTooLarge, "code/files/big.bin: expected at most 8388608 bytes, got 8388609 bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			files := codeDir(t, dir)
			writeFile(t, files, "ok.go", "fine")
			tc.setup(t, dir, files)
			l := ScanCodeFiles(dir)
			if !l.Present || l.Err == nil {
				t.Fatalf("ScanCodeFiles = %+v, want an error", l)
			}
			var ae *Error
			if !errors.As(l.Err, &ae) {
				t.Fatalf("not an *Error: %v", l.Err)
			}
			if !errors.Is(l.Err, tc.is) {
				t.Errorf("error %v does not match %v", l.Err, tc.is)
			}
			if !strings.Contains(l.Err.Error(), tc.msg) {
				t.Errorf("error\n  %s\nwant it to contain\n  %s", l.Err, tc.msg)
			}
		})
	}
}

// TestScanCodeFilesTooMany uses small limits: creating 20,001 real files
// takes seconds of I/O. ScanCodeFiles passes the documented constants.
func TestScanCodeFilesTooMany(t *testing.T) {
	lim := scanLimits{files: 30, dirs: 5, fileBytes: MaxCodeFileBytes}
	build := func(t *testing.T, dirs, files int) string {
		dir := t.TempDir()
		root := codeDir(t, dir)
		for i := 0; i < files; i++ {
			sub := root
			if dirs > 0 {
				sub = filepath.Join(root, fmt.Sprintf("d%02d", i%dirs))
				mkdirAll(t, sub)
			}
			writeFile(t, sub, fmt.Sprintf("f%05d", i), "")
		}
		return dir
	}
	if l := scanCodeFiles(build(t, 5, 30), lim); !l.OK() || len(l.Value) != 30 {
		t.Errorf("at the limits: %+v", l.Err)
	}
	l := scanCodeFiles(build(t, 5, 31), lim)
	if !l.Present || !errors.Is(l.Err, ErrTooLarge) || !strings.Contains(l.Err.Error(), "code/files: expected at most 30 files, got more") {
		t.Errorf("31 files: present %v, err %v", l.Present, l.Err)
	}
	l = scanCodeFiles(build(t, 6, 6), lim)
	if !l.Present || !errors.Is(l.Err, ErrTooLarge) || !strings.Contains(l.Err.Error(), "code/files: expected at most 5 directories, got more") {
		t.Errorf("6 directories: present %v, err %v", l.Present, l.Err)
	}
	l = scanCodeFiles(build(t, 0, 36), lim)
	if !l.Present || !errors.Is(l.Err, ErrTooLarge) || !strings.Contains(l.Err.Error(), "code/files: expected at most 35 entries in one directory, got more") {
		t.Errorf("36 entries in one directory: present %v, err %v", l.Present, l.Err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
