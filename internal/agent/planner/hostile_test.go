package planner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/agent/agenttest"
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/hostile"
	"github.com/orchdev/orch/internal/phasetest"
)

// TestHostilePlannerAnswers runs planner.Plan on every "answer-plan"
// document through every provider.
func TestHostilePlannerAnswers(t *testing.T) {
	docs := hostile.JSONGroup("answer-plan")
	for _, name := range hostile.Names(docs) {
		answer := string(docs[name])
		t.Run(strings.TrimSuffix(filepath.Base(name), ".json"), func(t *testing.T) {
			t.Parallel()
			e := agenttest.NewPlanEnv(t, nil, agenttest.Brief, "")
			if err := os.Symlink("/etc", filepath.Join(e.Root, "link")); err != nil {
				t.Fatal(err)
			}
			agenttest.Git(t, e.Root, "add", "link")
			agenttest.Git(t, e.Root, "commit", "-qm", "link")
			providers := agenttest.AnswerProviders(t, agent.RolePlanner, answer)
			watch := agenttest.WatchOutside(t, e.Root)
			for via, pc := range providers {
				cfg := config.Default()
				cfg.Providers = map[string]config.Provider{"default": pc}
				rt := agent.NewRuntime(e.P, cfg, func(string) string { return "" })
				rt.Now = e.Clock.Now
				_, err := phasetest.Run(agenttest.Ctx, e.O, e.ID, Worker{RT: rt})
				if err == nil {
					t.Fatalf("via %s: accepted", via)
				}
				t.Logf("via %s: %s", via, agent.ShortPath(err.Error()))
				if !hostile.Matches(name, err.Error()) {
					t.Errorf("via %s: %q\nwant one of %q", via, agent.ShortPath(err.Error()), hostile.Expect(name))
				}
				if st := e.State(); st.Phase != "planning" {
					t.Errorf("via %s: phase %s", via, st.Phase)
				}
				for _, f := range []string{artifact.PlanFile, artifact.FilePlanFile, artifact.PlanMarkdownFile} {
					if e.Exists(f) {
						t.Errorf("via %s: %s written", via, f)
					}
				}
			}
			watch.Check("planning")
		})
	}
}

// TestHostilePlanPaths: every refused corpus path, as the first or a later
// file_plan entry of a planner answer, is refused by the planner's check
// (what Plan runs on each answer: CompleteJSON's checks, then buildPlan)
// with the JSON path and the path.
func TestHostilePlanPaths(t *testing.T) {
	e := agenttest.NewPlanEnv(t, nil, agenttest.Brief, "")
	const placeholder = "@@path@@"
	for _, c := range hostile.PathCases() {
		for i, files := range [][]map[string]any{
			{{"path": placeholder, "intent": "create", "summary": "s"}},
			{agenttest.FileEntry("fetch/fetch.go", "update"), {"path": placeholder, "intent": "create", "summary": "s"}},
		} {
			// json.Marshal would turn invalid UTF-8 into U+FFFD: the path
			// goes in as its exact bytes.
			raw := []byte(strings.Replace(agenttest.JSONOf(t, agenttest.PlannerAnswer("Retry", files)), `"`+placeholder+`"`, hostile.JSONString(c.Path), 1))
			_, err := agenttest.AnswerChain(raw, func(b []byte) (builtPlan, error) { return buildPlan(b, e.ID, agenttest.Brief, nil, e.Root) })
			if c.Verdict == hostile.Allow {
				if err != nil {
					t.Errorf("%s: refused: %v", c, err)
				}
				continue
			}
			if err == nil {
				t.Errorf("%s: accepted", c)
				continue
			}
			if !agenttest.IsUTF8(c.Path) || strings.TrimSpace(c.Path) == "" {
				continue // refused as a document, or as a blank string
			}
			at := "$.file_plan[" + string(rune('0'+i)) + "].path"
			if msg := err.Error(); !strings.Contains(msg, at) || !strings.Contains(msg, "unsafe path") && !strings.Contains(msg, "expected a safe") {
				t.Errorf("%s: %q does not name %s and the path", c, agent.ShortPath(msg), at)
			}
		}
	}
}

// TestOddNamesPlanned: a planner answer planning every "allow" name is
// accepted, and plan.files.json lists them all.
func TestOddNamesPlanned(t *testing.T) {
	var files []map[string]any
	for _, p := range hostile.AllowedPaths() {
		files = append(files, map[string]any{"path": p, "intent": "create", "summary": "odd"})
	}
	e := agenttest.NewPlanEnv(t, nil, agenttest.Brief, agenttest.ScriptConfig(t, agenttest.ScriptEntry("planner", agenttest.PlannerAnswer("Odd names", files))))
	watch := agenttest.WatchOutside(t, e.Root)
	if _, err := phasetest.Run(agenttest.Ctx, e.O, e.ID, Worker{RT: e.Runtime()}); err != nil {
		t.Fatal(err)
	}
	fp := artifact.LoadFilePlan(e.TaskDir(), artifact.LoadPlan(e.TaskDir()))
	if !fp.OK() || fp.Value.Inferred || len(fp.Value.Files) != len(files) {
		t.Fatalf("plan.files.json: %+v %v", fp.Value, fp.Err)
	}
	watch.Check("planning of odd names")
}
