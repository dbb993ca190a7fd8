package cli

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/orchdev/orch/internal/exit"
)

func newVerifyCmd(env *Env) *cobra.Command {
	var id string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "check the transcript's hash chain and that state.json matches the last transition",
		Long: `Recompute the transcript's hash chain, check sequence numbers and revisions, and
check that state.json equals the state recorded by the last state-changing event.
A state.json exactly one step behind the last durable event, and equal to the
state before it, is a commit interrupted between the log append and the rename:
verify says so and exits 0 (the next orch command rolls it forward).
Read-only. Exit 0 when everything checks out, 4 naming the first bad line otherwise.`,
		Example: `  orch verify --task 0007-add-retry`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			t, err := env.openTask(id)
			if err != nil {
				return err
			}
			rep, err := t.Verify()
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				if err := json.NewEncoder(out).Encode(rep); err != nil {
					return err
				}
			} else if rep.OK {
				switch {
				case rep.Pending != nil:
					fmt.Fprintf(out, "%s: transcript verified: %d events, chain intact; %s\n", t.ID, rep.Events, rep.Pending)
				default:
					fmt.Fprintf(out, "%s: transcript verified: %d events, chain intact, state.json matches\n", t.ID, rep.Events)
				}
				if rep.Torn != nil {
					fmt.Fprintf(out, "note: %s\n", rep.Torn)
				}
				if note := env.interruptedNote(t); note != "" {
					fmt.Fprintf(out, "interrupted: %s\n", note)
				}
			}
			if !rep.OK {
				msg := fmt.Sprintf("%s: transcript.jsonl does not verify", t.ID)
				for _, pr := range rep.Problems {
					msg += "\n  " + pr.String()
				}
				return exit.New(exit.ErrInvalid, "%s", msg)
			}
			return nil
		},
	}
	taskFlag(cmd, &id)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the verification report as JSON")
	return cmd
}
