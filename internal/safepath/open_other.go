//go:build !unix

package safepath

import "os"

const openFlags = os.O_RDONLY

func isNotDir(error) bool { return false }

func isLoop(error) bool { return false }
