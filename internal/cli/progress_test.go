package cli

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/syncbuf"
)

// Without a terminal: one plain line per tool call, nothing of the
// model's streamed answer, no escape codes.
func TestProgressPlain(t *testing.T) {
	var w syncbuf.Buffer
	now := time.Unix(0, 0)
	pr := newProgress(&w, false, func() time.Time { return now }, "codegen")
	pr.token("codegen", `{"status": "completed", "files": [`)
	pr.tool("codegen", "read_file", json.RawMessage(`{"path":"calc.go","offset":1,"limit":20}`), false)
	pr.tool("codegen", "edit_file", json.RawMessage(`{"path":"/etc/passwd"}`), true)
	pr.stop()
	want := "codegen: read calc.go:1-20\ncodegen: edit /etc/passwd (refused)\n"
	if got := w.String(); got != want {
		t.Errorf("plain progress:\n%q\nwant:\n%q", got, want)
	}
}

// In a terminal: the status line names the role, the seconds and the
// tokens so far; tool lines are printed above it; stop clears it.
func TestProgressLive(t *testing.T) {
	var w syncbuf.Buffer
	var mu sync.Mutex
	now := time.Unix(0, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	pr := newProgress(&w, true, clock, "planner")
	pr.token("planner", strings.Repeat("x", 400))
	mu.Lock()
	now = now.Add(12 * time.Second)
	mu.Unlock()
	pr.mu.Lock()
	line := pr.statusLine()
	pr.draw()
	pr.mu.Unlock()
	if !strings.Contains(line, "planner · 12s · ~100 tokens") {
		t.Errorf("status line %q", line)
	}
	pr.tool("planner", "search", json.RawMessage(`{"pattern":"Fetch"}`), false)
	pr.stop()
	out := w.String()
	if !strings.Contains(out, "\r\x1b[Kplanner: search Fetch\n") {
		t.Errorf("the tool line does not replace the status line:\n%q", out)
	}
	if !strings.HasSuffix(out, "\r\x1b[K") {
		t.Errorf("stop does not clear the status line:\n%q", out)
	}
	if strings.Contains(out, "xxxx") {
		t.Errorf("the model's streamed answer was echoed:\n%q", out)
	}
}

// The repository map's first-index progress shows in the status line;
// its last line ("…, done.") stays, like git clone's.
func TestProgressMapIndex(t *testing.T) {
	var w syncbuf.Buffer
	now := time.Unix(0, 0)
	pr := newProgress(&w, true, func() time.Time { return now }, "planner")
	m := mapProgress{pr}
	m.Write([]byte("\rIndexing the repository map:  45% (45/100 files)"))
	pr.mu.Lock()
	line := pr.statusLine()
	pr.mu.Unlock()
	if !strings.Contains(line, "Indexing the repository map:  45% (45/100 files)") {
		t.Errorf("status line %q", line)
	}
	m.Write([]byte("\rIndexing the repository map: 100% (100/100 files), done.\n"))
	pr.stop()
	if out := w.String(); !strings.Contains(out, "\r\x1b[KIndexing the repository map: 100% (100/100 files), done.\n") {
		t.Errorf("the last line is not kept:\n%q", out)
	}

	// Without a terminal the runtime gets no progress writer at all.
	env := &Env{Getenv: func(string) string { return "" }}
	if rt := env.agentRuntime(nil, config.Config{}, false, newProgress(&w, false, time.Now, "planner")); rt.MapProgress != nil {
		t.Error("a map progress writer without a terminal")
	}
}
