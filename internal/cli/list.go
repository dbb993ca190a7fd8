package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/orchdev/orch/internal/clip"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/fleetlink"
	"github.com/orchdev/orch/internal/termtext"
	"github.com/orchdev/orch/internal/view"
)

func newListCmd(env *Env) *cobra.Command {
	var asJSON, local bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "list every task: its phase, last change, what it waits for and its title",
		Long: `List every task: its phase, revision and last change, what it waits for
(your answer to a question, your accept decision, a worker, a running phase)
and its title (the plan's, else the brief's first line). The current task is
marked with *.

A task whose state cannot be read (an invalid state.json or transcript) is
listed as INVALID with the reason, the others as usual, and orch list then
exits 4 naming each broken task, as orch status does for one.

With [fleet] in .orch/config.toml, the fleet's running tasks by phase and its
workers by queue follow (docs/fleet.md); --local lists this clone's tasks only.`,
		Example: `  orch list
  orch list --json | jq -r '.tasks[] | select(.phase=="review") | .id'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o, err := env.orchestrator(0)
			if err != nil {
				return err
			}
			rows, err := view.List(o)
			if err != nil {
				return err
			}
			var fleet *fleetlink.Listing
			if !local {
				l, err := env.fleetLink(o.Project, false)
				if err != nil {
					return err
				}
				if l != nil {
					fl, err := l.List(cmd.Context())
					if err != nil {
						return exit.New(exit.KindOf(exit.Of(err)), "list the fleet's tasks: %w", err).WithHint("`%s` lists this clone's tasks only", env.command("list --local"))
					}
					fleet = &fl
				}
			}
			var broken []string
			for _, e := range rows {
				switch {
				case e.Error != "":
					broken = append(broken, e.Error)
				case e.StateDisagrees != "":
					// Listed with the transcript's phase and flagged.
					broken = append(broken, e.StateDisagrees)
				}
			}
			flagged := func() error {
				if len(broken) == 0 {
					return nil
				}
				return exit.New(exit.ErrInvalid, "%s", strings.Join(broken, "\n"+exit.Prefix))
			}
			out := cmd.OutOrStdout()
			if asJSON {
				obj := map[string]any{"tasks": rows}
				if fleet != nil {
					obj["fleet"] = fleet
				}
				if err := json.NewEncoder(out).Encode(obj); err != nil {
					return err
				}
				return flagged()
			}
			if fleet != nil {
				defer printFleetListing(out, *fleet)
			}
			if len(rows) == 0 {
				fmt.Fprintln(out, "no tasks yet: orch new \"describe the change\"")
				return nil
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "  ID\tPHASE\tREV\tUPDATED\tSTATUS\tTITLE")
			for _, r := range rows {
				mark := " "
				if r.Current {
					mark = "*"
				}
				if r.Error != "" {
					// The id is a folder's name and the error may quote a
					// file: one line each, shown as text.
					fmt.Fprintf(tw, "%s %s\tINVALID\t\t\t%s\n", mark, termtext.Line(r.ID), termtext.Line(r.Error))
					continue
				}
				phase := r.Phase
				if r.StateDisagrees != "" {
					phase += " (state.json disagrees)"
				}
				fmt.Fprintf(tw, "%s %s\t%s\t%d\t%s\t%s\t%s\n", mark, termtext.Line(r.ID), termtext.Line(phase), r.Revision,
					r.UpdatedAt.Local().Format("2006-01-02 15:04:05"), termtext.Line(r.Waits), clip.Columns(termtext.Line(r.Title), listTitleWidth))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			return flagged()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print {tasks: [{id, phase, revision, updated_at, current, title?, waits?, error?, state_disagrees?}], fleet?: {phases, workers}}")
	cmd.Flags().BoolVar(&local, "local", false, "list this clone's tasks only, not the fleet's")
	return cmd
}

// listTitleWidth is where orch list cuts a title (--json has it whole).
const listTitleWidth = 60
