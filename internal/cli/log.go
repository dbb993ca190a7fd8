package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orchdev/orch/internal/task"
)

func newLogCmd(env *Env) *cobra.Command {
	var id string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "log",
		Short: "show the task's transcript",
		Example: `  orch log
  orch log --json | jq 'select(.kind=="override")'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			t, err := env.openTask(id)
			if err != nil {
				return err
			}
			events, err := t.Transcript()
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				for _, ev := range events {
					if err := enc.Encode(ev); err != nil {
						return err
					}
				}
				return nil
			}
			for _, ev := range events {
				printEvent(out, ev)
			}
			// The log is what is committed; say so when state.json has
			// not caught up with it yet.
			if _, pending, err := t.CommittedState(); err == nil && pending != nil {
				fmt.Fprintf(out, "note: %s\n", pending)
			}
			return nil
		},
	}
	taskFlag(cmd, &id)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the transcript's events as JSON lines")
	return cmd
}

func printEvent(w io.Writer, ev task.Event) {
	head := fmt.Sprintf("%4d  %s  %-10s", ev.Seq, ev.TS.Local().Format("2006-01-02 15:04:05"), ev.Kind)
	str := func(k string) string {
		if v, ok := ev.Data[k].(string); ok {
			return v
		}
		return ""
	}
	switch ev.Kind {
	case "transition", "override", "redo":
		line := fmt.Sprintf("%s %s → %s", head, str("from"), str("to"))
		if r := str("reason"); r != "" {
			line += "  " + r
		}
		if a := str("archived"); a != "" {
			line += "  (archived " + a + ")"
		}
		fmt.Fprintln(w, line)
	case "created":
		phase := ""
		if ev.State != nil {
			phase = string(ev.State.Phase)
		}
		fmt.Fprintf(w, "%s task created in %s\n", head, phase)
	default:
		keys := make([]string, 0, len(ev.Data))
		for k := range ev.Data {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			b, _ := json.Marshal(ev.Data[k])
			parts = append(parts, k+"="+string(b))
		}
		fmt.Fprintf(w, "%s %s\n", head, strings.Join(parts, " "))
	}
}
