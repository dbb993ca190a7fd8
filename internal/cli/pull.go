package cli

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/orchdev/orch/internal/task"
)

func newPullCmd(env *Env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "pull TASK",
		Short: "bring a fleet task's folder, as its ref holds it, into this clone",
		Long: `Fetch refs/orch/tasks/TASK from the fleet's shared remote and write the task's
folder, as the fleet's last step left it, into .orch/tasks/TASK (docs/fleet.md).
orch show, diff and verify then work on it; orch status and log still ask the
fleet, and read this copy with --local.`,
		Example: `  orch pull 0007-add-retries && orch verify --task 0007-add-retries`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := task.ValidID(args[0]); err != nil {
				return err
			}
			_, l, err := env.projectFleet()
			if err != nil {
				return err
			}
			res, err := l.Pull(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return json.NewEncoder(out).Encode(res)
			}
			fmt.Fprintf(out, "pulled %s at %.12s into %s\n", res.Task, res.Commit, res.Dir)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print {task, commit, dir}")
	return cmd
}
