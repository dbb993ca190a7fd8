package orchestrator

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/hostile"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/patch"
	"github.com/orchdev/orch/internal/task"
)

// The shared hostile corpus (internal/hostile) through what `orch next`
// and `orch status` inspect: the file plan (planning.ai.json's file_plan
// and plan.files.json), code/files on disk and code/diff.patch. Each is
// refused as an invalid artifact (exit 4) whose message names the file,
// the JSON path or line, and the path; state.json and the transcript stay
// byte for byte; and nothing outside the task folder changes.

// hostileEnv is a project in parent/repo beside parent/sentinel.
type hostileEnv struct {
	t      *testing.T
	parent string
	o      *Orchestrator
	tk     *task.Task
	before map[string]string
	state  []byte
	log    []byte
}

func newHostileEnv(t *testing.T) *hostileEnv {
	t.Helper()
	parent := t.TempDir()
	repo := filepath.Join(parent, "repo")
	write(t, parent, "sentinel/passwd", "root:x:0:0::/root:/bin/sh\n")
	write(t, repo, "a.go", "package a\n")
	// A real repository: codegen → review applies the patch to the base
	// commit to compare it with code/files (README, "Evidence is bound to the change").
	gittest.Git(t, repo, "init", "-q")
	gittest.CommitAll(t, repo, "base")
	o, tk := newTaskIn(t, repo)
	return &hostileEnv{t: t, parent: parent, o: o, tk: tk}
}

// taskRel is the task folder relative to parent, left out of snapshots.
func (e *hostileEnv) taskRel() string {
	rel, err := filepath.Rel(e.parent, e.tk.Dir)
	if err != nil {
		e.t.Fatal(err)
	}
	return filepath.ToSlash(rel)
}

// cacheRel is the folder of the readers' observation cache
// (docs/artifacts.md): `orch status` may write there, and nowhere else
// outside the task folder. `orch init` creates .orch/cache.
func (e *hostileEnv) cacheRel() string {
	e.t.Helper()
	cache := filepath.Join(e.o.Project.Dir, "cache")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		e.t.Fatal(err)
	}
	rel, err := filepath.Rel(e.parent, filepath.Join(cache, "observed"))
	if err != nil {
		e.t.Fatal(err)
	}
	return filepath.ToSlash(rel)
}

// mark records the world before a series of refusals.
func (e *hostileEnv) mark() {
	e.t.Helper()
	var err error
	if e.before, err = hostile.Snapshot(e.parent, e.taskRel(), e.cacheRel()); err != nil {
		e.t.Fatal(err)
	}
	e.state = e.read("state.json")
	e.log = e.read("transcript.jsonl")
}

func (e *hostileEnv) read(rel string) []byte {
	e.t.Helper()
	data, err := os.ReadFile(filepath.Join(e.tk.Dir, filepath.FromSlash(rel)))
	if err != nil {
		e.t.Fatal(err)
	}
	return data
}

// refused runs `orch next` and `orch status` and checks the refusal: an
// invalid artifact naming file and every fragment of want, nothing
// changed.
func (e *hostileEnv) refused(what, file string, want ...string) {
	e.t.Helper()
	_, err := e.o.Next(context.Background(), "t", NextRequest{})
	if !errors.Is(err, exit.ErrInvalid) {
		e.t.Errorf("%s: next = %v, want an invalid artifact", what, err)
		return
	}
	msg := err.Error()
	if !strings.Contains(msg, "invalid artifact: "+file) {
		e.t.Errorf("%s: %q does not name %s", what, msg, file)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			e.t.Errorf("%s: %q does not say %q", what, msg, w)
		}
	}
	v, err := e.o.Status("t")
	if err != nil || len(v.Invalid) == 0 || !strings.HasPrefix(v.Invalid[0], file) || v.Suggested != nil {
		e.t.Errorf("%s: status = %+v, %v", what, v, err)
	}
	if !bytes.Equal(e.read("state.json"), e.state) || !bytes.Equal(e.read("transcript.jsonl"), e.log) {
		e.t.Errorf("%s: state.json or the transcript changed", what)
	}
}

// outsideUnchanged checks the snapshot taken by mark.
func (e *hostileEnv) outsideUnchanged() {
	e.t.Helper()
	after, err := hostile.Snapshot(e.parent, e.taskRel(), e.cacheRel())
	if err != nil {
		e.t.Fatal(err)
	}
	if ch := hostile.Changes(e.before, after); len(ch) > 0 {
		e.t.Errorf("changed outside the task folder:\n%s", strings.Join(ch, "\n"))
	}
}

// mentions returns what a refusal of p must quote: the path itself when
// the message can show it (UTF-8, not blank, not cut).
func mentions(p string) []string {
	if strings.ToValidUTF8(p, "") != p || strings.TrimSpace(p) == "" || len(p) > 150 {
		return nil
	}
	return []string{strconv.Quote(p)}
}

const goodPlan = `{"id":"t","title":"T","brief":"b","file_plan":[{"path":"a.go","intent":"update"}]}`

// TestHostileFilePlans: every refused path in planning.ai.json's
// file_plan and in plan.files.json, and every "plan" and "files" JSON
// document, stops `orch next` in planning.
func TestHostileFilePlans(t *testing.T) {
	e := newHostileEnv(t)
	e.mark()
	for _, c := range hostile.PathCases() {
		if c.Verdict != hostile.Refuse {
			continue
		}
		entry := `{"path":` + hostile.JSONString(c.Path) + `,"intent":"create"}`
		write(t, e.tk.Dir, artifact.PlanFile, `{"id":"t","title":"T","brief":"b","file_plan":[{"path":"a.go","intent":"update"},`+entry+`]}`)
		want := mentions(c.Path)
		if want != nil {
			want = append(want, "$.file_plan[1].path")
		}
		e.refused(c.String()+" in file_plan", artifact.PlanFile, want...)

		write(t, e.tk.Dir, artifact.PlanFile, goodPlan)
		write(t, e.tk.Dir, artifact.FilePlanFile, `{"files":[`+entry+`]}`)
		if want != nil {
			want[1] = "$.files[0].path"
		}
		e.refused(c.String()+" in plan.files.json", artifact.FilePlanFile, want...)
		if err := os.Remove(filepath.Join(e.tk.Dir, filepath.FromSlash(artifact.FilePlanFile))); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range hostile.Names(hostile.JSONGroup("plan")) {
		write(t, e.tk.Dir, artifact.PlanFile, string(hostile.JSONDocs()[name]))
		e.refused(name, artifact.PlanFile)
	}
	write(t, e.tk.Dir, artifact.PlanFile, goodPlan)
	for _, name := range hostile.Names(hostile.JSONGroup("files")) {
		write(t, e.tk.Dir, artifact.FilePlanFile, string(hostile.JSONDocs()[name]))
		e.refused(name, artifact.FilePlanFile)
	}
	e.outsideUnchanged()
}

// goodPatch updates a.go, the planned file.
const goodPatch = "diff --git a/a.go b/a.go\nindex 1111111..2222222 100644\n--- a/a.go\n+++ b/a.go\n@@ -1 +1 @@\n-package a\n+package a // changed\n"

// toCodegen moves the task to codegen with a complete, valid result.
func (e *hostileEnv) toCodegen() {
	e.t.Helper()
	write(e.t, e.tk.Dir, artifact.PlanFile, goodPlan)
	reason := "hostile inputs test"
	if _, err := e.o.Next(context.Background(), "t", NextRequest{To: lifecycle.Codegen, Override: &reason}); err != nil {
		e.t.Fatal(err)
	}
	head := gittest.Git(e.t, e.o.Project.Root, "rev-parse", "HEAD")
	write(e.t, e.tk.Dir, artifact.CodegenFile, `{"status":"completed","base":"`+head+`"}`)
	e.resetCode()
	if v, err := e.o.Status("t"); err != nil || v.Suggested == nil || *v.Suggested != lifecycle.Review {
		e.t.Fatalf("the valid codegen result does not lead to review: %+v, %v", v, err)
	}
}

// resetCode puts back code/files/a.go and the good patch.
func (e *hostileEnv) resetCode() {
	e.t.Helper()
	if err := os.RemoveAll(filepath.Join(e.tk.Dir, "code", "files")); err != nil {
		e.t.Fatal(err)
	}
	write(e.t, e.tk.Dir, artifact.CodeFilesDir+"/a.go", "package a // changed\n")
	write(e.t, e.tk.Dir, artifact.DiffFile, goodPatch)
}

// TestHostileCodegenArtifacts: every hostile patch as code/diff.patch,
// every refused corpus name created under code/files (where the file
// system allows), and links there, stop `orch next` in codegen.
func TestHostileCodegenArtifacts(t *testing.T) {
	e := newHostileEnv(t)
	e.toCodegen()
	e.mark()
	for _, name := range hostile.Names(hostile.Patches()) {
		data := hostile.Patches()[name]
		_, perr := patch.Parse(bytes.NewReader(data))
		if perr == nil {
			t.Fatalf("%s: ParseDiff accepted it", name)
		}
		write(t, e.tk.Dir, artifact.DiffFile, string(data))
		e.refused(name, artifact.DiffFile, perr.Error())
	}
	e.resetCode()
	created := 0
	files := filepath.Join(e.tk.Dir, filepath.FromSlash(artifact.CodeFilesDir))
	for _, c := range hostile.PathCases() {
		if c.Verdict != hostile.Refuse || !hostile.Creatable(c.Path) || strings.Count(c.Path, "/") > 256 {
			continue
		}
		e.resetCode()
		if !createBelow(files, c.Path) {
			continue
		}
		created++
		e.refused(c.String()+" under code/files", artifact.CodeFilesDir, "expected safe repository-relative file names")
	}
	if created < 80 {
		t.Errorf("only %d hostile names could be created under code/files", created)
	}
	outside := filepath.Join(e.parent, "sentinel", "passwd")
	for _, l := range []struct{ rel, target string }{
		{"passwd", outside},
		{"up.go", "../../../../../sentinel/passwd"},
		{"vendor", filepath.Dir(outside)},
		{"a/b/root", "/"},
	} {
		e.resetCode()
		p := filepath.Join(files, filepath.FromSlash(l.rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(l.target, p); err != nil {
			t.Fatal(err)
		}
		e.refused("link code/files/"+l.rel, artifact.CodeFilesDir+"/"+l.rel, "symbolic link")
	}
	e.outsideUnchanged()
}

// createBelow creates dir/p through an os.Root; false when the file
// system refuses the name.
func createBelow(dir, p string) bool {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return false
	}
	defer root.Close()
	if i := strings.LastIndexByte(p, '/'); i >= 0 && root.MkdirAll(p[:i], 0o755) != nil {
		return false
	}
	return root.WriteFile(p, []byte("x\n"), 0o644) == nil
}
