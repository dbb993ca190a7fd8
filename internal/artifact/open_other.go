//go:build !unix

package artifact

import "os"

// openFlags opens read-only; the file is checked to be regular (after a
// stat) before anything is read.
const openFlags = os.O_RDONLY
