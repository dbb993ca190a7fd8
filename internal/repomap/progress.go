package repomap

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// progress reports a first index that takes more than a second, like
// git clone: one line, rewritten in place ("\r"), at most ten times a
// second, ended by a newline. Options.Progress is nil (no report) unless
// the caller writes to a terminal and not --json.
type progress struct {
	w     io.Writer
	total int
	now   func() time.Time

	mu    sync.Mutex
	done_ int
	start time.Time
	last  time.Time
	shown bool
}

// progressDelay is how long a build runs before its first progress line;
// progressEvery is the least time between two.
const (
	progressDelay = time.Second
	progressEvery = 100 * time.Millisecond
)

func newProgress(w io.Writer, total int) *progress {
	return newProgressAt(w, total, time.Now)
}

func newProgressAt(w io.Writer, total int, now func() time.Time) *progress {
	p := &progress{w: w, total: total, now: now}
	p.start = now()
	return p
}

// add counts n more files parsed.
func (p *progress) add(n int) {
	if p == nil || p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done_ += n
	t := p.now()
	if t.Sub(p.start) < progressDelay || t.Sub(p.last) < progressEvery && p.done_ < p.total {
		return
	}
	p.last = t
	p.shown = true
	fmt.Fprintf(p.w, "\r%s", p.line())
}

func (p *progress) line() string {
	pct := 100
	if p.total > 0 {
		pct = p.done_ * 100 / p.total
	}
	return fmt.Sprintf("Indexing the repository map: %3d%% (%d/%d files)", pct, p.done_, p.total)
}

// done ends the line, when one was shown, with the final count.
func (p *progress) done() {
	if p == nil || p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprintf(p.w, "\r%s, done.\n", p.line())
	}
}
