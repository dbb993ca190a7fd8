//go:build !linux

package gitx

import "os"

// anonymousFile is a temporary file (see tempStdinFile).
func anonymousFile() (*os.File, func(), error) { return tempStdinFile() }
