package repomap

import (
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// A first index of several batches sets a soft memory limit
// (runtime/debug.SetMemoryLimit) while it runs: the collector's goal is
// twice the heap live at its last collection, and a collection during a
// batch's write (the batch's entries, postings and tables live) let the
// next batch's parse garbage grow the heap to twice that, with the freed
// pages kept resident. The limit is 1.5 times the largest live heap seen
// so far, at least buildMemoryFloor, never above the limit the process
// already had; it is lifted again when the last such build ends. On the
// 100,000-file synthetic repository (README, "The repository map") the
// live heap peaks near 50 MB, so the limit is the floor. A repository
// whose live heap outgrows it raises it with each batch: the collector
// runs more often then, never continuously.
const buildMemoryFloor = 80 << 20

var memLimit struct {
	sync.Mutex
	active  int
	prev    int64
	maxLive uint64
}

// limitMemory sets the limit for one more build; release lifts it.
func limitMemory() {
	memLimit.Lock()
	defer memLimit.Unlock()
	if memLimit.active == 0 {
		memLimit.prev = debug.SetMemoryLimit(-1)
		memLimit.maxLive = 0
	}
	memLimit.active++
	adjustMemoryLimitLocked()
}

// adjustMemoryLimit raises the limit to 1.5 times the largest live heap
// seen (a build calls it after each batch).
func adjustMemoryLimit() {
	memLimit.Lock()
	defer memLimit.Unlock()
	if memLimit.active > 0 {
		adjustMemoryLimitLocked()
	}
}

func adjustMemoryLimitLocked() {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 {
		memLimit.maxLive = max(memLimit.maxLive, s[0].Value.Uint64())
	}
	limit := max(int64(buildMemoryFloor), int64(memLimit.maxLive/2*3))
	debug.SetMemoryLimit(min(limit, memLimit.prev))
}

func releaseMemoryLimit() {
	memLimit.Lock()
	defer memLimit.Unlock()
	if memLimit.active--; memLimit.active == 0 {
		debug.SetMemoryLimit(memLimit.prev)
	}
}
