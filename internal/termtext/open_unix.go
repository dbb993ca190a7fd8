//go:build unix

package termtext

import (
	"os"
	"syscall"
)

// openFlags opens without blocking and without following a symbolic link,
// so that a named pipe put where a file is expected cannot hang a reader;
// the file is then checked to be regular before anything is read.
const openFlags = os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOFOLLOW
