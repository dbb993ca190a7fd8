//go:build unix

package artifact

import (
	"os"
	"syscall"
)

// openFlags opens without blocking, so that a named pipe put where a file
// is expected cannot hang the reader; the file is then checked to be
// regular before anything is read.
const openFlags = os.O_RDONLY | syscall.O_NONBLOCK
