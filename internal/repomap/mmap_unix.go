//go:build unix

package repomap

import (
	"os"
	"syscall"
)

// mapFile maps the first size bytes of f read-only. The reads of a
// ranking are scattered (an entry here, a posting there): without
// MADV_RANDOM the kernel maps the pages around each one in too, and the
// process's resident memory grows to the whole file.
func mapFile(f *os.File, size int64) ([]byte, error) {
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	syscall.Madvise(b, syscall.MADV_RANDOM)
	return b, nil
}

func unmapFile(b []byte) { syscall.Munmap(b) }
