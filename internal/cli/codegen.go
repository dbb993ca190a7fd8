package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/orchdev/orch/internal/agent/codegen"
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/termtext"
	"github.com/orchdev/orch/internal/worker"
)

// codegenOutput is what `orch codegen --json` prints: one object.
type codegenOutput struct {
	Task    string                   `json:"task"`
	Entered *orchestrator.NextResult `json:"entered,omitempty"`
	codegen.Record
	Next nextStep `json:"next"`
}

// nextStep is what `orch next` would do now.
type nextStep struct {
	To     string `json:"to,omitempty"`
	Reason string `json:"reason"`
}

func newCodegenCmd(env *Env) *cobra.Command {
	var id string
	var fresh, asJSON bool
	var wait time.Duration
	var local bool
	cmd := &cobra.Command{
		Use:   "codegen",
		Short: "generate the code change the plan describes",
		Long: `Ask the codegen model for the complete new content of the planned files. Its
context: the plan, the file plan, the planned files as they are at HEAD (the
base commit), neighbouring files and, after the task came back from review,
test or accept, the failures of the previous attempt (failing tests with their
output, blocking review issues, the reasons for requested changes).

orch checks the answer (re-asking the model when it is invalid): every path is
a plain repository path (no "..", no absolute path, nothing under .git/ or
.orch/), each file is text (valid UTF-8, no NUL byte) of at most 8 MiB, no path
is named twice, and the change applies to the base. It then writes
code/files/<path>, computes code/diff.patch with git itself and records
code/codegen.json (status, base, files, paths outside the file plan).

Then ` + "`orch next`" + ` decides: status plan_unclear goes to plan_review, a path outside
the file plan goes back to planning, a complete change goes to review.
From plan_review, orch codegen first takes plan_review → codegen (its condition
must hold). Exit 4 when the model's answers stay invalid (the task stays in
codegen; the last answer is kept in history/).`,
		Example: `  orch codegen
  orch codegen --fresh      # ask the model again instead of reusing a cached answer
  orch codegen --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runAgentPhase(cmd, env, wait, id, fresh, asJSON, local, lifecycle.Codegen, func(o worker.Outcome) *codegen.Result { return o.Codegen }, func(a *agentCall, entered *orchestrator.NextResult, res codegen.Result) error {
				o, tid, out := a.o, a.tid, a.out
				next := suggestNext(o, tid)
				rec := res.Record
				if asJSON {
					return json.NewEncoder(out).Encode(codegenOutput{Task: tid, Entered: entered, Record: rec, Next: next})
				}
				printEntered(out, entered)
				fmt.Fprintf(out, "task %s: codegen attempt %d → %s (base %.12s)\n", tid, rec.Attempt, rec.Status, rec.Base)
				if len(rec.FixFrom) > 0 {
					fmt.Fprintf(out, "fix round: the model was shown the failures in %s\n", strings.Join(rec.FixFrom, ", "))
				}
				printCodegen(out, env, rec)
				fmt.Fprintf(out, "next: %s\n", next.text(env.command))
				return nil
			})
		},
	}
	taskFlag(cmd, &id)
	waitFlag(cmd, &wait)
	localFlag(cmd, &local)
	cmd.Flags().BoolVar(&fresh, "fresh", false, "ask the model again instead of reusing a cached answer")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as one JSON object")
	return cmd
}

// printCodegen shows what codegen wrote.
func printCodegen(w io.Writer, env *Env, rec codegen.Record) {
	switch rec.Status {
	case artifact.CodegenPlanUnclear:
		fmt.Fprintln(w, "the model finds the plan unclear; its questions:")
		for _, q := range rec.Questions {
			fmt.Fprintf(w, "  %s: %s\n", termtext.Line(q.ID), termtext.Line(q.Text))
		}
	case artifact.CodegenFailed:
		fmt.Fprintln(w, "the model could not write the change")
	default:
		stats := map[string]codegen.FileStat{}
		for _, s := range rec.DiffStat {
			stats[s.Path] = s
		}
		fmt.Fprintf(w, "wrote %d file(s) under %s/:\n", len(rec.Files), artifact.CodeFilesDir)
		for _, f := range rec.Files {
			s, ok := stats[f]
			switch {
			case !ok:
				fmt.Fprintf(w, "  %s (unchanged)\n", termtext.Line(f))
			case s.Binary:
				fmt.Fprintf(w, "  %s (binary)\n", termtext.Line(f))
			default:
				fmt.Fprintf(w, "  %-40s +%d -%d\n", termtext.Line(f), s.Added, s.Removed)
			}
		}
		for _, d := range rec.Deletes {
			fmt.Fprintf(w, "  %-40s deleted\n", termtext.Line(d))
		}
		added, removed := codegen.DiffTotals(rec.DiffStat)
		fmt.Fprintf(w, "%s: %d file(s) changed, +%d -%d\n", artifact.DiffFile, len(rec.DiffStat), added, removed)
		if len(rec.Unplanned) > 0 {
			fmt.Fprintf(w, "outside the file plan: %s (scope mismatch: `%s` goes back to planning)\n", termtext.Line(strings.Join(rec.Unplanned, ", ")), env.command("next"))
		}
		if len(rec.Untouched) > 0 {
			fmt.Fprintf(w, "planned but left unchanged: %s\n", termtext.Line(strings.Join(rec.Untouched, ", ")))
		}
	}
	if rec.Notes != "" {
		fmt.Fprintf(w, "notes: %s\n", termtext.Sanitize(rec.Notes))
	}
	fmt.Fprintf(w, "wrote %s\n", artifact.CodegenFile)
}

// suggestNext asks the orchestrator what `orch next` would do now.
func suggestNext(o *orchestrator.Orchestrator, id string) nextStep {
	v, err := o.Status(id)
	if err != nil {
		return nextStep{Reason: "cannot tell: " + err.Error()}
	}
	if v.Suggested != nil {
		return nextStep{To: string(*v.Suggested), Reason: v.Reason}
	}
	var why []string
	for _, e := range v.Edges {
		why = append(why, fmt.Sprintf("%s: %s", e.To, e.Reason))
	}
	return nextStep{Reason: "no transition holds (" + strings.Join(why, "; ") + ")"}
}

// text says it for the user; command renders CLI words (env.command).
func (n nextStep) text(command func(string) string) string {
	if n.To == "" {
		return n.Reason
	}
	return fmt.Sprintf("`%s` → %s (%s)", command("next"), n.To, n.Reason)
}
