package agent_test

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/docblock"
	"github.com/orchdev/orch/internal/llm"
	"github.com/orchdev/orch/internal/task"
)

// readmeBlock returns the first ```toml block of README's section below
// heading.
func readmeBlock(t *testing.T, heading string) string {
	t.Helper()
	blocks := docblock.Fenced(docblock.Section(t, filepath.Join("..", "..", "README.md"), heading), "toml")
	if len(blocks) == 0 {
		t.Fatalf("README.md has no toml block below %q", heading)
	}
	return blocks[0]
}

// TestReadmeRoleSettings: README's block of per-role limits, reasoning
// effort, tools and prices parses and means what the text says.
func TestReadmeRoleSettings(t *testing.T) {
	cfg, err := config.Parse("README block", []byte(readmeBlock(t, "### Per-role limits, reasoning effort, tools and prices")))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	p, _, err := task.InitProject(root)
	if err != nil {
		t.Fatal(err)
	}
	rt := agent.NewRuntime(p, cfg, func(string) string { return "" })
	for _, tc := range []struct {
		role   string
		tokens int
		effort string
		tools  bool
	}{
		{"planner", 16000, "high", false},
		{"plan_reviewer:risk", 4000, "", false},
		{"codegen", 32000, "", true},
		{"code_reviewer:tests", 16000, "low", false},
		{"accept_advisor", 16000, "", false},
	} {
		req := llm.Request{Role: tc.role}
		rt.Limits(&req)
		if req.MaxTokens != tc.tokens || req.ReasoningEffort != tc.effort {
			t.Errorf("%s: max_tokens %d effort %q, want %d %q", tc.role, req.MaxTokens, req.ReasoningEffort, tc.tokens, tc.effort)
		}
		if got := rt.ToolsFor(tc.role); got != tc.tools {
			t.Errorf("%s: tool calling %v, want %v", tc.role, got, tc.tools)
		}
	}
	// 1M plain input, 1M read from the cache, 1M written to it, 1M output.
	u := llm.Usage{InputTokens: 3_000_000, CachedInputTokens: 1_000_000, CacheWriteTokens: 1_000_000, OutputTokens: 1_000_000}
	got, ok := rt.Cost("my-model", u)
	if want := 0.50 + 0.05 + 0.60 + 2.00; !ok || math.Abs(got-want) > 1e-9 {
		t.Errorf("cost %v (priced %v), want %v", got, ok, want)
	}
}
