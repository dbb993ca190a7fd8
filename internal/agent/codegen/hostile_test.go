package codegen

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/agent/agenttest"
	"github.com/orchdev/orch/internal/agent/tools"
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/hostile"
	"github.com/orchdev/orch/internal/patch"
	"github.com/orchdev/orch/internal/phasetest"
)

// The shared hostile corpus (internal/hostile) through codegen's model
// answers, end to end (the planner's are in the planner's tests): codegen.Run
// in a real git repository, the answers served by the script provider and
// by a command provider (as "text", and as "json" when the answer is JSON).
// Every hostile answer is refused with the reason, the task keeps its
// phase without a new artifact, and nothing outside .orch/ changes: the
// repository, a sentinel folder beside it, the test's temporary folders.

// TestHostileCodegenAnswers runs codegen.Run on every "answer-codegen"
// document through every provider, in a repository with a symbolic link
// to /etc.
func TestHostileCodegenAnswers(t *testing.T) {
	passwd, _ := os.ReadFile("/etc/passwd")
	docs := hostile.JSONGroup("answer-codegen")
	for _, name := range hostile.Names(docs) {
		answer := string(docs[name])
		t.Run(strings.TrimSuffix(filepath.Base(name), ".json"), func(t *testing.T) {
			t.Parallel()
			f := agenttest.NewCodeEnvWithLink(t)
			providers := agenttest.AnswerProviders(t, agent.RoleCodegen, answer)
			watch := agenttest.WatchOutside(t, f.Root)
			for via, pc := range providers {
				_, err := phasetest.Run(context.Background(), f.O, f.ID, Worker{RT: f.Runtime(pc)})
				if err == nil {
					t.Fatalf("via %s: accepted", via)
				}
				t.Logf("via %s: %s", via, agent.ShortPath(err.Error()))
				if !hostile.Matches(name, err.Error()) {
					t.Errorf("via %s: %q\nwant one of %q", via, agent.ShortPath(err.Error()), hostile.Expect(name))
				}
				if f.Phase() != "codegen" {
					t.Errorf("via %s: phase %s", via, f.Phase())
				}
				if f.Exists("code") {
					t.Errorf("via %s: code/ written", via)
				}
			}
			watch.Check("codegen")
			if now, _ := os.ReadFile("/etc/passwd"); string(now) != string(passwd) {
				t.Fatal("/etc/passwd changed")
			}
		})
	}
}

// TestHostileCodegenPaths: every refused corpus path, written or deleted
// by a codegen answer, is refused by CheckAnswer (what Run
// runs on each answer, after CompleteJSON's checks) naming the field and
// the path.
func TestHostileCodegenPaths(t *testing.T) {
	for _, c := range hostile.PathCases() {
		q := hostile.JSONString(c.Path)
		for field, raw := range map[string]string{
			"files[1].path": `{"status":"completed","files":[{"path":"calc.go","content":"x"},{"path":` + q + `,"content":"x"}],"deletes":[]}`,
			"deletes[0]":    `{"status":"completed","files":[],"deletes":[` + q + `]}`,
		} {
			_, err := agenttest.AnswerChain([]byte(raw), CheckAnswer)
			// A model's "./x" is the harmless form of "x": made plain.
			if plain := tools.NormalizePath(c.Path); plain != c.Path && artifact.CheckPath(plain) == nil {
				if err != nil {
					t.Errorf("%s as %s: the plain form %q is fine, yet refused: %v", c, field, plain, err)
				}
				continue
			}
			if c.Verdict == hostile.Allow {
				if err != nil {
					t.Errorf("%s as %s: refused: %v", c, field, err)
				}
				continue
			}
			if err == nil {
				t.Errorf("%s as %s: accepted", c, field)
				continue
			}
			if agenttest.IsUTF8(c.Path) && !strings.Contains(err.Error(), field+": unsafe path") {
				t.Errorf("%s as %s: %q", c, field, agent.ShortPath(err.Error()))
			}
		}
	}
}

// TestOddNamesStayInside: one codegen answer writing every "allow" corpus
// name (option-like, pathspec magic, full-width dots, combining marks…)
// is accepted through the command provider: each file lands under
// code/files exactly as named, the patch names exactly those files, the
// repository and everything beside it are untouched, and `orch next`
// takes the planned change on to review.
func TestOddNamesStayInside(t *testing.T) {
	f := agenttest.NewCodeEnv(t, nil)
	var files []map[string]string
	want := map[string]bool{}
	var planned []string
	for _, p := range hostile.AllowedPaths() {
		files = append(files, map[string]string{"path": p, "content": "odd " + p + "\n"})
		want[p] = true
		planned = append(planned, p+"\tcreate")
	}
	f.PlanWith(planned...)
	answer := agenttest.JSONOf(t, map[string]any{"status": "completed", "files": files, "deletes": []string{}})
	provider := agenttest.AnswerProviders(t, agent.RoleCodegen, answer)["command-text"]
	watch := agenttest.WatchOutside(t, f.Root)
	res, err := phasetest.Run(context.Background(), f.O, f.ID, Worker{RT: f.Runtime(provider)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Record.Unplanned) != 0 || len(res.Record.Files) != len(want) {
		t.Errorf("%d unplanned paths and %d files, want 0 and %d", len(res.Record.Unplanned), len(res.Record.Files), len(want))
	}
	scan := artifact.ScanCodeFiles(f.Task.Dir)
	if !scan.OK() || len(scan.Value) != len(want) {
		t.Fatalf("code/files: %v %v", scan.Value, scan.Err)
	}
	for _, p := range scan.Value {
		if !want[p] {
			t.Errorf("code/files holds %q, which the answer did not name", p)
		}
		if got := f.Read(artifact.CodeFilesDir + "/" + p); got != "odd "+p+"\n" {
			t.Errorf("code/files/%s holds %q", p, got)
		}
	}
	d := artifact.LoadDiff(f.Task.Dir)
	if !d.OK() || len(d.Value.Files) != len(want) {
		t.Fatalf("diff.patch: %+v %v", d.Value.Files, d.Err)
	}
	for _, e := range d.Value.Files {
		if e.Op != patch.OpCreate || !want[e.NewPath] {
			t.Errorf("diff.patch entry %+v", e)
		}
	}
	watch.Check("codegen of odd names")
	if to := f.Next(); to != "review" {
		t.Errorf("orch next went to %s, want review", to)
	}
}
