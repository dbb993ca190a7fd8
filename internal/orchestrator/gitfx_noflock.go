//go:build !(darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd)

package orchestrator

import "os"

// tryFlock always succeeds where flock(2) does not exist: a git effect's
// lock is then its task's lock alone.
func tryFlock(*os.File) (bool, error) { return true, nil }
