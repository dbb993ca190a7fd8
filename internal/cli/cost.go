package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/view"
)

func newCostCmd(env *Env) *cobra.Command {
	var id string
	var all, asJSON bool
	cmd := &cobra.Command{
		Use:   "cost",
		Short: "sum the model calls of a task (or of every task): calls, tokens, cost",
		Long: `Sum the model_call events of the task's transcript per phase and in total:
calls, calls answered from the cache, failed calls, tokens in and out, and
the cost in USD where the model's price is known (orch's price table is
dated; a call to a model without a known price is counted as unpriced,
never guessed). Tokens and cost count only calls that reached a model.

--task defaults to the current task; --all sums every task of the project.`,
		Example: `  orch cost
  orch cost --task 0007-add-retry --json
  orch cost --all`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if all && id != "" {
				return exit.New(exit.ErrUsage, "--all and --task exclude each other")
			}
			p, err := env.project()
			if err != nil {
				return err
			}
			tid := ""
			if !all {
				if tid, err = taskID(p, id); err != nil {
					return err
				}
			}
			out, err := view.CostOf(p, tid, all)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if asJSON {
				return json.NewEncoder(w).Encode(out)
			}
			printCost(w, out)
			return nil
		},
	}
	taskFlag(cmd, &id)
	cmd.Flags().BoolVar(&all, "all", false, "sum every task of the project")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the sums as one JSON object")
	return cmd
}

// printCost writes the sums as a table.
func printCost(w io.Writer, out view.Cost) {
	row := func(name string, l agent.CostLine) {
		fmt.Fprintf(w, "%-22s %6d %7d %7d %11d %11d %11d %10s\n", name, l.Calls, l.CachedCalls, l.FailedCalls, l.TokensIn, l.CachedTokensIn, l.TokensOut, agent.FormatCost(l))
	}
	header := func(first string) {
		fmt.Fprintf(w, "%-22s %6s %7s %7s %11s %11s %11s %10s\n", first, "calls", "cached", "failed", "tokens in", "of which", "tokens out", "cost")
		fmt.Fprintf(w, "%-22s %6s %7s %7s %11s %11s %11s %10s\n", "", "", "", "", "", "from cache", "", "")
	}
	if out.Tasks != nil {
		fmt.Fprintf(w, "model calls of every task (prices as of %s)\n", out.PricesAsOf)
		header("task")
		for _, t := range out.Tasks {
			row(t.Task, t.Total)
		}
	} else {
		fmt.Fprintf(w, "model calls of task %s (prices as of %s)\n", out.Task, out.PricesAsOf)
		header("phase")
		for _, p := range out.Phases {
			row(p.Phase, p.CostLine)
		}
	}
	row("total", out.Total)
	for _, u := range out.Budgets {
		fmt.Fprintf(w, "budget %-12s %-10s %s of %s (%.0f%%)\n", u.Scope, u.Limit, budgetFigure(u.Limit, u.Spent), budgetFigure(u.Limit, u.Max), u.Percent)
	}
	if out.Total.UnpricedCalls > 0 {
		fmt.Fprintf(w, "%d call(s) to a model without a known price are not in the cost (their tokens are); price the model under [prices] in .orch/config.toml\n", out.Total.UnpricedCalls)
	}
}

// budgetFigure renders a budget amount for people.
func budgetFigure(limit string, v float64) string {
	switch limit {
	case "cost_usd":
		return agent.FormatUSD(v)
	case "wall_time":
		return (time.Duration(v * float64(time.Second))).Round(time.Millisecond).String()
	}
	return fmt.Sprintf("%.0f", v)
}
