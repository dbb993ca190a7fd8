package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/clip"
	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/task"
	"github.com/orchdev/orch/internal/termtext"
)

func newLogCmd(env *Env) *cobra.Command {
	var id string
	var asJSON, verbose bool
	var ff fleetFlags
	cmd := &cobra.Command{
		Use:   "log",
		Short: "show the task's transcript",
		Long: `Show the task's transcript, one line per event as git log shows commits: its
number, time, what happened (planning → plan_review), who did it ((orch),
(orch next --override), (planner)) and why; coloured in a terminal unless
NO_COLOR is set. In a terminal each line is cut
to the terminal's width and the log goes through the pager (ORCH_PAGER, else
PAGER, else less -FRX; --no-pager turns it off); piped, lines are cut at
` + fmt.Sprint(logLineCap) + ` characters. -v prints every line whole; --json prints the events
as they are stored.`,
		Example: `  orch log
  orch log -v | grep model_call
  orch log --json | jq 'select(.kind=="override")'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, tid, err := env.fleetTask(ff, id)
			if err != nil {
				return err
			}
			var t *task.Task
			var events []task.Event
			if l != nil {
				// A fleet task's transcript, as its workflow holds it.
				if events, err = l.Log(cmd.Context(), tid); err != nil {
					return err
				}
			} else {
				if t, err = env.openTask(id); err != nil {
					return err
				}
				if events, err = t.Transcript(); err != nil {
					return err
				}
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
			st := env.style(out)
			out = env.paged(cmd)
			for _, ev := range events {
				fmt.Fprintln(out, describeEvent(ev).render(st, width))
			}
			if t == nil {
				return nil
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
	fleetFlagsOn(cmd, &ff)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the transcript's events as JSON lines")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "print every line whole (not cut to the terminal's width)")
	return cmd
}

// logLineCap is where `orch log` cuts a line when it does not write to a
// terminal (and without -v).
const logLineCap = 200

// logLine is one event of the transcript as `orch log` prints it, the
// way git log prints a commit: the sequence number, the time, what
// happened (a transition from → to), who did it (the actor) and why.
type logLine struct {
	seq    int64
	ts     time.Time
	what   string          // "planning → plan_review", "codegen finished: completed"
	tone   termtext.Colour // what's colour
	actor  string          // the command or agent that did it
	detail string          // the reason, the error, the tokens
}

// describeEvent is the log line of one event, from its typed payload
// (task.Event.Decode); an unknown kind shows its fields.
func describeEvent(ev task.Event) logLine {
	l := logLine{seq: ev.Seq, ts: ev.TS, what: string(ev.Kind)}
	p, _ := ev.Decode()
	switch d := p.(type) {
	case event.Created:
		l.what, l.actor, l.tone = "task created", "orch new", termtext.Bold
		if ev.State != nil {
			l.what += " in " + string(ev.State.Phase)
		}
	case event.Transition:
		l.what, l.actor, l.tone = fmt.Sprintf("%s → %s", d.From, d.To), "orch", termtext.Green
		l.detail = joinDetail(d.Reason, archivedIn(d.Archived))
	case event.Override:
		l.what, l.actor, l.tone = fmt.Sprintf("override %s → %s", d.From, d.To), "orch next --override", termtext.Yellow
		skipped := ""
		if len(d.SkippedPhases) > 0 {
			skipped = "skipped " + strings.Join(d.SkippedPhases, ", ")
		}
		l.detail = joinDetail(d.Reason, skipped, archivedIn(d.Archived))
	case event.Redo:
		l.what, l.actor, l.tone = fmt.Sprintf("redo %s → %s", d.From, d.To), "orch redo", termtext.Yellow
		l.detail = joinDetail(d.Reason, archivedIn(d.Archived))
	case event.PhaseStarted:
		l.what, l.actor = string(d.Phase)+" started", phaseActor(d.Phase)
		l.detail = "run " + d.Run
	case event.PhaseFinished:
		l.what, l.actor = fmt.Sprintf("%s finished: %s", d.Phase, d.Status), phaseActor(d.Phase)
		if st := lifecycle.Status(d.Status); st == lifecycle.RunFailed || st == lifecycle.RunCancelled {
			l.tone = termtext.Red
		}
		l.detail = joinDetail(d.Error, summaryPairs(d.Summary), keptIn(d.Kept))
	case event.ModelCall:
		l.what, l.actor = "model call", d.Role
		if d.Turn > 0 {
			l.what = fmt.Sprintf("model call, turn %d", d.Turn)
		}
		l.detail = fmt.Sprintf("%s %s, %d in / %d out tokens, %d ms", d.Provider, d.Model, d.TokensIn, d.TokensOut, d.LatencyMS)
		if d.CostUSD != nil {
			l.detail += ", " + agent.FormatUSD(*d.CostUSD)
		}
		if d.Cached {
			l.detail += ", from orch's cache"
		}
		if len(d.ToolCalls) > 0 {
			l.detail += ", tools " + strings.Join(d.ToolCalls, " ")
		}
		if d.Error != "" {
			l.tone, l.detail = termtext.Red, "error: "+d.Error+"; "+l.detail
		}
	case event.BudgetExceeded:
		l.what, l.actor, l.tone, l.detail = "budget exceeded", d.Role, termtext.Red, d.Error
	case event.UserInput:
		l.what, l.actor, l.detail = "answered "+d.Question, "orch answer", d.Answer
	case event.Advice:
		l.what, l.actor = "advice: "+d.Recommendation, "advisor"
		l.detail = joinDetail(d.Target, "confidence "+d.Confidence)
	case event.GitIntent:
		l.what, l.actor = fmt.Sprintf("git %s: moving %s", d.Op, d.Ref), "orch "+d.Op
		l.detail = fmt.Sprintf("%.12s → %.12s", d.Old, d.New)
	case event.GitDone:
		l.what, l.actor = fmt.Sprintf("git %s: %s", d.Op, d.Outcome), "orch "+d.Op
		if d.Outcome == event.GitCommitted {
			l.tone = termtext.Green
		}
		l.detail = joinDetail(shortSHA(d.Commit), d.Note)
	case event.MCPCall:
		l.what, l.actor = "mcp "+d.Tool+": "+d.Outcome, d.Client+" via MCP"
		if d.Outcome != "ok" {
			l.tone = termtext.Red
		}
		l.detail = d.Error
	case event.Recovered:
		l.what, l.actor, l.tone = "recovered after a crash", "orch", termtext.Yellow
	default:
		l.detail = dataPairs(ev.Data)
	}
	return l
}

// render lays the line out, cut to width columns (0: whole), coloured when
// st allows. Every field is sanitized: reasons, errors and answers were
// written by a model, a test suite or a person.
func (l logLine) render(st termtext.Style, width int) string {
	type part struct {
		text string
		c    termtext.Colour
	}
	parts := []part{
		{fmt.Sprintf("%4d", l.seq), termtext.Yellow},
		{l.ts.Local().Format(logTime), termtext.Dim},
		{termtext.Line(l.what), l.tone},
	}
	if l.actor != "" {
		parts = append(parts, part{"(" + termtext.Line(l.actor) + ")", termtext.Cyan})
	}
	if d := termtext.Line(l.detail); d != "" {
		parts = append(parts, part{d, ""})
	}
	var b strings.Builder
	used := 0
	for i, p := range parts {
		if i > 0 {
			if width > 0 && used+2 >= width {
				break
			}
			b.WriteString("  ")
			used += 2
		}
		text := p.text
		if width > 0 && used+clip.Width(text) > width {
			text = clip.Columns(text, width-used)
		}
		used += clip.Width(text)
		if p.c != "" {
			text = st.Paint(text, p.c)
		}
		b.WriteString(text)
	}
	return b.String()
}

// logTime is how a log line shows its time (the year is in --json).
const logTime = "Jan _2 15:04:05"

// phaseActor is who does a phase's work.
func phaseActor(p lifecycle.Phase) string {
	switch p {
	case lifecycle.Planning:
		return "planner"
	case lifecycle.PlanReview:
		return "plan reviewers"
	case lifecycle.Review:
		return "code reviewers"
	case lifecycle.Test:
		return "test runner"
	}
	return "orch " + string(p)
}

func joinDetail(parts ...string) string {
	var keep []string
	for _, p := range parts {
		if strings.TrimSpace(p) != "" {
			keep = append(keep, p)
		}
	}
	return strings.Join(keep, "; ")
}

func archivedIn(dir string) string {
	if dir == "" {
		return ""
	}
	return "archived in " + dir
}

func keptIn(dir string) string {
	if dir == "" {
		return ""
	}
	return "partial output kept in " + dir
}

func shortSHA(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// dataPairs shows the fields of an event of a kind this orch does not
// know (a newer orch wrote it) as name=JSON pairs, by name.
func dataPairs(m map[string]any) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		b, _ := json.Marshal(m[k])
		parts = append(parts, k+"="+string(b))
	}
	return strings.Join(parts, " ")
}

// summaryPairs shows a phase's summary as name=JSON pairs, by name.
func summaryPairs(s *event.PhaseSummary) string {
	var parts []string
	for _, f := range s.Fields() {
		parts = append(parts, f.Name+"="+f.Value)
	}
	return strings.Join(parts, " ")
}
