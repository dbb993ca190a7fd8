package cli

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

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
			if asJSON {
				return json.NewEncoder(out).Encode(map[string]any{"tasks": entries})
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
					fmt.Fprintf(tw, "%s %s\tINVALID\t\t%s\n", mark, e.ID, e.Error)
					continue
				}
				fmt.Fprintf(tw, "%s %s\t%s\t%d\t%s\n", mark, e.ID, e.Phase, e.Revision, e.UpdatedAt.Local().Format("2006-01-02 15:04:05"))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print {tasks: [{id, phase, revision, updated_at, current, error?}]}")
	return cmd
}
