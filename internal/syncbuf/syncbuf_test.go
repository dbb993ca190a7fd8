package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

// Concurrent writers and a reader: every write arrives whole (run with
// -race to see that the buffer is guarded).
func TestConcurrentWrites(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				_, _ = b.Write([]byte("ab\n"))
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	got := b.String()
	if n := strings.Count(got, "ab\n"); n != 800 || len(got) != 800*3 {
		t.Fatalf("%d whole writes in %d bytes, want 800 in 2400", n, len(got))
	}
}
