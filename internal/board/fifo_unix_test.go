//go:build unix

package board

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/task"
)

// A named pipe, a device or a symbolic link where an artifact should be is
// refused at once, never read: the file route answers 404 naming what was
// found, and the task page, which reads the brief, the plan and the
// reviews, still renders. The client's timeout proves nothing blocks (a
// plain open of a FIFO waits for a writer forever).
func TestFileRefusesSpecialFilesWithoutBlocking(t *testing.T) {
	f := NewFixture(t)
	f.Task("f", "brief")
	for _, rel := range []string{"planning/plan.md", "review/plan-review.json", "history/pipe"} {
		p := filepath.Join(f.Dir("f"), filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Fatalf("mkfifo: %v", err)
		}
	}
	f.Write("f", "planning/real.md", "real")
	if err := os.Symlink("real.md", filepath.Join(f.Dir("f"), "planning", "link.md")); err != nil {
		t.Fatal(err)
	}
	s, ts := f.Board(Options{})
	c := client()
	c.Timeout = 10 * time.Second
	fetch := func(path string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", ts.URL+path, nil)
		req.AddCookie(&http.Cookie{Name: s.guard.cookie, Value: s.Token()})
		start := time.Now()
		res, err := c.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v (after %s: the reader blocked)", path, err, time.Since(start))
		}
		defer res.Body.Close()
		b := new(strings.Builder)
		buf := make([]byte, 4096)
		for {
			n, err := res.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		return res.StatusCode, b.String()
	}
	for rel, what := range map[string]string{
		"planning/plan.md":        "a named pipe",
		"review/plan-review.json": "a named pipe",
		"history/pipe":            "a named pipe",
		"planning/link.md":        "a symbolic link",
		"/dev/null":               "",
	} {
		code, body := fetch("/task/f/file?path=" + url.QueryEscape(rel))
		if code == http.StatusOK || (what != "" && !strings.Contains(body, what)) {
			t.Errorf("file %s: %d %q, want a refusal naming %q", rel, code, body, what)
		}
	}
	if code, body := fetch("/task/f/file?path=planning/real.md"); code != http.StatusOK || body != "real" {
		t.Errorf("a regular file: %d %q", code, body)
	}
	if code, body := fetch("/task/f"); code != http.StatusOK || !strings.Contains(body, "brief") {
		t.Errorf("task page with pipes among its artifacts: %d", code)
	}
}

// TestCardLinksAndPipes: a card reads a transcript that is a named pipe
// without blocking (the card shows no cost), and a state.json or
// transcript that is a symbolic link (inside the task folder, which the
// readers follow) is never taken from the cards' cache, whose identity
// would be the link's: a same-size edit of what it points to shows.
func TestCardLinksAndPipes(t *testing.T) {
	f := NewFixture(t)
	f.Task("l1", "linked")
	f.Plan("l1", "Linked", "", nil)
	f.Task("p1", "piped")
	s, _ := f.Board(Options{})
	tk, err := f.P.Open("l1")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{task.StateFile, task.TranscriptFile} {
		p := filepath.Join(tk.Dir, name)
		if err := os.Rename(p, p+".real"); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(name+".real", p); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what string) {
		t.Helper()
		since := tickPast(t, s, filepath.Join(tk.Dir, task.StateFile+".real"), filepath.Join(tk.Dir, task.TranscriptFile+".real"))
		cm := s.states.committed(tk, since, true, &s.costs)
		st, pending, err := tk.CommittedState()
		if cm.st.Phase != st.Phase || cm.st.Revision != st.Revision || (cm.pending == nil) != (pending == nil) || fmt.Sprint(cm.err) != fmt.Sprint(err) {
			t.Fatalf("%s: the card's state %+v, %v, %v; CommittedState %+v, %v, %v", what, cm.st, cm.pending, cm.err, st, pending, err)
		}
	}
	check("linked")
	check("linked, again")
	real := filepath.Join(tk.Dir, task.StateFile+".real")
	b, err := os.ReadFile(real)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(b), `"revision":1`, `"revision":7`, 1)
	if edited == string(b) {
		t.Fatalf("no revision 1 in %s", b)
	}
	if err := os.WriteFile(real, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	check("what state.json links to edited")

	pipe := filepath.Join(f.Dir("p1"), task.TranscriptFile)
	if err := os.Remove(pipe); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	done := make(chan Card, 1)
	go func() { done <- s.card(task.Summary{ID: "p1"}) }()
	select {
	case c := <-done:
		if c.Cost != "" || c.Phase != lifecycle.Planning {
			t.Fatalf("a card with a piped transcript: %+v", c)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the card blocked on a transcript that is a named pipe")
	}
}
