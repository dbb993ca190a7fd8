package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/orchdev/orch/internal/agent/tools"
	"github.com/orchdev/orch/internal/gitx"
)

// ReadOnlyWorkspace returns the read-only tools' workspace at HEAD when
// role's provider speaks tool calling, else nil (the role answers once,
// from what its prompt carries).
func ReadOnlyWorkspace(ctx context.Context, rt *Runtime, root, role string) (*tools.Workspace, error) {
	if !rt.ToolsFor(role) {
		return nil, nil
	}
	policy, err := rt.Policy()
	if err != nil {
		return nil, err
	}
	repo, err := gitx.Open(ctx, root)
	if err != nil {
		return nil, err
	}
	head, err := repo.Head(ctx)
	if err != nil {
		return nil, fmt.Errorf("the repository's HEAD: %w", err)
	}
	return tools.New(repo, head, policy), nil
}

// PromptCacheKey groups the requests of one task and role that share a
// prompt prefix (OpenAI's prompt_cache_key).
func PromptCacheKey(taskID, role string) string {
	base, _, _ := strings.Cut(role, ":")
	return "orch-" + taskID + "-" + base
}
