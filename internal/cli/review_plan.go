package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/orchdev/orch/internal/agent/review"
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/termtext"
	"github.com/orchdev/orch/internal/worker"
)

// newReviewPlanCmd is `orch review plan`; the caller mounts it under
// `orch review`.
func newReviewPlanCmd(env *Env) *cobra.Command {
	var id string
	var fresh, asJSON bool
	var wait time.Duration
	var local bool
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "have the plan reviewers judge the plan, concurrently",
		Long: `Every persona of [review] plan_personas (default: product, architecture,
implementation, testing, risk) reviews planning/planning.ai.json at the same
time, as role plan_reviewer:<persona>. Each verdict is kept; orch computes the
aggregate itself: blocked when a reviewer is not ok with severity blocking, ok
only when every reviewer is ok. review/plan-review.json records the verdicts and
the sha256 of the plan as reviewed; review/plan-review.md is for reading.
A reviewer whose call fails fails the whole review: no partial verdict.

From planning, orch review plan first takes planning → plan_review (the plan
must be ready). Then ` + "`orch next`" + ` decides: ok goes to codegen, anything else
back to planning. Exit 0 whenever the review ran, whatever its verdict.`,
		Example: `  orch review plan
  orch review plan --json`,
		Args: wrapArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runAgentPhase(cmd, env, wait, id, fresh, asJSON, local, lifecycle.PlanReview, func(o worker.Outcome) *review.PlanResult { return o.PlanReview }, func(a *agentCall, entered *orchestrator.NextResult, res review.PlanResult) error {
				tid, out := a.tid, a.out
				r := res.Review
				if asJSON {
					return json.NewEncoder(out).Encode(r)
				}
				printEntered(out, entered)
				fmt.Fprintf(out, "plan review of task %s (plan sha256 %.12s…):\n", tid, r.PlanSHA256)
				for _, v := range r.Reviewers {
					fmt.Fprintf(out, "  %-16s %-6s %-8s %-7s %s\n", termtext.Line(v.ID), review.Verdict(v.OK), termtext.Line(string(v.Severity)), termtext.Line(string(v.Decision)), termtext.Line(v.Summary))
					for _, is := range v.BlockingIssues {
						fmt.Fprintf(out, "      must change: %s\n", termtext.Line(fmt.Sprint(is)))
					}
				}
				verdict := review.Verdict(r.OK && !r.Blocked)
				switch {
				case r.Blocked:
					verdict += " (blocked)"
				case !r.OK:
					verdict += " (changes requested)"
				}
				fmt.Fprintf(out, "verdict: %s\n", verdict)
				fmt.Fprintf(out, "wrote %s, %s\n", artifact.PlanReviewFile, strings.TrimSuffix(artifact.PlanReviewFile, ".json")+".md")
				env.showHint(out, "plan-review")
				switch {
				case r.OK:
					fmt.Fprintf(out, "next: `%s` moves to codegen\n", env.command("next"))
				case r.Blocked:
					fmt.Fprintf(out, "next: `%s` goes back to planning (blocked); then `%s` revises the plan with the reviewers' issues\n", env.command("next"), env.command("plan"))
				default:
					fmt.Fprintf(out, "next: `%s` goes back to planning (changes requested); then `%s` revises the plan with the reviewers' issues\n", env.command("next"), env.command("plan"))
				}
				return nil
			})
		},
	}
	taskFlag(cmd, &id)
	waitFlag(cmd, &wait)
	localFlag(cmd, &local)
	cmd.Flags().BoolVar(&fresh, "fresh", false, "ask the models again instead of reusing cached answers")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print review/plan-review.json's content")
	return cmd
}
