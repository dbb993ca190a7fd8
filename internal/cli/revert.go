package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/phases"
	"github.com/orchdev/orch/internal/worker"
)

func newRevertCmd(env *Env) *cobra.Command {
	var id, reason string
	var asJSON bool
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "revert --reason R",
		Short: "undo the accepted change with git revert, record it, and finish the task",
		Long: `From accept (when the decision is revert or rejected, or a regression was found),
take accept → revert, undo the task's commit with ` + "`git revert --no-edit`" + ` (never reset or
force), write revert/record.json and move the task to done. On a conflict the
revert is aborted, the repository is left as it was, and the record says
partial with the conflicting files. When the change was never applied, the
record says nothing_to_revert.

To revert an accepted change, record that decision first:
  orch accept --verdict revert --reason "..."`,
		Example: `  orch revert --reason "broke the nightly build"`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if strings.TrimSpace(reason) == "" {
				return usagef("orch: revert needs a non-blank --reason")
			}
			o, cfg, tid, err := env.phaseSetup(wait, id)
			if err != nil {
				return err
			}
			w, err := work(cmd.Context(), worker.Deps{Orch: o, Config: cfg}, lifecycle.Revert, worker.Run{Task: tid, Reason: reason})
			if err != nil {
				return err
			}
			res := w.Result.(phases.RevertResult)
			out := cmd.OutOrStdout()
			if asJSON {
				return json.NewEncoder(out).Encode(res.Record)
			}
			printEntered(out, res.Phase.Entered)
			r := res.Record
			switch r.Status {
			case artifact.RevertReverted:
				fmt.Fprintf(out, "reverted %s in %s\n", r.RevertedCommit, r.RevertCommit)
			case artifact.RevertPartial:
				fmt.Fprintf(out, "NOT reverted: conflicts in %s; the repository is as it was\n", strings.Join(r.Conflicts, ", "))
			default:
				fmt.Fprintln(out, "nothing to revert")
			}
			for _, n := range r.Notes {
				fmt.Fprintf(out, "note: %s\n", n)
			}
			if res.Done != nil {
				fmt.Fprintf(out, "%s: %s → %s\n", res.Done.Task, res.Done.From, res.Done.To)
			}
			return nil
		},
	}
	taskFlag(cmd, &id)
	waitFlag(cmd, &wait)
	cmd.Flags().StringVar(&reason, "reason", "", "why the change is reverted (required)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print revert/record.json's content")
	return cmd
}
