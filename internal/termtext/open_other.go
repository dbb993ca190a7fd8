//go:build !unix

package termtext

import "os"

// openFlags opens read-only; the file is checked to be regular (after an
// lstat, and on the opened file) before anything is read.
const openFlags = os.O_RDONLY
