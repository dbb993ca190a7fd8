package gitx

import (
	"os"

	"golang.org/x/sys/unix"
)

// anonymousFile is a memory file (memfd_create): it has no name anywhere,
// so a kill leaves nothing behind. Where memfd_create is refused (an old
// kernel, a seccomp filter) it is a temporary file (tempStdinFile).
func anonymousFile() (*os.File, func(), error) {
	fd, err := unix.MemfdCreate("orch-git-stdin", unix.MFD_CLOEXEC)
	if err != nil {
		return tempStdinFile()
	}
	f := os.NewFile(uintptr(fd), "orch-git-stdin")
	return f, func() { f.Close() }, nil
}
