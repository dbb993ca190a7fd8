package repl

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/syncbuf"
	"github.com/orchdev/orch/internal/task"
)

// waitFor waits until out contains want, failing the test after timeout.
func waitFor(t *testing.T, out *syncbuf.Buffer, want string, timeout time.Duration) {
	t.Helper()
	if !out.Await(timeout, func(s string) bool { return strings.Contains(s, want) }) {
		t.Fatalf("after %v the output lacks %q:\n%s", timeout, want, out.String())
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
	gittest.Write(t, filepath.Dir(path), filepath.Base(path), content)
}
