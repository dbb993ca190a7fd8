package mcpserver

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/demo"
)

// TestResources: every artifact is a resource, reads give its bytes, and
// a subscriber hears of a change made through a tool and of one made on
// disk by someone else.
func TestResources(t *testing.T) {
	f := newFixture(t, "")
	f.call(ToolNewTask, map[string]any{"brief": "add a flag", "id": "t1"})
	brief := "orch://task/t1/planning/brief.md"
	var uris []string
	for r, err := range f.cs.Resources(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		uris = append(uris, r.URI)
	}
	if !slices.Contains(uris, brief) || slices.ContainsFunc(uris, func(u string) bool {
		return strings.HasSuffix(u, "state.json") || strings.HasSuffix(u, ".jsonl") && strings.Contains(u, "transcript")
	}) {
		t.Errorf("resources: %v", uris)
	}
	rr, err := f.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: brief})
	if err != nil || len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, "add a flag") || rr.Contents[0].MIMEType != "text/markdown" {
		t.Fatalf("read %s: %+v %v", brief, rr, err)
	}
	for _, bad := range []string{"orch://task/t1/state.json", "orch://task/t1/transcript.jsonl", "orch://task/t1/planning/%2e%2e/state.json", "orch://task/../planning/brief.md", "orch://task/t9/planning/brief.md"} {
		if _, err := f.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: bad}); err == nil {
			t.Errorf("read %s: no error", bad)
		}
	}

	plan := ArtifactURI("t1", artifact.PlanFile)
	if err := f.cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: plan}); err != nil {
		t.Fatal(err)
	}
	f.call(ToolWriteArtifact, map[string]any{"task": "t1", "path": artifact.PlanFile, "content": validPlan})
	f.waitUpdated(plan)
	rr, err = f.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: plan})
	if err != nil || rr.Contents[0].Text != validPlan {
		t.Fatalf("re-read: %+v %v", rr, err)
	}
	// A change on disk by someone else (a person's editor) is noticed by
	// the watcher's next scan.
	tk, _ := f.project.Open("t1")
	edited := strings.Replace(validPlan, "Add a flag", "Add a long flag", 1)
	if err := os.WriteFile(filepath.Join(tk.Dir, artifact.PlanFile), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	f.srv.watch.scan(context.Background())
	f.waitUpdated(plan)
}

// TestRunPhaseProgress runs the demo's planning round through run_phase
// with a progress token: the client hears the start and the end.
func TestRunPhaseProgress(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "textkit")
	p, err := demo.Prepare(context.Background(), dir, "script")
	if err != nil {
		t.Fatal(err)
	}
	f := connect(t, dir, p)
	f.call(ToolNewTask, map[string]any{"brief": demo.Brief, "id": demo.TaskID})
	params := &mcp.CallToolParams{Name: ToolRunPhase, Arguments: map[string]any{"phase": "planning"}}
	params.SetProgressToken("plan-1")
	res, err := f.cs.CallTool(context.Background(), params)
	if err != nil || res.IsError {
		t.Fatalf("run_phase: %v %s", err, text(res))
	}
	f.mu.Lock()
	got := slices.Clone(f.progress)
	f.mu.Unlock()
	if len(got) < 2 || got[0] != "planning: started (plan)" || !strings.HasPrefix(got[len(got)-1], "planning: ") || !strings.Contains(got[len(got)-1], " after ") {
		t.Errorf("progress: %q", got)
	}
	out := f.call(ToolStatus, nil)
	if n := out["next"].(map[string]any); n["tool"] != ToolAnswer || n["arguments"].(map[string]any)["question"] != "q1" {
		t.Errorf("after the first round (the planner asks q1), next: %v", n)
	}
	if fin := f.events(demo.TaskID, "phase_finished"); len(fin) != 1 {
		t.Errorf("phase_finished events: %d", len(fin))
	}
}
