package main

import (
	"os"
	"runtime"
	"runtime/debug"
)

// firstGCPercent is the GOGC of a run until its first collection. Go's
// collector starts when the heap reaches 4 MB × GOGC/100, and orch's
// package initialisers alone allocate about 1.4 MB: at GOGC=100 a command
// as short as `orch status` of the README's 20 MB task (about 3 MB more)
// paid a whole collection, about 15 % of its CPU (README,
// "Performance"). At 400 the first collection waits for 16 MB; after it
// the percentage is 100 again, so a long or large command (`orch serve`,
// a map index) keeps the default's peak memory, plus at most those 12 MB
// once.
const firstGCPercent = 400

// startGC sets firstGCPercent until the first collection, unless the
// user set GOGC (then theirs holds throughout).
func startGC() {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	prev := debug.SetGCPercent(firstGCPercent)
	// The sentinel is unreachable at once: its cleanup runs after the
	// first collection, and puts the percentage back.
	runtime.AddCleanup(new([16]byte), func(p int) { debug.SetGCPercent(p) }, prev)
}
