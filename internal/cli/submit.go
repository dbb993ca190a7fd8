package cli

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/fleetlink"
)

func newSubmitCmd(env *Env) *cobra.Command {
	var asJSON bool
	var maxAttempts int
	var heartbeat time.Duration
	cmd := &cobra.Command{
		Use:   "submit [TASK]",
		Short: "hand a local task to the fleet: its folder to refs/orch/tasks/<id>, its workflow started",
		Long: `Hand task TASK (default: the current task) to the fleet configured in [fleet]
(docs/fleet.md): orch-fleet pushes the task's folder to the shared remote as the
first commit of refs/orch/tasks/<id>, keeps it in this clone as
refs/remotes/orch-fleet/tasks/<id>, and starts the task's workflow; the fleet's
workers then take its steps. From then on orch status, log, answer, accept, next
--override, redo and revert on the task go to the fleet (--local: this clone's
folder). A task already in the fleet is refused (exit 3).

orch runs the orch-fleet binary ([fleet] binary, else next to orch, else on
PATH); orch itself never links Temporal.`,
		Example: `  orch submit
  orch submit 0007-add-retries --max-attempts 2`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, l, err := env.projectFleet()
			if err != nil {
				return err
			}
			flag := ""
			if len(args) == 1 {
				flag = args[0]
			}
			tid, err := taskID(p, flag)
			if err != nil {
				return err
			}
			if _, err := p.Open(tid); err != nil {
				return err
			}
			if maxAttempts < 0 {
				return exit.New(exit.ErrUsage, "--max-attempts %d: expected a positive number of codegen runs", maxAttempts)
			}
			o := fleetlink.SubmitOptions{MaxAttempts: maxAttempts}
			if heartbeat > 0 {
				o.Heartbeat = heartbeat.String()
			}
			res, err := l.Submit(cmd.Context(), tid, o)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return json.NewEncoder(out).Encode(res)
			}
			fmt.Fprintf(out, "submitted %s: %s at %.12s, workflow %s\n", res.Task, res.Ref, res.Commit, res.Workflow)
			fmt.Fprintf(out, "`%s` and `%s` now read it from the fleet\n", env.command("status"), env.command("log"))
			return nil
		},
	}
	cmd.Flags().IntVar(&maxAttempts, "max-attempts", 0, "codegen runs before the task waits for a person (default: orch-fleet's, 3)")
	cmd.Flags().DurationVar(&heartbeat, "heartbeat", 0, "a worker silent this long is taken for dead and its step retried elsewhere (default: orch-fleet's, 20s)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print {task, ref, commit, workflow}")
	return cmd
}
