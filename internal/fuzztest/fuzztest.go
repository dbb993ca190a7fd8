// Package fuzztest is for fuzz targets whose code reads files (tests
// only): one folder for all the inputs a fuzz worker runs, one after
// another, and its files rewritten in place for each input. Making and
// removing a folder per input (t.TempDir), or truncating a file and
// writing it again (os.WriteFile), cost far more than most of the code
// under test; README, "Fuzzing in CI", has the figures.
//
// A file rewritten in place keeps its inode, and two rewrites within the
// file system's timestamp tick can leave it the same size and modification
// time: use these only where the code under test keeps nothing by a file's
// identity between calls.
package fuzztest

import (
	"os"
	"path/filepath"
	"testing"
)

// Write makes the file at path hold data, created if need be: written from
// its first byte, then cut to its length. os.WriteFile cuts it to nothing
// first, and ext4 flushes a file cut to nothing and written again when it
// is closed (auto_da_alloc): BenchmarkWrite and BenchmarkWriteFile, 40
// times slower.
func Write(tb testing.TB, path string, data []byte) {
	tb.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		tb.Fatal(err)
	}
	_, err = f.WriteAt(data, 0)
	if err == nil {
		err = f.Truncate(int64(len(data)))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		tb.Fatal(err)
	}
}

// Reset makes dir hold exactly files (name to content), each written with
// Write: whatever else is in dir (what the code run on an earlier input
// left) is removed.
func Reset(tb testing.TB, dir string, files map[string][]byte) {
	tb.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range entries {
		if _, ok := files[e.Name()]; !ok || !e.Type().IsRegular() {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				tb.Fatal(err)
			}
		}
	}
	for name, data := range files {
		Write(tb, filepath.Join(dir, name), data)
	}
}
