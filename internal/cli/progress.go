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

func newProgress(w io.Writer, live bool, now func() time.Time) *progress {
	pr := &progress{w: w, live: live, now: now, start: now(), done: make(chan struct{})}
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
	line := fmt.Sprintf("%s: %s", role, describeTool(name, args))
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
	return fmt.Sprintf("%s %s · %ds · ~%d tokens", frame, role, int(el.Seconds()), (pr.chars+3)/4)
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

// describeTool is the short form of a tool call a person reads:
// "read command.go:780-792", "edit command.go", "search SuggestionsMin".
func describeTool(name string, raw json.RawMessage) string {
	var a struct {
		Path    string `json:"path"`
		Pattern string `json:"pattern"`
		Glob    string `json:"glob"`
		Offset  int    `json:"offset"`
		Limit   int    `json:"limit"`
	}
	_ = json.Unmarshal(raw, &a)
	path := oneLine(a.Path, 80)
	switch name {
	case tools.ReadFile:
		switch {
		case a.Offset > 0 && a.Limit > 0:
			return fmt.Sprintf("read %s:%d-%d", path, a.Offset, a.Offset+a.Limit-1)
		case a.Offset > 0:
			return fmt.Sprintf("read %s:%d-", path, a.Offset)
		}
		return "read " + path
	case tools.EditFile:
		return "edit " + path
	case tools.WriteFile:
		return "write " + path
	case tools.DeleteFile:
		return "delete " + path
	case tools.Search:
		s := "search " + oneLine(a.Pattern, 60)
		if path != "" {
			s += " in " + path
		}
		return s
	case tools.ListFiles:
		if path == "" && a.Pattern == "" {
			return "list files"
		}
		return "list " + strings.TrimSpace(path+" "+oneLine(a.Pattern, 40))
	case tools.RunTests:
		return "run the tests"
	}
	return oneLine(name, 40)
}

// oneLine keeps the first line of s, at most n runes, without control
// characters (a model's arguments are untrusted text shown in a terminal).
func oneLine(s string, n int) string {
	s, _, _ = strings.Cut(s, "\n")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
			return -1
		}
		return r
	}, s)
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
