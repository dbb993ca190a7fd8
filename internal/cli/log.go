package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orchdev/orch/internal/clip"
	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/task"
	"github.com/orchdev/orch/internal/termtext"
)

func newLogCmd(env *Env) *cobra.Command {
	var id string
	var asJSON, verbose bool
	cmd := &cobra.Command{
		Use:   "log",
		Short: "show the task's transcript",
		Long: `Show the task's transcript, one line per event. In a terminal each line is cut
to the terminal's width and the log goes through the pager (ORCH_PAGER, else
PAGER, else less -FRX; --no-pager turns it off); piped, lines are cut at
` + fmt.Sprint(logLineCap) + ` characters. -v prints every line whole; --json prints the events
as they are stored.`,
		Example: `  orch log
  orch log -v | grep model_call
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
			width := 0
			if !verbose {
				if width = termWidth(out); width <= 0 {
					width = logLineCap
				}
			}
			out = env.paged(cmd)
			for _, ev := range events {
				line := termtext.Sanitize(strings.ReplaceAll(eventLine(ev), "\n", " "))
				if width > 0 {
					line = clip.Columns(line, width)
				}
				fmt.Fprintln(out, line)
			}
			// The log is what is committed; say so when state.json has
			// not caught up with it yet.
			// A state.json changed by hand is not the task's state.
			if _, pending, err := t.CommittedState(); err == nil && pending != nil {
				fmt.Fprintf(out, "note: %s\n", pending)
			} else if de := (*task.DisagreeError)(nil); errors.As(err, &de) {
				fmt.Fprintf(out, "warning: %s\n", de)
			}
			return nil
		},
	}
	taskFlag(cmd, &id)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the transcript's events as JSON lines")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "print every line whole (not cut to the terminal's width)")
	return cmd
}

// logLineCap is where `orch log` cuts a line when it does not write to a
// terminal (and without -v).
const logLineCap = 200

// eventLine is one event of the transcript on one line.
func eventLine(ev task.Event) string {
	head := fmt.Sprintf("%4d  %s  %-10s", ev.Seq, ev.TS.Local().Format("2006-01-02 15:04:05"), ev.Kind)
	move := func(from, to lifecycle.Phase, reason, archived string) string {
		line := fmt.Sprintf("%s %s → %s", head, from, to)
		if reason != "" {
			line += "  " + reason
		}
		if archived != "" {
			line += "  (archived " + archived + ")"
		}
		return line
	}
	p, _ := ev.Decode()
	switch d := p.(type) {
	case event.Transition:
		return move(d.From, d.To, d.Reason, d.Archived)
	case event.Override:
		return move(d.From, d.To, d.Reason, d.Archived)
	case event.Redo:
		return move(d.From, d.To, d.Reason, d.Archived)
	}
	switch ev.Kind {
	case event.KindCreated:
		phase := ""
		if ev.State != nil {
			phase = string(ev.State.Phase)
		}
		return fmt.Sprintf("%s task created in %s", head, phase)
	default:
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(ev.Data)) {
			b, _ := json.Marshal(ev.Data[k])
			parts = append(parts, k+"="+string(b))
		}
		return fmt.Sprintf("%s %s", head, strings.Join(parts, " "))
	}
}
