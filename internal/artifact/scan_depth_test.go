package artifact

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestScanCodeFilesDepthBound: a tree nested deeper than MaxCodeDepth is
// refused (without walking it to the bottom); one level less is fine.
func TestScanCodeFilesDepthBound(t *testing.T) {
	for _, tt := range []struct {
		depth int
		ok    bool
	}{{MaxCodeDepth - 1, true}, {MaxCodeDepth + 40, false}} {
		dir := t.TempDir()
		p := filepath.Join(append([]string{dir, "code", "files"}, strings.Split(strings.Repeat("d/", tt.depth-1), "/")...)...)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "f.go"), []byte("package d\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		got := ScanCodeFiles(dir)
		if tt.ok != (got.Err == nil) {
			t.Errorf("depth %d: err = %v", tt.depth, got.Err)
		}
		if !tt.ok && (!errors.Is(got.Err, ErrUnsafePath) || !strings.Contains(got.Err.Error(), "levels")) {
			t.Errorf("depth %d: error %v does not say what is wrong", tt.depth, got.Err)
		}
	}
}
