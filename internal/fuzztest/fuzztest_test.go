package fuzztest

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestWrite(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	for _, data := range []string{"a longer first content", "short", "", "grows again to this"} {
		Write(t, p, []byte(data))
		if got, err := os.ReadFile(p); err != nil || string(got) != data {
			t.Fatalf("after Write(%q): %q, %v", data, got, err)
		}
	}
}

func TestReset(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"keep", "stray.tmp-1"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("old content"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "sub", "deeper"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A folder where a file is wanted is replaced by the file.
	if err := os.Mkdir(filepath.Join(dir, "new"), 0o755); err != nil {
		t.Fatal(err)
	}
	Reset(t, dir, map[string][]byte{"keep": []byte("k"), "new": []byte("n")})
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"keep", "new"}) {
		t.Fatalf("left %v, want [keep new]", names)
	}
	for name, want := range map[string]string{"keep": "k", "new": "n"} {
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(got) != want {
			t.Errorf("%s: %q, %v", name, got, err)
		}
	}
}

// A transcript line rewritten as a fuzz target rewrites its input: in
// place (Write) and as os.WriteFile does.
var line = []byte(`{"seq":1,"ts":"2026-11-25T10:00:00Z","kind":"created","state":{"phase":"planning","actors":{},"revision":1,"task":"0001-a"},"prev":""}` + "\n")

func BenchmarkWrite(b *testing.B) {
	p := filepath.Join(b.TempDir(), "f")
	for b.Loop() {
		Write(b, p, line)
	}
}

func BenchmarkWriteFile(b *testing.B) {
	p := filepath.Join(b.TempDir(), "f")
	for b.Loop() {
		if err := os.WriteFile(p, line, 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTempDirPerInput: a folder made, the file written and the folder
// removed, as t.TempDir does for each input.
func BenchmarkTempDirPerInput(b *testing.B) {
	root := b.TempDir()
	for b.Loop() {
		dir, err := os.MkdirTemp(root, "input")
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "f"), line, 0o644); err != nil {
			b.Fatal(err)
		}
		if err := os.RemoveAll(dir); err != nil {
			b.Fatal(err)
		}
	}
}
