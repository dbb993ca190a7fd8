package board

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The watcher reports a task changed by the CLI's code, a new task, with
// file-system notifications and with polling alike.
func TestWatcher(t *testing.T) {
	for _, poll := range []bool{false, true} {
		name := map[bool]string{false: "notify", true: "poll"}[poll]
		t.Run(name, func(t *testing.T) {
			f := NewFixture(t)
			f.Task("w1", "one")
			w := newWatcher(f.P.TasksDir())
			w.forcePoll = poll
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			sub, stop := w.subscribe()
			defer stop()
			done := make(chan struct{})
			go func() { defer close(done); w.run(ctx) }()
			defer func() { cancel(); <-done }()
			expect := func(id string) {
				t.Helper()
				deadline := time.After(20 * time.Second)
				for {
					select {
					case <-sub.wake:
						for _, got := range sub.take() {
							if got == id {
								return
							}
						}
					case <-deadline:
						t.Fatalf("no change of %s reported", id)
					}
				}
			}
			// Wait until the watcher runs (its mode is set after the
			// baseline scan).
			<-w.ready
			if w.Mode() != name {
				t.Fatalf("mode %q, want %q", w.Mode(), name)
			}
			f.Move("w1", "codegen")
			expect("w1")
			f.Task("w2", "two")
			expect("w2")
			// A change of the new task, whose folder appeared after the
			// watch began.
			f.Move("w2", "review")
			expect("w2")
		})
	}
}

// The events stream says which task changed.
func TestEvents(t *testing.T) {
	f := NewFixture(t)
	f.Task("e1", "one")
	s, ts := f.Board(Options{})
	req, _ := http.NewRequest("GET", ts.URL+"/events?task=e1", nil)
	req.AddCookie(&http.Cookie{Name: s.guard.cookie, Value: s.Token()})
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	r := bufio.NewReader(res.Body)
	// The stream opens with a comment before anything changes.
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, ": orch board") {
			break
		}
	}
	<-s.Ready()
	f.Move("e1", "codegen")
	var event string
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, "event: ") {
			event = strings.TrimSpace(strings.TrimPrefix(line, "event: "))
		}
		if strings.HasPrefix(line, "data: ") && event == "change" {
			if !strings.Contains(line, `"e1"`) {
				t.Fatalf("change event %q does not name e1", line)
			}
			return
		}
	}
}
