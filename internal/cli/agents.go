package cli

import (
	"fmt"
	"io"
	"sync"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/task"
)

// agentRuntime builds the agents' runtime for project p. Streamed tokens go
// to w when stream is set (a terminal), so a person sees the model work.
func (env *Env) agentRuntime(p *task.Project, cfg config.Config, fresh bool, w io.Writer, stream bool) *agent.Runtime {
	rt := agent.NewRuntime(p, cfg, env.Getenv)
	rt.Fresh = fresh
	rt.Now = env.Now
	rt.Options = env.LLMOptions
	if stream && w != nil {
		var mu sync.Mutex
		last := ""
		rt.OnToken = func(role, tok string) {
			mu.Lock()
			defer mu.Unlock()
			if role != last {
				fmt.Fprintf(w, "\n[%s] ", role)
				last = role
			}
			fmt.Fprint(w, tok)
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
