package repomap

import (
	"runtime/debug"
	"testing"
)

// A build's memory limit is at least the floor, never above the
// process's own, and lifted when the last of overlapping builds ends.
func TestMemoryLimitIsLiftedByTheLastBuild(t *testing.T) {
	orig := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(orig)
	for _, tc := range []struct {
		name       string
		prev, want int64
	}{
		{"no limit before", 1 << 62, buildMemoryFloor},
		{"a lower limit before stays", 32 << 20, 32 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			debug.SetMemoryLimit(tc.prev)
			limitMemory()
			limitMemory() // a second build at the same time
			if got := debug.SetMemoryLimit(-1); got < min(tc.want, tc.prev) || got > tc.prev {
				t.Errorf("limit during the builds = %d, want between %d and %d", got, min(tc.want, tc.prev), tc.prev)
			}
			releaseMemoryLimit()
			if got := debug.SetMemoryLimit(-1); got > tc.prev {
				t.Errorf("limit after the first build ended = %d, above %d", got, tc.prev)
			}
			adjustMemoryLimit()
			releaseMemoryLimit()
			if got := debug.SetMemoryLimit(-1); got != tc.prev {
				t.Errorf("limit after both ended = %d, want %d", got, tc.prev)
			}
		})
	}
}
