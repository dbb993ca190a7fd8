//go:build unix

package task

import (
	"os"
	"syscall"
)

// readFlags opens a task file for reading without blocking: a named pipe
// put where state.json or the transcript should be cannot hang a reader;
// the opened file is then checked to be regular.
const readFlags = os.O_RDONLY | syscall.O_NONBLOCK
