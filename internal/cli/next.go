package cli

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/nextstep"
	"github.com/orchdev/orch/internal/orchestrator"
)

func newNextCmd(env *Env) *cobra.Command {
	var id, to, from, override string
	var asJSON bool
	var wait time.Duration
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
					return usagef("orch: --to: " + err.Error())
				}
			}
			if from != "" {
				if req.From, err = lifecycle.ParsePhase(from); err != nil {
					return usagef("orch: --from: " + err.Error())
				}
			}
			if cmd.Flags().Changed("override") {
				req.Override = &override
			}
			o, tid, err := env.orchestratorFor(wait, id)
			if err != nil {
				return err
			}
			res, err := o.Next(cmd.Context(), tid, req)
			if err != nil {
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
					fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s\n", w)
				}
			}
			return nil
		},
	}
	taskFlag(cmd, &id)
	waitFlag(cmd, &wait)
	cmd.Flags().StringVar(&to, "to", "", "target phase")
	cmd.Flags().StringVar(&from, "from", "", "act only if the task is in this phase")
	cmd.Flags().StringVar(&override, "override", "", "move without checking conditions; the reason is logged")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print {task, from, to, override, reason}")
	return cmd
}
