package cli

import (
	"fmt"
	"io"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/task"
)

// agentRuntime builds the agents' runtime for project p. When pr is not
// nil it hears the streamed tokens and the tool calls, to show a person
// what the models do.
func (env *Env) agentRuntime(p *task.Project, cfg config.Config, fresh bool, pr *progress) *agent.Runtime {
	rt := agent.NewRuntime(p, cfg, env.Getenv)
	rt.Fresh = fresh
	rt.Now = env.Now
	rt.Options = env.LLMOptions
	if pr != nil {
		rt.OnToken = pr.token
		rt.OnTool = pr.tool
		if pr.live {
			rt.MapProgress = mapProgress{pr}
		}
	}
	return rt
}

// printNotes shows the runtime's remarks (which provider was chosen).
func printNotes(w io.Writer, rt *agent.Runtime) {
	for _, n := range rt.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}
