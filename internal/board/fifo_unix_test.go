//go:build unix

package board

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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
