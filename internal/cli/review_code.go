package cli

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/orchdev/orch/internal/agent/review"
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/termtext"
	"github.com/orchdev/orch/internal/worker"
)

// reviewCodeOutput is what `orch review code --json` prints: one object.
type reviewCodeOutput struct {
	Task    string                   `json:"task"`
	Entered *orchestrator.NextResult `json:"entered,omitempty"`
	review.CodeRecord
	Next nextStep `json:"next"`
}

// newReviewCodeCmd is `orch review code`, mounted under `orch review`.
func newReviewCodeCmd(env *Env) *cobra.Command {
	var id string
	var fresh, asJSON bool
	var wait time.Duration
	var local bool
	cmd := &cobra.Command{
		Use:   "code",
		Short: "review the generated change: one reviewer per persona, concurrently",
		Long: `Ask one code reviewer per persona of [review] code_personas (default:
correctness, tests, security, maintainability), all at once, to review
code/diff.patch against the plan. Each answers ok and a list of issues with a
severity (info, minor, major, blocking) and a kind (code, plan, test,
security, style); orch checks every answer (re-asking a reviewer whose answer
is invalid) and aggregates them in code: the change is ok only when every
reviewer is ok and no issue is blocking. Writes review/code-review.json and
review/code-review.md.

Then ` + "`orch next`" + ` decides: a blocking issue of kind plan goes back to planning,
any other blocking issue or a reviewer that is not ok goes back to codegen,
an ok review goes to test. From codegen, orch review code first takes
codegen → review (its condition must hold). Exit 4 when a reviewer's answers
stay invalid (no review is written).`,
		Example: `  orch review code
  orch review code --fresh
  orch review code --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runAgentPhase(cmd, env, wait, id, fresh, asJSON, local, lifecycle.Review, func(o worker.Outcome) *review.CodeResult { return o.CodeReview }, func(a *agentCall, entered *orchestrator.NextResult, res review.CodeResult) error {
				o, tid, out := a.o, a.tid, a.out
				next := suggestNext(o, tid)
				rec := res.Review
				if asJSON {
					return json.NewEncoder(out).Encode(reviewCodeOutput{Task: tid, Entered: entered, CodeRecord: rec, Next: next})
				}
				printEntered(out, entered)
				blocking := 0
				for _, v := range rec.Reviewers {
					blocking += v.Blocking
				}
				verdict := "ok"
				if !rec.OK {
					verdict = fmt.Sprintf("changes requested (%d blocking issue(s))", blocking)
				}
				fmt.Fprintf(out, "task %s: code review → %s\n", tid, verdict)
				for _, v := range rec.Reviewers {
					fmt.Fprintf(out, "  %-16s %-6s %d issue(s)  %s\n", termtext.Line(v.ID), review.Verdict(v.OK), v.Issues, termtext.Line(v.Summary))
				}
				if len(rec.Issues) > 0 {
					fmt.Fprintln(out, "issues:")
				}
				// The same finding from several reviewers is listed once.
				for _, f := range review.MergeFindings(rec.Issues) {
					where := ""
					if p := f.Place(); p != "" {
						where = termtext.Line(p) + " "
					}
					fmt.Fprintf(out, "  [%s %s] %s%s (%s)\n", termtext.Line(string(f.Severity)), termtext.Line(string(f.Kind)), where, termtext.Line(f.Message), termtext.Line(f.By()))
				}
				fmt.Fprintf(out, "wrote %s, review/code-review.md\n", artifact.CodeReviewFile)
				env.showHint(out, "code-review")
				fmt.Fprintf(out, "next: %s\n", next.text(env.command))
				return nil
			})
		},
	}
	taskFlag(cmd, &id)
	waitFlag(cmd, &wait)
	localFlag(cmd, &local)
	cmd.Flags().BoolVar(&fresh, "fresh", false, "ask the reviewers again instead of reusing cached answers")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the aggregated review as one JSON object")
	return cmd
}
