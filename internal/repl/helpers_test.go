package repl

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/task"
)

// watched is an output that tests wait on: every write wakes the waiters.
type watched struct {
	mu      sync.Mutex
	b       strings.Builder
	changed chan struct{}
}

func newWatched() *watched { return &watched{changed: make(chan struct{})} }

func (w *watched) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	close(w.changed)
	w.changed = make(chan struct{})
	return len(p), nil
}

func (w *watched) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// waitFor waits until the output contains want, failing the test after
// timeout.
func (w *watched) waitFor(t *testing.T, want string, timeout time.Duration) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		w.mu.Lock()
		got, changed := w.b.String(), w.changed
		w.mu.Unlock()
		if strings.Contains(got, want) {
			return
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("after %v the output lacks %q:\n%s", timeout, want, got)
		}
	}
}

// newProject makes a project in a temporary folder, with a task t1 in
// planning when withTask.
func newProject(t *testing.T, withTask bool) (dir string, p *task.Project) {
	t.Helper()
	dir = t.TempDir()
	p, _, err := task.InitProject(dir)
	if err != nil {
		t.Fatal(err)
	}
	if withTask {
		if _, _, err := p.CreateTask("t1", "add retry", time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
	}
	return dir, p
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
