//go:build !unix

package task

import "os"

// readFlags opens a task file for reading; the opened file is then checked
// to be regular.
const readFlags = os.O_RDONLY
