package gitx

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStdinFile: the input git is given is a regular file holding exactly
// the data from its start, memory file or temporary file alike, and the
// temporary file leaves no name behind; git reads more than a pipe holds
// whole (1 MiB through hash-object --stdin hashes as the same bytes in a
// file do).
func TestStdinFile(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef\n"), 1<<16) // 1.1 MB
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	for name, open := range map[string]func([]byte) (*os.File, func(), error){
		"stdinFile": stdinFile,
		"tempStdinFile": func(d []byte) (*os.File, func(), error) {
			f, release, err := tempStdinFile()
			if err == nil {
				_, err = f.Write(d)
			}
			if err == nil {
				_, err = f.Seek(0, io.SeekStart)
			}
			return f, release, err
		},
	} {
		f, release, err := open(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		fi, err := f.Stat()
		if err != nil || !fi.Mode().IsRegular() || fi.Size() != int64(len(data)) {
			t.Errorf("%s: %v, %v; want a regular file of %d bytes", name, fi.Mode(), err, len(data))
		}
		got, err := io.ReadAll(f)
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s: read back %d bytes (%v), want the %d written", name, len(got), err, len(data))
		}
		if left, _ := os.ReadDir(tmp); len(left) != 0 {
			t.Errorf("%s: %s holds %v while the file is open", name, tmp, left)
		}
		release()
	}

	r := newRepo(t)
	out, err := r.run(testCtx(t), call{sub: "hash-object", args: []string{"--stdin"}, stdin: data})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "data")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if want := runGit(t, r.Dir, "hash-object", file); strings.TrimSpace(string(out)) != want {
		t.Errorf("git hashed the input as %s, the same bytes in a file as %s", out, want)
	}
}
