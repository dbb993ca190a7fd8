package repl

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/orchdev/orch/internal/termtext"
)

// Spinner timing: how often it turns, and how long the output must have
// been quiet before it shows (so it never fights streamed output).
const (
	spinEvery = 120 * time.Millisecond
	spinQuiet = 400 * time.Millisecond
)

// screen serializes a command's stdout, its stderr and the spinner on one
// terminal. The spinner is drawn only at the start of a line after the
// output has been quiet for spinQuiet, and erased before any output, so
// it never interleaves with what the command prints.
type screen struct {
	mu        sync.Mutex
	out, err  io.Writer
	spinner   bool // draw a spinner (stderr is a terminal)
	now       func() time.Time
	lineStart bool      // the last byte written was a newline (or nothing was written)
	lastWrite time.Time // when output last arrived
	shown     bool      // the spinner is on the screen
	label     string    // what runs
	started   time.Time // when it started
	frame     int
	held      bool     // a pager has the terminal: no spinner, notes wait
	notes     []string // notes that waited for the pager
	// take hands the terminal to a pager (the line editor stops reading
	// keys) and returns it with giveBack; nil or !ok: it cannot.
	take func() (tty *os.File, giveBack func(), ok bool)
	// width is the terminal's width in columns (nil: unknown).
	width func() int
}

func newScreen(out, err io.Writer, spinner bool, now func() time.Time) *screen {
	return &screen{out: out, err: err, spinner: spinner, now: now, lineStart: true}
}

// screenWriter is stdout or stderr of the running command.
type screenWriter struct {
	s   *screen
	dst io.Writer
}

func (w screenWriter) Write(p []byte) (int, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	w.s.eraseLocked()
	n, err := w.dst.Write(p)
	if n > 0 {
		w.s.lineStart = p[n-1] == '\n'
		w.s.lastWrite = w.s.now()
	}
	return n, err
}

// IsTerminal reports whether the output is a terminal: commands that
// stream model tokens only when writing to one may ask (the writer is not
// an *os.File).
func (w screenWriter) IsTerminal() bool { return w.s.spinner }

// TerminalWidth is the terminal's width in columns, 0 when unknown.
func (w screenWriter) TerminalWidth() int {
	if !w.s.spinner || w.s.width == nil {
		return 0
	}
	return w.s.width()
}

// TakeTerminal hands the terminal to a pager a command starts: the
// spinner is erased and stays off and the line editor stops reading keys
// until giveBack.
func (w screenWriter) TakeTerminal() (tty *os.File, giveBack func(), ok bool) {
	if !w.s.spinner || w.s.take == nil {
		return nil, nil, false
	}
	tty, back, ok := w.s.take()
	if !ok {
		return nil, nil, false
	}
	w.s.mu.Lock()
	w.s.eraseLocked()
	if !w.s.lineStart {
		io.WriteString(w.s.out, "\n")
		w.s.lineStart = true
	}
	w.s.held = true
	w.s.mu.Unlock()
	return tty, func() {
		back()
		w.s.mu.Lock()
		w.s.held = false
		w.s.lastWrite = w.s.now()
		for _, n := range w.s.notes {
			w.s.noteLocked(n)
		}
		w.s.notes = nil
		w.s.mu.Unlock()
	}, true
}

func (s *screen) stdout() io.Writer { return screenWriter{s, s.out} }
func (s *screen) stderr() io.Writer { return screenWriter{s, s.err} }

func (s *screen) eraseLocked() {
	if s.shown {
		io.WriteString(s.err, "\r\x1b[K")
		s.shown = false
	}
}

// start begins a command: the spinner (when enabled) turns until the
// returned stop is called; stop erases it and ends the output's last line.
func (s *screen) start(label string) (stop func()) {
	s.mu.Lock()
	s.label, s.started, s.lastWrite, s.frame = label, s.now(), s.now(), 0
	s.mu.Unlock()
	done := make(chan struct{})
	var wg sync.WaitGroup
	if s.spinner {
		wg.Go(func() {
			t := time.NewTicker(spinEvery)
			defer t.Stop()
			for {
				select {
				case <-done:
					return
				case <-t.C:
					s.tick()
				}
			}
		})
	}
	return func() {
		close(done)
		wg.Wait()
		s.mu.Lock()
		defer s.mu.Unlock()
		s.eraseLocked()
		if !s.lineStart {
			io.WriteString(s.out, "\n")
			s.lineStart = true
		}
	}
}

// tick draws the next spinner frame when the cursor is at the start of a
// line and the output has been quiet.
func (s *screen) tick() {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if s.held || !s.lineStart || now.Sub(s.lastWrite) < spinQuiet {
		return
	}
	frames := []rune("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")
	fmt.Fprintf(s.err, "\r%c %s  %s  (Ctrl-C cancels)\x1b[K", frames[s.frame%len(frames)], termtext.Line(s.label), elapsed(now.Sub(s.started)))
	s.frame++
	s.shown = true
}

// note prints a line of the session's own (a cancel notice) between the
// command's output.
func (s *screen) note(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held {
		// Not over the pager's screen: after it.
		s.notes = append(s.notes, msg)
		return
	}
	s.noteLocked(msg)
}

func (s *screen) noteLocked(msg string) {
	s.eraseLocked()
	if !s.lineStart {
		io.WriteString(s.err, "\n")
	}
	io.WriteString(s.err, termtext.Sanitize(msg)+"\n")
	s.lineStart = true
	s.lastWrite = s.now()
}

// elapsed formats a duration as 4.2s or 3m07s.
func elapsed(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	d = d.Round(time.Second)
	return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
}
