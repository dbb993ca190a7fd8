package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/termtext"
	"github.com/orchdev/orch/internal/view"
)

func newListCmd(env *Env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "list every task, its phase and last change",
		Example: `  orch list
  orch list --json | jq -r '.tasks[] | select(.phase=="review") | .id'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := env.project()
			if err != nil {
				return err
			}
			entries, err := view.List(p)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			// A state.json that disagrees with the transcript is listed
			// with the transcript's phase and flagged: exit 4.
			var disagree []string
			for _, e := range entries {
				if e.StateDisagrees != "" {
					disagree = append(disagree, e.StateDisagrees)
				}
			}
			flagged := func() error {
				if len(disagree) == 0 {
					return nil
				}
				return exit.InvalidError("orch: "+strings.Join(disagree, "\norch: "), nil)
			}
			if asJSON {
				if err := json.NewEncoder(out).Encode(map[string]any{"tasks": entries}); err != nil {
					return err
				}
				return flagged()
			}
			if len(entries) == 0 {
				fmt.Fprintln(out, "no tasks yet: orch new \"describe the change\"")
				return nil
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "  ID\tPHASE\tREV\tUPDATED")
			for _, e := range entries {
				mark := " "
				if e.Current {
					mark = "*"
				}
				if e.Error != "" {
					// The id is a folder's name and the error may quote a
					// file: one line each, shown as text.
					fmt.Fprintf(tw, "%s %s\tINVALID\t\t%s\n", mark, termtext.Line(e.ID), termtext.Line(e.Error))
					continue
				}
				phase := e.Phase
				if e.StateDisagrees != "" {
					phase += " (state.json disagrees)"
				}
				fmt.Fprintf(tw, "%s %s\t%s\t%d\t%s\n", mark, termtext.Line(e.ID), termtext.Line(string(phase)), e.Revision, e.UpdatedAt.Local().Format("2006-01-02 15:04:05"))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			return flagged()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print {tasks: [{id, phase, revision, updated_at, current, error?, state_disagrees?}]}")
	return cmd
}
