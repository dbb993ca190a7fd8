package agent

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/orchdev/orch/internal/agent/tools"
	"github.com/orchdev/orch/internal/work"
)

// ReadOnlyWorkspace returns the read-only tools' workspace over run in's
// view of the repository at its base (in.Repo) when role's provider
// speaks tool calling, else nil (the role answers once, from what its
// prompt carries). The tools read the repository only through that view.
func ReadOnlyWorkspace(ctx context.Context, rt *Runtime, in work.Input, role string) (*tools.Workspace, error) {
	if !rt.ToolsFor(role) {
		return nil, nil
	}
	policy, err := rt.Policy()
	if err != nil {
		return nil, err
	}
	view, err := RunView(in)
	if err != nil {
		return nil, err
	}
	ws := tools.NewView(view, policy)
	rt.WithOutline(ctx, ws, in.Repo) // the map's index: built once for both
	return ws, nil
}

// RunView is the run's view of the repository at its base commit
// (Input.Repo), through which the read-only roles read the repository,
// its map and their prompts' context; an error when the run was given
// none.
func RunView(in work.Input) (work.Repo, error) {
	if in.Repo == nil {
		if in.BaseErr != nil {
			return nil, fmt.Errorf("the repository at the base commit: %w", in.BaseErr)
		}
		return nil, fmt.Errorf("the run was given no view of the repository at its base commit")
	}
	return in.Repo, nil
}

// PromptCacheKey groups the requests of one task and role that share a
// prompt prefix (OpenAI's prompt_cache_key).
func PromptCacheKey(taskID, role string) string {
	base, _, _ := strings.Cut(role, ":")
	return "orch-" + taskID + "-" + base
}

// WithOutline gives ws the definitions of the files at the view's commit
// from the repository map's index, for read_file's outline of a large
// file; without an index (it cannot be built) read_file answers a window
// alone.
func (rt *Runtime) WithOutline(ctx context.Context, ws *tools.Workspace, view work.Repo) {
	ix, err := rt.ViewIndex(ctx, view)
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
