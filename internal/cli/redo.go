package cli

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/lifecycle"
)

func newRedoCmd(env *Env) *cobra.Command {
	var id, reason string
	var asJSON bool
	var wait time.Duration
	var ff fleetFlags
	cmd := &cobra.Command{
		Use:   "redo [PHASE]",
		Short: "re-run a phase: archive its artifacts and every later phase's into history/",
		Long: `Move the artifacts of PHASE and every later phase into history/<n>-<PHASE>/ and set
the task's phase to PHASE. PHASE defaults to the current phase (planning when the
task is done). The transcript is kept. This is the only way out of done.`,
		Example: `  orch redo codegen --reason "try a smaller change"
  orch redo            # from done: back to planning`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var p lifecycle.Phase
			if len(args) == 1 {
				var err error
				if p, err = lifecycle.ParsePhase(args[0]); err != nil {
					return exit.New(exit.ErrUsage, "redo: %v", err)
				}
			}
			if l, tid, err := env.fleetTask(ff, id); err != nil || l != nil {
				if err != nil {
					return err
				}
				res, err := l.Redo(cmd.Context(), tid, p, reason)
				if err != nil {
					return err
				}
				return printGate(cmd.OutOrStdout(), asJSON, "redo", res)
			}
			o, tid, err := env.orchestratorFor(wait, id)
			if err != nil {
				return err
			}
			res, err := o.Redo(cmd.Context(), tid, p, reason)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return json.NewEncoder(out).Encode(res)
			}
			fmt.Fprintf(out, "%s: %s → %s (redo)\n", res.Task, res.From, res.To)
			if res.Archived != "" {
				fmt.Fprintf(out, "  artifacts archived in %s\n", res.Archived)
			}
			return nil
		},
	}
	taskFlag(cmd, &id)
	waitFlag(cmd, &wait)
	fleetFlagsOn(cmd, &ff)
	cmd.Flags().StringVar(&reason, "reason", "", "why the phase is redone (logged)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print {task, from, to, archived, reason, revision}")
	return cmd
}
