package syncbuf

import (
	"strings"
	"sync"
	"testing"
	"time"
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

// Await sees a write made after it started waiting; it gives up at the
// timeout, and at once when the buffer is closed.
func TestAwait(t *testing.T) {
	var b Buffer
	go func() { _, _ = b.Write([]byte("hello")) }()
	if !b.Await(time.Minute, func(s string) bool { return s == "hello" }) {
		t.Fatalf("Await missed the write: %q", b.String())
	}
	if b.Await(10*time.Millisecond, func(s string) bool { return s == "never" }) {
		t.Fatal("Await matched what was never written")
	}
	go b.Close()
	if b.Await(time.Hour, func(s string) bool { return false }) {
		t.Fatal("Await matched after Close")
	}
}
