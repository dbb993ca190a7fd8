// Package phasetest holds the fixture of the tests of the phases that touch
// the user's repository through git (packages testphase and landing): a
// repository with one commit and a task moved to a phase, with a plan, the
// changed file and a patch. Only tests import it.
package phasetest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/task"
	"github.com/orchdev/orch/internal/work"
)

// ReadmePatch is the fixture's change: it creates notes/readme.txt.
const ReadmePatch = `diff --git a/notes/readme.txt b/notes/readme.txt
new file mode 100644
--- /dev/null
+++ b/notes/readme.txt
@@ -0,0 +1 @@
+hello
`

// Fixture is a repository with one commit (a.txt) and task "t" in it.
type Fixture struct {
	Dir  string // the repository
	Base string // its commit, the base codegen.json names
	O    *orchestrator.Orchestrator
	Task *task.Task
	// Cfg is the default configuration with one suite, "readme", which
	// passes when notes/readme.txt exists.
	Cfg config.Config
}

// New makes a Fixture whose task was moved to phase (by an override) with
// a plan naming notes/readme.txt, code/files/ holding it, ReadmePatch as
// code/diff.patch and a codegen.json naming the commit as base.
func New(t testing.TB, phase lifecycle.Phase) Fixture {
	t.Helper()
	dir, base := gittest.Seed(t, map[string]string{"a.txt": "a\n"})
	p, _, err := task.InitProject(dir)
	if err != nil {
		t.Fatal(err)
	}
	tk, _, err := p.CreateTask("t", "add a readme", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	f := Fixture{Dir: dir, Base: base, O: orchestrator.New(p), Task: tk, Cfg: config.Default()}
	f.O.Wait = 5 * time.Second
	files := map[string]string{
		"planning/planning.ai.json":   `{"id":"t","title":"Add a readme","brief":"b","file_plan":[{"path":"notes/readme.txt","intent":"create"}]}`,
		"code/files/notes/readme.txt": "hello\n",
		"code/diff.patch":             ReadmePatch,
		"code/codegen.json":           `{"status":"completed","base":"` + f.Base + `"}`,
	}
	for rel, content := range files {
		gittest.Write(t, tk.Dir, rel, content)
	}
	reason := "test setup"
	if _, err := f.O.Next(context.Background(), "t", orchestrator.NextRequest{To: phase, Override: &reason}); err != nil {
		t.Fatal(err)
	}
	f.Cfg.Test.Suites = []config.Suite{{Name: "readme", Kind: "test", Command: config.Command{"sh", "-c", "test -f notes/readme.txt"}}}
	return f
}

// LastFinished returns the summary of the task's last phase_finished
// event.
func LastFinished(t testing.TB, tk *task.Task) event.PhaseSummary {
	t.Helper()
	events, err := tk.Transcript()
	if err != nil {
		t.Fatal(err)
	}
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Kind == event.KindPhaseFinished {
			p, err := events[i].Decode()
			if err != nil {
				t.Fatal(err)
			}
			if sum := p.(event.PhaseFinished).Summary; sum != nil {
				return *sum
			}
			return event.PhaseSummary{}
		}
	}
	t.Fatal("no phase_finished event")
	return event.PhaseSummary{}
}

// PathWithoutBwrap makes PATH hold git and sh only, for the rest of t.
func PathWithoutBwrap(t *testing.T) {
	t.Helper()
	bin := t.TempDir()
	for _, name := range []string{"git", "sh"} {
		p, err := exec.LookPath(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(p, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin)
}

// Run runs worker w for task id through the engine (orchestrator.Run)
// and returns its typed result: what the phases' tests call where the
// registry (internal/worker) cannot be imported.
func Run[R any](ctx context.Context, o *orchestrator.Orchestrator, id string, w work.Worker[R]) (R, error) {
	_, res, err := orchestrator.Run(ctx, o, id, w)
	return res.Value, err
}
