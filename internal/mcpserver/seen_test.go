package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/orchestrator"
)

// TestActingToolsTakeTheRevisionTheyRead: next, override, redo, answer,
// accept and revert given the revision the client read are refused with
// exit 3, saying what changed, when the task moved on since; nothing is
// done; given the task's revision they act.
func TestActingToolsTakeTheRevisionTheyRead(t *testing.T) {
	f := newFixture(t, "[mcp]\nallow = [\"accept\", \"revert\", \"override\", \"redo\"]\n")
	f.call(ToolNewTask, map[string]any{"brief": "add a flag", "id": "t1"})
	f.call(ToolWriteArtifact, map[string]any{"task": "t1", "path": "planning/planning.ai.json",
		"content": `{"id":"t1","title":"Flag","brief":"add a flag","questions":[{"id":"q1","text":"Which name?","blocking":true}],"file_plan":[{"path":"main.go","intent":"update"}]}`})
	o := f.srv.orchestrator()
	revision := func() int64 {
		t.Helper()
		v, err := o.Status("t1")
		if err != nil {
			t.Fatal(err)
		}
		return v.Revision
	}
	seen := revision()
	// Meanwhile, from a terminal: back and forth.
	reason := "looked at it on paper"
	for _, to := range []lifecycle.Phase{lifecycle.PlanReview, lifecycle.Planning} {
		if _, err := o.Next(context.Background(), "t1", nextReq(to, &reason)); err != nil {
			t.Fatal(err)
		}
	}
	now := revision()
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{ToolNext, map[string]any{"to": "plan_review"}},
		{ToolOverride, map[string]any{"reason": "skip", "to": "codegen"}},
		{ToolRedo, map[string]any{"phase": "planning", "reason": "again"}},
		{ToolAnswer, map[string]any{"question": "q1", "text": "--flag"}},
		{ToolAccept, map[string]any{"verdict": "rejected", "reasons": []string{"no"}}},
		{ToolRevert, map[string]any{"reason": "undo"}},
	} {
		c.args["task"], c.args["revision"] = "t1", seen
		msg := f.refused(c.tool, c.args)
		if !strings.Contains(msg, "moved planning → plan_review by override") || !strings.Contains(msg, "review it again") || !strings.Contains(msg, "exit code 3") {
			t.Errorf("%s on revision %d of a task at %d: %s", c.tool, seen, now, msg)
		}
		if r := revision(); r != now {
			t.Fatalf("a refused %s changed the task: revision %d → %d", c.tool, now, r)
		}
	}
	// On the revision as it is: carried out.
	a := f.call(ToolAnswer, map[string]any{"task": "t1", "question": "q1", "text": "--flag", "revision": now})
	if a["answer"] != "--flag" {
		t.Errorf("answer: %v", a)
	}
	r := f.call(ToolOverride, map[string]any{"task": "t1", "reason": "skip", "to": "codegen", "revision": revision()})
	if r["to"] != "codegen" {
		t.Errorf("override: %v", r)
	}
}

func nextReq(to lifecycle.Phase, override *string) orchestrator.NextRequest {
	return orchestrator.NextRequest{To: to, Override: override}
}
