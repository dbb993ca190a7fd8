package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// gcPercent reads GOGC as the runtime has it, without setting it.
func gcPercent() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}

func numGC() uint32 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.NumGC
}

// Until the first collection the percentage is firstGCPercent; after it,
// the one the process had; a GOGC the user set is left alone.
func TestStartGC(t *testing.T) {
	t.Setenv("GOGC", "") // restored after the test
	os.Unsetenv("GOGC")
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	n := numGC()
	startGC()
	if p := gcPercent(); p != firstGCPercent && numGC() == n {
		t.Fatalf("before the first collection GOGC is %d, want %d", p, firstGCPercent)
	}
	deadline := time.Now().Add(10 * time.Second)
	for gcPercent() != 100 {
		if time.Now().After(deadline) {
			t.Fatalf("after collections GOGC is still %d, want 100", gcPercent())
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}

	t.Setenv("GOGC", "50")
	debug.SetGCPercent(50)
	startGC()
	if p := gcPercent(); p != 50 {
		t.Fatalf("with GOGC=50 set, startGC changed the percentage to %d", p)
	}
}
