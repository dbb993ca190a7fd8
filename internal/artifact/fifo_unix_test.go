//go:build unix

package artifact

import (
	"syscall"
	"testing"
)

// mkfifo creates a named pipe at path.
func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
}
