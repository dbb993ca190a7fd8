package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/orchdev/orch/internal/agent/planner"
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/termtext"
	"github.com/orchdev/orch/internal/worker"
)

// planOutput is what `orch plan --json` prints: one object.
type planOutput struct {
	Task      string                   `json:"task"`
	Round     int                      `json:"round"`
	Status    string                   `json:"status"`
	Title     string                   `json:"title"`
	Entered   *orchestrator.NextResult `json:"entered,omitempty"`
	Open      []artifact.Question      `json:"open_questions"`
	Questions []artifact.Question      `json:"questions"`
	Files     []artifact.FileEntry     `json:"files"`
	Restored  []string                 `json:"restored_answers"`
	Provider  string                   `json:"provider"`
	Model     string                   `json:"model,omitempty"`
	Next      string                   `json:"next"`
}

func newPlanCmd(env *Env) *cobra.Command {
	var id string
	var fresh, asJSON bool
	var wait time.Duration
	var local bool
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "run one planning round: the planner drafts or revises the plan",
		Long: `Run one planning round. The planner model gets the brief, the repository
(README and the files that match the brief, within [context] max_context_bytes),
the current plan with your answers, the plan reviewers' verdict on it and the
minutes so far, and returns the whole plan. orch checks it (re-asking the model
when it is invalid), keeps every answer you gave, and writes
planning/planning.ai.json, plan.md, plan.files.json and a line of meeting.jsonl.

orch, not the model, sets the sub-state in actors.planning:
  clarifying     a blocking question is open: answer it with ` + "`orch answer ID TEXT`" + `
  formalizing    no open question, but no file plan yet: run ` + "`orch plan`" + ` again
  review_ready   valid plan, no open question, a file plan: ` + "`orch next`" + ` moves to plan_review

Answers come from you only; the model cannot answer its own questions.
From plan_review, orch plan first takes plan_review → planning (its condition
must hold). Model tokens stream to stderr when stdout is a terminal.`,
		Example: `  orch plan
  orch answer q1 "exponential backoff, at most 5 attempts"
  orch plan --fresh          # do not reuse cached model answers`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runAgentPhase(cmd, env, wait, id, fresh, asJSON, local, lifecycle.Planning, func(o worker.Outcome) *planner.Result { return o.Plan }, func(a *agentCall, entered *orchestrator.NextResult, res planner.Result) error {
				tid, out := a.tid, a.out
				next := planNext(res, env.command)
				if asJSON {
					return json.NewEncoder(out).Encode(planOutput{
						Task: tid, Round: res.Round, Status: res.Status, Title: res.Plan.Title, Entered: entered,
						Open: nonNilQuestions(res.Open), Questions: nonNilQuestions(res.Plan.Questions),
						Files: nonNilFiles(res.Plan.FilePlan), Restored: nonNilStrings(res.Restored),
						Provider: res.Provider, Model: res.Model, Next: next,
					})
				}
				printEntered(out, entered)
				fmt.Fprintf(out, "task %s: planning round %d → %s\n", tid, res.Round, res.Status)
				fmt.Fprintf(out, "plan: %s (%d file(s) planned)\n", termtext.Line(res.Plan.Title), len(res.Plan.FilePlan))
				for _, f := range res.Plan.FilePlan {
					fmt.Fprintf(out, "  %-6s %s\n", termtext.Line(string(f.Intent)), termtext.Line(f.Path))
				}
				if len(res.Restored) > 0 {
					fmt.Fprintf(out, "kept your answer(s) to %s (the model dropped or changed them)\n", strings.Join(res.Restored, ", "))
				}
				if len(res.Dropped) > 0 {
					fmt.Fprintf(out, "removed answer(s) the model wrote itself to %s: only you answer questions\n", strings.Join(res.Dropped, ", "))
				}
				if len(res.Open) > 0 {
					fmt.Fprintf(out, "open blocking question(s) — answer each with `%s`:\n", env.command("answer ID TEXT"))
					for _, q := range res.Open {
						fmt.Fprintf(out, "  %s: %s\n", termtext.Line(q.ID), termtext.Line(q.Text))
					}
				}
				var other []artifact.Question
				for _, q := range res.Plan.Questions {
					if !q.Blocking && (q.Answer == nil || strings.TrimSpace(*q.Answer) == "") {
						other = append(other, q)
					}
				}
				if len(other) > 0 {
					fmt.Fprintln(out, "unanswered questions that do not block (answer them if you like):")
					for _, q := range other {
						fmt.Fprintf(out, "  %s: %s\n", termtext.Line(q.ID), termtext.Line(q.Text))
					}
				}
				fmt.Fprintf(out, "wrote %s, %s, %s, %s\n", artifact.PlanFile, artifact.PlanMarkdownFile, artifact.FilePlanFile, artifact.MeetingFile)
				env.showHint(out, "plan")
				fmt.Fprintf(out, "next: %s\n", next)
				return nil
			})
		},
	}
	taskFlag(cmd, &id)
	waitFlag(cmd, &wait)
	localFlag(cmd, &local)
	cmd.Flags().BoolVar(&fresh, "fresh", false, "ask the model again instead of reusing a cached answer")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the round's result as one JSON object")
	return cmd
}

// planNext says what to do after a round.
// command renders CLI words for the user (env.command: slash syntax in
// the REPL).
func planNext(res planner.Result, command func(string) string) string {
	switch res.Status {
	case planner.PlanClarifying:
		ids := make([]string, len(res.Open))
		for i, q := range res.Open {
			ids[i] = q.ID
		}
		return fmt.Sprintf("answer %s with `%s`, then run `%s` again", strings.Join(ids, ", "), command("answer "+res.Open[0].ID+" TEXT"), command("plan"))
	case planner.PlanReviewReady:
		return fmt.Sprintf("`%s` moves to plan_review (then `%s`)", command("next"), command("review plan"))
	case planner.PlanFormalizing:
		return fmt.Sprintf("run `%s` again: the plan lists no files yet", command("plan"))
	}
	return fmt.Sprintf("run `%s` again", command("plan"))
}

func nonNilQuestions(qs []artifact.Question) []artifact.Question {
	if qs == nil {
		return []artifact.Question{}
	}
	return qs
}

func nonNilFiles(fs []artifact.FileEntry) []artifact.FileEntry {
	if fs == nil {
		return []artifact.FileEntry{}
	}
	return fs
}

func nonNilStrings(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}
