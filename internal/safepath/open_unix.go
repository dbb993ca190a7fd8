//go:build unix

package safepath

import (
	"errors"
	"os"
	"syscall"
)

// openFlags opens without blocking, so that a named pipe put where a file
// is expected cannot hang the reader; the file is then checked to be
// regular before anything is read.
const openFlags = os.O_RDONLY | syscall.O_NONBLOCK

func isNotDir(err error) bool { return errors.Is(err, syscall.ENOTDIR) }

func isLoop(err error) bool { return errors.Is(err, syscall.ELOOP) }
