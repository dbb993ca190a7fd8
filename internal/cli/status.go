package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/termtext"
	"github.com/orchdev/orch/internal/view"
)

func newStatusCmd(env *Env) *cobra.Command {
	var id string
	var asJSON bool
	var ff fleetFlags
	cmd := &cobra.Command{
		Use:   "status",
		Short: "show the phase, each outgoing edge and why it holds or not, and the suggestion",
		Example: `  orch status
  orch status --task 0007-add-retry --json
  orch status --local      # a fleet task: this clone's folder, not its workflow`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if l, tid, err := env.fleetTask(ff, id); err != nil || l != nil {
				if err != nil {
					return err
				}
				return env.fleetStatus(cmd.Context(), cmd, l, tid, asJSON)
			}
			o, tid, err := env.orchestratorFor(0, id)
			if err != nil {
				return err
			}
			sj, s, err := view.StatusOf(o, tid)
			if err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(sj)
			}
			// Commands quoted in reasons and warnings, in the REPL's
			// syntax there (`/redo accept`).
			for i, w := range sj.Warnings {
				sj.Warnings[i] = env.words(w)
			}
			sj.Reason = env.words(sj.Reason)
			printStatus(cmd.OutOrStdout(), env.style(cmd.OutOrStdout()), sj.StatusView)
			if sj.Commit != "" {
				fmt.Fprintf(cmd.OutOrStdout(), "commit: %s (orch's commit of the change)\n", sj.Commit)
			}
			fmt.Fprintln(cmd.OutOrStdout(), env.stepLine(s))
			return nil
		},
	}
	taskFlag(cmd, &id)
	fleetFlagsOn(cmd, &ff)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print {task, phase, revision, actors, edges[], suggested, reason}")
	return cmd
}

// printStatus prints v; in a terminal (st) the edges' [yes] and [no] are
// green and red.
func printStatus(w io.Writer, st termtext.Style, v orchestrator.StatusView) {
	defer func() {
		for _, warn := range v.Warnings {
			fmt.Fprintf(w, "warning: %s\n", warn)
		}
	}()
	fmt.Fprintf(w, "task %s  phase %s  revision %d  updated %s\n", v.Task, v.Phase, v.Revision, v.UpdatedAt.Local().Format("2006-01-02 15:04:05"))
	if v.Pending != nil {
		fmt.Fprintf(w, "note: %s\n", v.Pending)
	}
	// A cancelled or failed run recorded nothing as the phase's result:
	// say so first, or an older run's artifacts (an old test report's
	// error) would read as this run's outcome.
	if a, ok := v.Actors[v.Phase]; ok && a.LastRun != "" {
		fmt.Fprintf(w, "last %s run: %s, nothing of it recorded as the result; what follows reads the artifacts from before it\n", v.Phase, st.Paint(string(a.LastRun), termtext.Red))
	}
	if len(v.Actors) > 0 {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(v.Actors)) {
			var kv []string
			a := v.Actors[k]
			fields := a.Values()
			if a.Interrupted() {
				// Its process is gone (killed): the run is over, not
				// running; the step line says how to run it again.
				fields["status"] = "interrupted"
			}
			for _, kk := range slices.Sorted(maps.Keys(fields)) {
				kv = append(kv, fmt.Sprintf("%s=%v", kk, fields[kk]))
			}
			parts = append(parts, fmt.Sprintf("%s(%s)", k, strings.Join(kv, " ")))
		}
		fmt.Fprintf(w, "actors: %s\n", strings.Join(parts, " "))
	}
	if len(v.Edges) == 0 {
		// Done, the one phase without edges: the step line orch status
		// prints last says so and names orch redo; the decision's own
		// reason ("done is terminal…") would say it a second time.
		return
	}
	fmt.Fprintln(w, "edges:")
	for _, e := range v.Edges {
		mark := st.Paint("no", termtext.Red) + " "
		if e.Holds {
			mark = st.Paint("yes", termtext.Green)
		}
		fmt.Fprintf(w, "  [%s] → %-11s %s: %s\n", mark, e.To, e.Cond, e.Reason)
	}
	for _, inv := range v.Invalid {
		fmt.Fprintf(w, "invalid: %s\n", inv)
	}
	if v.Suggested != nil {
		fmt.Fprintf(w, "suggested: %s (%s)\n", *v.Suggested, v.Reason)
		return
	}
	fmt.Fprintf(w, "suggested: none: %s\n", v.Reason)
}
