//go:build unix

package repomap

import (
	"os"
	"syscall"
)

// mapFile maps the first size bytes of f read-only. Only small, densely
// read sections are read through the mapping: the kernel maps the pages
// around every page touched (fault-around), so scattered reads of a
// large section would make it all resident (segment.entry reads entries
// with pread).
func mapFile(f *os.File, size int64) ([]byte, error) {
	return syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
}

func unmapFile(b []byte) { syscall.Munmap(b) }
