package testrun

import (
	"fmt"
	"io"
	"sync"
)

// cappedWriter passes the first limit bytes through to w and drops the
// rest, writing a one-line marker when it starts dropping and a count when
// it is closed. It is safe for concurrent use (stdout and stderr of a suite
// may be read by different goroutines). Writes never fail towards the
// producer: the first error of w is kept and reported by Close.
type cappedWriter struct {
	mu      sync.Mutex
	w       io.Writer
	limit   int64
	written int64
	dropped int64
	marked  bool // the cap marker was written
	err     error
}

func newCappedWriter(w io.Writer, limit int64) *cappedWriter {
	return &cappedWriter{w: w, limit: limit}
}

func (c *cappedWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	keep := p
	if room := max(c.limit-c.written, 0); int64(len(p)) > room {
		keep = p[:room]
	}
	if len(keep) > 0 {
		c.write(keep)
		c.written += int64(len(keep))
	}
	if rest := int64(len(p) - len(keep)); rest > 0 {
		c.dropped += rest
		if !c.marked {
			c.marked = true
			c.write(fmt.Appendf(nil, "\n[orch: output reached the %d-byte log cap; further output is dropped]\n", c.limit))
		}
	}
	return len(p), nil
}

// note writes an orch line that does not count against the cap.
func (c *cappedWriter) note(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.write(fmt.Appendf(nil, format, args...))
}

func (c *cappedWriter) write(p []byte) {
	if c.err != nil {
		return
	}
	if _, err := c.w.Write(p); err != nil {
		c.err = err
	}
}

// Dropped returns how many bytes were dropped so far.
func (c *cappedWriter) Dropped() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dropped
}

// Close writes the dropped count, if any, and returns the first write error.
func (c *cappedWriter) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dropped > 0 {
		c.write(fmt.Appendf(nil, "[orch: %d bytes of output dropped]\n", c.dropped))
	}
	return c.err
}

// quietWriter forwards to w and ignores its errors, so a broken live
// stream (a closed terminal) never stops the log.
type quietWriter struct {
	mu     sync.Mutex
	w      io.Writer
	broken bool
}

func (q *quietWriter) Write(p []byte) (int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.w != nil && !q.broken {
		if _, err := q.w.Write(p); err != nil {
			q.broken = true
		}
	}
	return len(p), nil
}
