package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/task"
)

func newStatusCmd(env *Env) *cobra.Command {
	var id string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "show the phase, each outgoing edge and why it holds or not, and the suggestion",
		Example: `  orch status
  orch status --task 0007-add-retry --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o, err := env.orchestrator(0)
			if err != nil {
				return err
			}
			tid, err := taskID(o.Project, id)
			if err != nil {
				return err
			}
			v, err := o.Status(tid)
			if err != nil {
				return err
			}
			v.Warnings = budgetWarnings(o.Project, tid)
			open := ""
			if t, err := o.Project.Open(tid); err == nil {
				open = firstOpenQuestion(t, v.Phase)
			}
			s := stepFor(v, open)
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(statusJSON{StatusView: v, Run: s.Args})
			}
			printStatus(cmd.OutOrStdout(), v)
			fmt.Fprintln(cmd.OutOrStdout(), env.stepLine(s))
			return nil
		},
	}
	taskFlag(cmd, &id)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print {task, phase, revision, actors, edges[], suggested, reason}")
	return cmd
}

// statusJSON is `orch status --json`: the contract's fields plus run, the
// command that moves the task on ("codegen", "answer q1 TEXT"; "" when
// none), without the leading "orch".
type statusJSON struct {
	orchestrator.StatusView
	Run string `json:"run"`
}

// budgetWarnings lists the budgets at 80 % or more. Status stays useful
// when the configuration or the transcript cannot be read: that is
// reported by the commands that need them.
func budgetWarnings(p *task.Project, id string) []string {
	cfg, err := config.Load(p.Dir)
	if err != nil {
		return nil
	}
	t, err := p.Open(id)
	if err != nil {
		return nil
	}
	evs, err := t.Transcript()
	if err != nil {
		return nil
	}
	return agent.BudgetWarnings(cfg.Budgets, agent.SumCosts(evs))
}

func printStatus(w io.Writer, v orchestrator.StatusView) {
	defer func() {
		for _, warn := range v.Warnings {
			fmt.Fprintf(w, "warning: %s\n", warn)
		}
	}()
	fmt.Fprintf(w, "task %s  phase %s  revision %d  updated %s\n", v.Task, v.Phase, v.Revision, v.UpdatedAt.Local().Format("2006-01-02 15:04:05"))
	if v.Pending != nil {
		fmt.Fprintf(w, "note: %s\n", v.Pending)
	}
	if len(v.Actors) > 0 {
		names := make([]string, 0, len(v.Actors))
		for k := range v.Actors {
			names = append(names, string(k))
		}
		sort.Strings(names)
		var parts []string
		for _, k := range names {
			var kv []string
			fields := v.Actors[lifecycle.Phase(k)].Values()
			keys := make([]string, 0, len(fields))
			for kk := range fields {
				keys = append(keys, kk)
			}
			sort.Strings(keys)
			for _, kk := range keys {
				kv = append(kv, fmt.Sprintf("%s=%v", kk, fields[kk]))
			}
			parts = append(parts, fmt.Sprintf("%s(%s)", k, strings.Join(kv, " ")))
		}
		fmt.Fprintf(w, "actors: %s\n", strings.Join(parts, " "))
	}
	if len(v.Edges) == 0 {
		fmt.Fprintf(w, "%s\n", v.Reason)
		return
	}
	fmt.Fprintln(w, "edges:")
	for _, e := range v.Edges {
		mark := "no "
		if e.Holds {
			mark = "yes"
		}
		fmt.Fprintf(w, "  [%s] → %-11s %s: %s\n", mark, e.To, e.Cond, e.Reason)
	}
	for _, inv := range v.Invalid {
		fmt.Fprintf(w, "invalid: %s\n", inv)
	}
	if v.Suggested != nil {
		fmt.Fprintf(w, "suggested: %s (%s)\n", *v.Suggested, v.Reason)
		return
	}
	fmt.Fprintf(w, "suggested: none: %s\n", v.Reason)
}
