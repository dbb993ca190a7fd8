package planner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/agent/agenttest"
	"github.com/orchdev/orch/internal/artifact"
)

func TestRenderPlanMarkdown(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "plan_full.json"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := artifact.DecodePlan(artifact.PlanFile, data)
	if err != nil {
		t.Fatal(err)
	}
	agenttest.Golden(t, "plan_full.md.golden", RenderMarkdown(p))
}

// FuzzRenderPlanMarkdown: any plan the contract accepts renders, with its
// title as the first line and no raw newline inside a table row.
func FuzzRenderPlanMarkdown(f *testing.F) {
	if data, err := os.ReadFile(filepath.Join("testdata", "plan_full.json")); err == nil {
		f.Add(data)
	}
	f.Add([]byte(`{"id":"a","title":"t\nx","brief":"b","file_plan":[{"path":"a|b","intent":"create","summary":"x\ny|z"}]}`))
	f.Add([]byte(`{"id":"a","title":"t","brief":"b","goals":[1,null,{"a":[]}],"test_plan":{"cases":"x"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := artifact.DecodePlan(artifact.PlanFile, data)
		if err != nil {
			return
		}
		md := RenderMarkdown(p)
		first, _, _ := strings.Cut(md, "\n")
		if first != "# "+agent.MarkdownLine(p.Title) {
			t.Fatalf("first line %q", first)
		}
		for _, line := range strings.Split(md, "\n") {
			if strings.HasPrefix(line, "| `") && !strings.HasSuffix(line, " |") {
				t.Fatalf("broken table row %q", line)
			}
		}
	})
}
