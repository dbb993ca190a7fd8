//go:build unix

package safepath

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadRegular: the one bounded reader refuses, without blocking, what
// is not a regular file below its folder, and an oversized file, naming
// the file and the limit.
func TestReadRegular(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	write := func(rel, s string) {
		t.Helper()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a/file.json", "0123456789")
	write("a/small", "ok")
	if err := syscall.Mkfifo(filepath.Join(dir, "a/pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, l := range []struct{ name, target string }{
		{"a/inside", "small"},
		{"a/out", filepath.Join(outside, "secret")},
		{"a/up", "../../" + filepath.Base(outside) + "/secret"},
	} {
		if err := os.Symlink(l.target, filepath.Join(dir, l.name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		rel   string
		limit int64
		links Links
		want  string // "" reads data
		is    error
		data  string
	}{
		{rel: "a/file.json", limit: 10, data: "0123456789"},
		{rel: "a/file.json", limit: 9, want: "a/file.json: expected at most 9 bytes, got 10 bytes", is: ErrTooLarge},
		{rel: "a/pipe", limit: 10, want: "a/pipe: expected a regular file, got a named pipe", is: ErrNotRegular},
		{rel: "a", limit: 10, want: "a: expected a regular file, got a directory", is: ErrNotRegular},
		{rel: "a/inside", limit: 10, want: "a/inside: expected a regular file, got a symbolic link", is: ErrNotRegular},
		{rel: "a/inside", limit: 10, links: LinksInside, data: "ok"},
		{rel: "a/out", limit: 10, links: LinksInside, want: "leaves it", is: ErrUnsafe},
		{rel: "a/up", limit: 10, links: LinksInside, want: "leaves it", is: ErrUnsafe},
		{rel: "../" + filepath.Base(outside) + "/secret", limit: 10, want: "leaves it", is: ErrUnsafe},
		{rel: "a/small/x", limit: 10, want: "not a directory", is: ErrNotRegular},
		{rel: "a/missing", limit: 10, want: "a/missing", is: fs.ErrNotExist},
	} {
		done := make(chan struct{})
		var data []byte
		var err error
		go func() {
			data, err = ReadRegular(dir, tc.rel, tc.limit, tc.links)
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the read blocks", tc.rel)
		}
		if tc.want == "" {
			if err != nil || string(data) != tc.data {
				t.Errorf("%s: %q, %v; want %q", tc.rel, data, err, tc.data)
			}
			continue
		}
		var fe *FileError
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, tc.is) || !errors.As(err, &fe) || fe.File != tc.rel {
			t.Errorf("%s: %v; want %q (%v)", tc.rel, err, tc.want, tc.is)
		}
	}
}

// ReadPart reads a file's head or tail and says how large it is; it is
// as strict as ReadRegular about what it opens.
func TestReadPart(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "log"), []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		part  Part
		limit int64
		data  string
	}{
		{Head, 4, "0123"}, {Tail, 4, "6789"}, {Head, 20, "0123456789"}, {Tail, 20, "0123456789"}, {Tail, 0, ""},
	} {
		data, size, err := ReadPart(dir, "log", tc.limit, tc.part)
		if err != nil || string(data) != tc.data || size != 10 {
			t.Errorf("part %d limit %d: %q, %d, %v", tc.part, tc.limit, data, size, err)
		}
	}
	if _, _, err := ReadPart(dir, "pipe", 10, Head); !errors.Is(err, ErrNotRegular) {
		t.Errorf("pipe: %v", err)
	}
}
