// Package syncbuf holds Buffer, a bytes.Buffer that several goroutines may
// write to and read from at once: what tests give as the output of a
// progress ticker, a screen, a terminal or a running suite, and read or
// wait on while it is still being written. Only tests import it.
package syncbuf

import (
	"bytes"
	"sync"
	"time"
)

// Buffer is a bytes.Buffer guarded by a mutex; every write wakes the
// goroutines waiting in Await. The zero value is empty and ready to use.
type Buffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{} // closed at the next write or Close; nil when no one waits
	closed  bool
}

// Write appends p; it never fails.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wake()
	return s.b.Write(p)
}

// String returns what has been written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Close says that nothing more will be written: Await stops waiting.
func (s *Buffer) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.wake()
}

func (s *Buffer) wake() {
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
}

// Await calls match with the content now and after every write until match
// returns true, and then returns true. It returns false when timeout has
// passed or the buffer is closed without a match.
func (s *Buffer) Await(timeout time.Duration, match func(content string) bool) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		content, closed := s.b.String(), s.closed
		if s.changed == nil {
			s.changed = make(chan struct{})
		}
		changed := s.changed
		s.mu.Unlock()
		if match(content) {
			return true
		}
		if closed {
			return false
		}
		select {
		case <-changed:
		case <-deadline.C:
			return false
		}
	}
}
