package phases

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/task"
)

// fixture is a repository with one commit and a task moved to phase,
// with a patch that creates notes/readme.txt and a codegen.json naming
// the commit as base.
type fixture struct {
	dir  string
	base string
	o    *orchestrator.Orchestrator
	tk   *task.Task
	cfg  config.Config
}

const readmePatch = `diff --git a/notes/readme.txt b/notes/readme.txt
new file mode 100644
--- /dev/null
+++ b/notes/readme.txt
@@ -0,0 +1 @@
+hello
`

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t.invalid", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func newFixture(t *testing.T, phase lifecycle.Phase) fixture {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, "init", "-q")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-qm", "base")
	p, _, err := task.InitProject(dir)
	if err != nil {
		t.Fatal(err)
	}
	tk, _, err := p.CreateTask("t", "add a readme", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	f := fixture{dir: dir, base: gitIn(t, dir, "rev-parse", "HEAD"), o: orchestrator.New(p), tk: tk, cfg: config.Default()}
	f.o.Wait = 5 * time.Second
	files := map[string]string{
		"planning/planning.ai.json":   `{"id":"t","title":"Add a readme","brief":"b","file_plan":[{"path":"notes/readme.txt","intent":"create"}]}`,
		"code/files/notes/readme.txt": "hello\n",
		"code/diff.patch":             readmePatch,
		"code/codegen.json":           `{"status":"completed","base":"` + f.base + `"}`,
	}
	for rel, content := range files {
		path := filepath.Join(tk.Dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	reason := "test setup"
	if _, err := f.o.Next(context.Background(), "t", orchestrator.NextRequest{To: phase, Override: &reason}); err != nil {
		t.Fatal(err)
	}
	f.cfg.Test.Suites = []config.Suite{{Name: "readme", Kind: "test", Command: config.Command{"sh", "-c", "test -f notes/readme.txt"}}}
	return f
}

// lastFinished returns the summary of the last phase_finished event.
func lastFinished(t *testing.T, tk *task.Task) map[string]any {
	t.Helper()
	events, err := tk.Transcript()
	if err != nil {
		t.Fatal(err)
	}
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Kind == "phase_finished" {
			sum, _ := events[i].Data["summary"].(map[string]any)
			return sum
		}
	}
	t.Fatal("no phase_finished event")
	return nil
}

// pathWithoutBwrap makes PATH hold git and sh only.
func pathWithoutBwrap(t *testing.T) {
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

// TestTestRecordsTheOptOut: sandbox "none" runs the suites and is
// recorded in the report (sandbox and a note) and the transcript.
func TestTestRecordsTheOptOut(t *testing.T) {
	f := newFixture(t, lifecycle.Test)
	f.cfg.Test.Sandbox = "none"
	res, err := Test(context.Background(), f.o, f.cfg, "t", TestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rep := res.Report
	if rep.Status != artifact.TestCompleted || !rep.OverallPass || rep.Sandbox != "none" {
		t.Fatalf("report %+v", rep)
	}
	if !slices.ContainsFunc(rep.Notes, func(n string) bool {
		return strings.Contains(n, `sandbox disabled (sandbox "none", an explicit opt-out)`)
	}) {
		t.Errorf("notes %q lack the opt-out", rep.Notes)
	}
	data, err := os.ReadFile(filepath.Join(f.tk.Dir, filepath.FromSlash(artifact.TestReportFile)))
	if err != nil {
		t.Fatal(err)
	}
	var onDisk Report
	if err := json.Unmarshal(data, &onDisk); err != nil || onDisk.Sandbox != "none" || len(onDisk.Notes) == 0 {
		t.Errorf("test/report.json: sandbox %q notes %q (%v)", onDisk.Sandbox, onDisk.Notes, err)
	}
	if sum := lastFinished(t, f.tk); sum["sandbox"] != "none" {
		t.Errorf("phase_finished summary %v lacks sandbox none", sum)
	}
}

// TestTestRefusesWithoutSandbox: with the default sandbox ("auto") and no
// bwrap, orch test refuses before it creates a worktree, says how to
// install bubblewrap or opt out, and records the refusal.
func TestTestRefusesWithoutSandbox(t *testing.T) {
	f := newFixture(t, lifecycle.Test)
	pathWithoutBwrap(t)
	for _, sandbox := range []string{"", "auto", "bwrap"} {
		res, err := Test(context.Background(), f.o, f.cfg, "t", TestOptions{Sandbox: sandbox})
		if err != nil {
			t.Fatal(err)
		}
		rep := res.Report
		if rep.Status != artifact.TestError || rep.OverallPass || rep.Sandbox != "" || len(rep.Suites) != 0 {
			t.Errorf("sandbox %q: report %+v, want a refusal", sandbox, rep)
		}
		for _, want := range []string{"refusing to run the suites without a sandbox", "apt-get install bubblewrap", `sandbox = "none"`} {
			if !strings.Contains(rep.Error, want) {
				t.Errorf("sandbox %q: error %q lacks %q", sandbox, rep.Error, want)
			}
		}
		if sum := lastFinished(t, f.tk); sum["status"] != artifact.TestError {
			t.Errorf("phase_finished summary %v", sum)
		}
	}
	if wts := gitIn(t, f.dir, "worktree", "list", "--porcelain"); strings.Count(wts, "worktree ") != 1 {
		t.Errorf("a worktree was created although the run was refused:\n%s", wts)
	}
}

// TestAcceptRefusesBeforeCommittingWithoutSandbox: when HEAD moved, accept
// must re-run the suites on its commit; without a sandbox it refuses
// before anything is applied or committed.
func TestAcceptRefusesBeforeCommittingWithoutSandbox(t *testing.T) {
	f := newFixture(t, lifecycle.Accept)
	if err := os.WriteFile(filepath.Join(f.dir, "b.txt"), []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, f.dir, "add", "b.txt")
	gitIn(t, f.dir, "commit", "-qm", "HEAD moves")
	head := gitIn(t, f.dir, "rev-parse", "HEAD")
	pathWithoutBwrap(t)
	_, err := Accept(context.Background(), f.o, f.cfg, "t", AcceptOptions{
		Verdict: artifact.VerdictAccepted, Reasons: []string{"ok"}, AllowIncomplete: true,
		Decider: artifact.Decider{Kind: "human", Name: "t"},
	})
	if !errors.Is(err, orchestrator.ErrRefused) || !strings.Contains(err.Error(), "apt-get install bubblewrap") || !strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("err = %v, want a refusal that says how to install bubblewrap", err)
	}
	if got := gitIn(t, f.dir, "rev-parse", "HEAD"); got != head {
		t.Errorf("HEAD moved to %s", got)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "notes", "readme.txt")); err == nil {
		t.Error("the change was applied to the working tree")
	}
	if st := gitIn(t, f.dir, "status", "--porcelain", "--untracked-files=no"); st != "" {
		t.Errorf("the index or working tree changed:\n%s", st)
	}
}
