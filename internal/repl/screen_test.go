package repl

import (
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/syncbuf"
)

// clock is a manual clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// The spinner shows only at the start of a line after quiet output, and
// is erased before output and when the command ends.
func TestScreenSpinner(t *testing.T) {
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	var term syncbuf.Buffer // stdout and stderr on one terminal
	s := newScreen(&term, &term, false, clk.now)
	stop := s.start("/test")

	s.tick()
	if term.String() != "" {
		t.Fatalf("spinner drawn before the output was quiet: %q", term.String())
	}
	clk.add(2 * time.Second)
	s.tick()
	if got := term.String(); !strings.Contains(got, "⠋ /test  2.0s  (Ctrl-C cancels)\x1b[K") {
		t.Fatalf("no spinner after quiet: %q", got)
	}

	s.stdout().Write([]byte("suite go-test running"))
	if got := term.String(); !strings.HasSuffix(got, "\r\x1b[Ksuite go-test running") {
		t.Fatalf("spinner not erased before output: %q", got)
	}
	clk.add(5 * time.Second)
	before := term.String()
	s.tick()
	if term.String() != before {
		t.Fatalf("spinner drawn in the middle of a line: %q", term.String()[len(before):])
	}

	s.stderr().Write([]byte(" ... ok\n"))
	clk.add(time.Minute)
	s.tick()
	if got := term.String(); !strings.HasSuffix(got, "⠙ /test  1m07s  (Ctrl-C cancels)\x1b[K") {
		t.Fatalf("second frame: %q", got)
	}
	stop()
	if got := term.String(); !strings.HasSuffix(got, " ... ok\n\r\x1b[K\r\x1b[K") && !strings.HasSuffix(got, "(Ctrl-C cancels)\x1b[K\r\x1b[K") {
		t.Fatalf("spinner not erased at the end: %q", got)
	}
}

// A command whose output does not end with a newline gets one, so the
// prompt starts on its own line; notes go on their own line too.
func TestScreenLineEnds(t *testing.T) {
	var out, errw syncbuf.Buffer
	s := newScreen(&out, &errw, false, time.Now)
	stop := s.start("/status")
	s.stdout().Write([]byte("partial"))
	s.note("^C cancelling /status …")
	s.stdout().Write([]byte("more"))
	stop()
	if out.String() != "partialmore\n" {
		t.Errorf("stdout = %q", out.String())
	}
	if errw.String() != "\n^C cancelling /status …\n" {
		t.Errorf("stderr = %q", errw.String())
	}
}

// With the spinner enabled, the goroutine turns it and stops with stop.
func TestScreenSpinnerGoroutine(t *testing.T) {
	clk := &clock{t: time.Now()}
	term := &syncbuf.Buffer{}
	s := newScreen(term, term, true, clk.now)
	stop := s.start("/plan")
	clk.add(time.Hour)
	waitFor(t, term, "/plan  60m00s", 10*time.Second)
	stop()
	after := term.String()
	if !strings.HasSuffix(after, "\r\x1b[K") {
		t.Errorf("not erased: %q", after)
	}
}

// The command's writers say whether they reach a terminal.
func TestScreenWriterIsTerminal(t *testing.T) {
	type terminalWriter interface{ IsTerminal() bool }
	for _, term := range []bool{false, true} {
		s := newScreen(&syncbuf.Buffer{}, &syncbuf.Buffer{}, term, time.Now)
		for _, w := range []any{s.stdout(), s.stderr()} {
			tw, ok := w.(terminalWriter)
			if !ok || tw.IsTerminal() != term {
				t.Errorf("terminal %v: writer %T IsTerminal = %v", term, w, ok && tw.IsTerminal())
			}
		}
	}
}

func TestElapsed(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "0.0s", 4200 * time.Millisecond: "4.2s", 187 * time.Second: "3m07s", 61*time.Minute + 500*time.Millisecond: "61m01s"} {
		if got := elapsed(d); got != want {
			t.Errorf("elapsed(%v) = %q, want %q", d, got, want)
		}
	}
}

// While a pager has the terminal the spinner is not drawn and the
// session's notes wait until the pager is done.
func TestScreenHeldByPager(t *testing.T) {
	c := &clock{t: time.Unix(0, 0)}
	var out, errw syncbuf.Buffer
	s := newScreen(&out, &errw, true, c.now)
	tty := os.Stdout
	gaveBack := false
	s.take = func() (*os.File, func(), bool) { return tty, func() { gaveBack = true }, true }
	s.label, s.started, s.lastWrite = "show plan", c.now(), c.now()
	w := s.stdout().(screenWriter)
	got, giveBack, ok := w.TakeTerminal()
	if !ok || got != tty {
		t.Fatalf("TakeTerminal = %v, %v", got, ok)
	}
	c.add(time.Second)
	s.tick()
	s.note("cancelling show plan …")
	if errw.String() != "" {
		t.Fatalf("drawn over the pager: %q", errw.String())
	}
	giveBack()
	if !gaveBack || !strings.Contains(errw.String(), "cancelling show plan …\n") {
		t.Errorf("after the pager: gave back %v, stderr %q", gaveBack, errw.String())
	}
	c.add(time.Second)
	s.tick()
	if !strings.Contains(errw.String(), "show plan") || !strings.Contains(errw.String(), "Ctrl-C cancels") {
		t.Errorf("the spinner does not come back: %q", errw.String())
	}
	// Without a terminal there is nothing to hand over.
	plain := newScreen(&out, &errw, false, c.now)
	if _, _, ok := plain.stdout().(screenWriter).TakeTerminal(); ok {
		t.Errorf("a plain session handed over a terminal")
	}
}
