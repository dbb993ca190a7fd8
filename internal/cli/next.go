package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/nextstep"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/view"
)

func newNextCmd(env *Env) *cobra.Command {
	var id, to, from, override string
	var asJSON bool
	var wait time.Duration
	var ff fleetFlags
	cmd := &cobra.Command{
		Use:   "next",
		Short: "inspect the artifacts and take the first transition whose condition holds",
		Long: `Inspect the current phase's artifacts and take the first outgoing edge whose
condition holds (the order is the decision table in docs/lifecycle.md).

  --to PHASE          take the edge to PHASE, only if its condition holds
  --override REASON   move without checking conditions (to --to PHASE, default the
                      forward edge); the reason and the skipped conditions are logged
  --from PHASE        do nothing (exit 3) unless the task is in PHASE: safe retries

Exit codes: 0 moved, 2 usage, 3 refused (nothing holds, --from mismatch, done),
4 invalid state or artifact, 5 busy.`,
		Example: `  orch next
  orch next --from review --json
  orch next --to accept                       # after failing tests, on purpose
  orch next --override "hotfix, reviewed by hand" --to test`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var req orchestrator.NextRequest
			var err error
			if to != "" {
				if req.To, err = lifecycle.ParsePhase(to); err != nil {
					return exit.New(exit.ErrUsage, "--to: %v", err)
				}
			}
			if from != "" {
				if req.From, err = lifecycle.ParsePhase(from); err != nil {
					return exit.New(exit.ErrUsage, "--from: %v", err)
				}
			}
			if cmd.Flags().Changed("override") {
				req.Override = &override
			}
			if l, tid, err := env.fleetTask(ff, id); err != nil || l != nil {
				if err != nil {
					return err
				}
				// The workflow takes the transitions that hold by itself;
				// a person only overrides.
				if req.Override == nil || req.From != "" {
					return exit.New(exit.ErrUsage, "task %s is in the fleet: its workflow takes the transitions that hold; through the fleet, next takes --override \"REASON\" [--to PHASE] (no --from)", tid).
						WithHint("`%s` shows where it is; --local works on this clone's folder", env.command("status"))
				}
				res, err := l.Override(cmd.Context(), tid, override, req.To)
				if err != nil {
					return err
				}
				return printGate(cmd.OutOrStdout(), asJSON, "override", res)
			}
			o, tid, err := env.orchestratorFor(wait, id)
			if err != nil {
				return err
			}
			res, err := o.Next(cmd.Context(), tid, req)
			if err != nil {
				if req.To != "" && req.Override == nil && errors.Is(err, exit.ErrRefused) {
					if far := env.farTarget(o, tid, req.To); far != nil {
						return far
					}
				}
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return json.NewEncoder(out).Encode(res)
			}
			if res.Override {
				fmt.Fprintf(out, "%s: %s → %s by override (%s)\n", res.Task, res.From, res.To, res.Reason)
				if len(res.Skipped) > 0 {
					fmt.Fprintf(out, "  skipped phases: %v\n", res.Skipped)
				}
			} else {
				fmt.Fprintf(out, "%s: %s → %s (%s)\n", res.Task, res.From, res.To, res.Reason)
			}
			if res.Archived != "" {
				fmt.Fprintf(out, "  earlier artifacts archived in %s\n", res.Archived)
			}
			if res.Override && res.To == lifecycle.Done {
				if w := nextstep.DoneWithoutCommit(o.Project, tid); w != "" {
					fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s\n", env.words(w))
				}
			}
			return nil
		},
	}
	taskFlag(cmd, &id)
	waitFlag(cmd, &wait)
	fleetFlagsOn(cmd, &ff)
	cmd.Flags().StringVar(&to, "to", "", "target phase")
	cmd.Flags().StringVar(&from, "from", "", "act only if the task is in this phase")
	cmd.Flags().StringVar(&override, "override", "", "move without checking conditions; the reason is logged")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print {task, from, to, override, reason}")
	return cmd
}

// farTarget explains `orch next --to PHASE` for a PHASE that is not one
// step from the task's phase: the way there goes through the gates, the
// command that moves the task on now (what `orch status` suggests), and
// the override only as the deliberate escape hatch. nil when PHASE is one
// step away (the orchestrator's own refusal says why its edge does not
// hold) or the status cannot be read.
func (env *Env) farTarget(o *orchestrator.Orchestrator, tid string, to lifecycle.Phase) error {
	sj, s, err := view.StatusOf(o, tid)
	if err != nil {
		return nil
	}
	v := sj.StatusView
	if v.Phase.Terminal() || v.Pending != nil || v.Phase == to {
		return nil
	}
	var edges []string
	for _, e := range v.Edges {
		if e.To == to {
			return nil
		}
		edges = append(edges, string(e.To))
	}
	e := exit.New(exit.ErrRefused, "task %s is in %s and %s is not one step from it (its edges: %s): nothing changed", tid, v.Phase, to, strings.Join(edges, ", "))
	if path, ok := o.Table.Path(v.Phase, to); ok {
		e = e.WithHint("the way to %s goes through the gates: %s", to, joinPhases(path))
	} else {
		e = e.WithHint("no edge leads from %s to %s; `%s` re-opens an earlier phase", v.Phase, to, env.command("redo "+string(to)))
	}
	e = e.WithHint("%s", env.stepLine(s))
	return e.WithHint("(to skip the gates on purpose, with a reason that is logged: `%s`)", env.command(fmt.Sprintf("next --override \"REASON\" --to %s", to)))
}

func joinPhases(ps []lifecycle.Phase) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = string(p)
	}
	return strings.Join(s, " → ")
}
