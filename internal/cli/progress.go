package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/orchdev/orch/internal/agent/tools"
	"github.com/orchdev/orch/internal/termtext"
)

// progress shows a person what the models do while an agent command runs:
// one short line per tool call ("codegen: read command.go:780-792") and,
// in a terminal, a status line redrawn in place with the role, the
// elapsed time and the streamed tokens so far. Without a terminal only the
// tool-call lines are written, plain. The model's raw answer (JSON) is
// never echoed: the command renders the result when it is done.
type progress struct {
	w    io.Writer
	live bool // redraw a status line (a terminal, and not inside the REPL's spinner)
	now  func() time.Time

	mu      sync.Mutex
	start   time.Time
	role    string
	chars   int // streamed answer characters, for the token estimate
	drawn   bool
	stopped bool
	done    chan struct{}
}

var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// newProgress starts the display; role names who works until a model's
// role is heard ("planner", "plan reviewers").
func newProgress(w io.Writer, live bool, now func() time.Time, role string) *progress {
	pr := &progress{w: w, live: live, now: now, start: now(), role: role, done: make(chan struct{})}
	if live {
		go pr.tick()
	}
	return pr
}

// token counts a streamed fragment of role's answer.
func (pr *progress) token(role, tok string) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.role = role
	pr.chars += utf8.RuneCountInString(tok)
}

// tool writes one line for a tool call.
func (pr *progress) tool(role, name string, args json.RawMessage, refused bool) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.role = role
	pr.clear()
	// pr.w is the terminal itself (the status line is orch's drawing):
	// the line is sanitized here.
	line := termtext.Line(fmt.Sprintf("%s: %s", role, tools.Describe(name, args)))
	if refused {
		line += " (refused)"
	}
	fmt.Fprintln(pr.w, line)
	pr.draw()
}

// stop removes the status line; the command prints its result next.
func (pr *progress) stop() {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.stopped {
		return
	}
	pr.stopped = true
	close(pr.done)
	pr.clear()
}

func (pr *progress) tick() {
	t := time.NewTicker(120 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-pr.done:
			return
		case <-t.C:
			pr.mu.Lock()
			if !pr.stopped {
				pr.draw()
			}
			pr.mu.Unlock()
		}
	}
}

// statusLine is the live line: spinner, role, elapsed seconds, tokens.
func (pr *progress) statusLine() string {
	el := pr.now().Sub(pr.start)
	frame := spinnerFrames[int(el/(120*time.Millisecond))%len(spinnerFrames)]
	role := pr.role
	if role == "" {
		role = "waiting for the model"
	}
	return fmt.Sprintf("%s %s · %ds · ~%d tokens", frame, termtext.Line(role), int(el.Seconds()), (pr.chars+3)/4)
}

func (pr *progress) draw() {
	if !pr.live {
		return
	}
	fmt.Fprintf(pr.w, "\r\x1b[K%s", pr.statusLine())
	pr.drawn = true
}

func (pr *progress) clear() {
	if pr.live && pr.drawn {
		fmt.Fprint(pr.w, "\r\x1b[K")
		pr.drawn = false
	}
}

// mapProgress shows the repository map's progress line (a first index
// that takes more than a second: "\rIndexing the repository map:  45%
// (…)", then the same with ", done.\n") in the status line, and its
// last line once, like git clone.
type mapProgress struct{ pr *progress }

func (m mapProgress) Write(p []byte) (int, error) {
	s := string(p)
	done := strings.HasSuffix(s, "\n")
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\r'); i >= 0 {
		s = s[i+1:]
	}
	pr := m.pr
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.stopped || s == "" {
		return len(p), nil
	}
	if done {
		pr.clear()
		fmt.Fprintln(pr.w, termtext.Line(s))
		pr.role = ""
	} else {
		pr.role = s
	}
	pr.draw()
	return len(p), nil
}
