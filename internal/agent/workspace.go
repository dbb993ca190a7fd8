package agent

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/orchdev/orch/internal/agent/tools"
	"github.com/orchdev/orch/internal/gitx"
	"github.com/orchdev/orch/internal/repomap"
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
	ws := tools.New(repo, head, policy)
	rt.WithOutline(ctx, ws, root, "") // the map's index: built once for both
	return ws, nil
}

// PromptCacheKey groups the requests of one task and role that share a
// prompt prefix (OpenAI's prompt_cache_key).
func PromptCacheKey(taskID, role string) string {
	base, _, _ := strings.Cut(role, ":")
	return "orch-" + taskID + "-" + base
}

// WithOutline gives ws the definitions of the files at commit ("" = the
// index) from the repository map's index, for read_file's outline of a
// large file; without an index (it cannot be built) read_file answers a
// window alone.
func (rt *Runtime) WithOutline(ctx context.Context, ws *tools.Workspace, root, commit string) {
	policy, err := rt.Policy()
	if err != nil {
		return
	}
	ix, err := repomap.Build(ctx, root, repomap.Options{
		CacheDir: filepath.Join(rt.Project.OrchDir(), "cache", "repomap"),
		Commit:   commit,
		Policy:   policy,
		Progress: rt.MapProgress,
	})
	if err != nil {
		return
	}
	ws.SetOutline(func(p string) []tools.OutlineLine {
		defs, ok := ix.FileDefinitions(p)
		if !ok {
			return nil
		}
		out := make([]tools.OutlineLine, 0, len(defs))
		for _, d := range defs {
			sig := d.Sig
			if sig == "" {
				sig = d.Kind + " " + d.Name
			}
			out = append(out, tools.OutlineLine{Line: d.Line, Sig: sig})
		}
		sort.SliceStable(out, func(i, j int) bool { return out[i].Line < out[j].Line })
		return out
	})
}
