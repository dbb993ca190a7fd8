// Package nextstep decides what moves a task on: the orch command to run
// next and why (take the suggested edge, run the phase's worker, answer the
// planner's question, take the accept decision), from the task's status.
// `orch status`, the REPL, `orch serve`'s board and `orch mcp` all say the
// same thing because they all ask here.
package nextstep

import (
	"fmt"
	"strings"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/task"
	"github.com/orchdev/orch/internal/worker"
)

// Step is the command that moves a task on, in CLI words without the
// leading "orch" ("codegen", "answer q1 TEXT"), and why. Args is empty
// when no command moves the task (done, or a run in progress).
type Step struct {
	Args string `json:"command"`
	Why  string `json:"why"`
}

// For decides the command to run for a task whose status is v: take the
// suggested edge; in a phase with work, run its worker (answer the open
// question first while planning); at the human gates, the decision. open
// is the first open blocking question's id while planning ("" when none).
// A task that is done or whose state cannot move has no step (Args "").
func For(v orchestrator.StatusView, open string) Step {
	if v.Pending != nil {
		return Step{Args: "next --from " + string(v.Phase), Why: "any orch command rolls the interrupted commit forward"}
	}
	interrupted := ""
	if a, ok := v.Actors[v.Phase]; ok && a.Status == lifecycle.StatusRunning {
		if pid, live := a.LivePID(); live {
			return Step{Why: fmt.Sprintf("wait: %s is running (pid %d)", v.Phase, pid)}
		}
		interrupted = fmt.Sprintf("the last %s run was interrupted (pid %d is gone); run it again", v.Phase, a.PID)
	}
	if v.Suggested != nil && interrupted == "" {
		return Step{Args: "next", Why: fmt.Sprintf("take %s → %s", v.Phase, *v.Suggested)}
	}
	if interrupted == "" {
		// The forward edge's condition holds but a requirement does not:
		// the phase's command, never `next`, which would refuse.
		for _, e := range v.Edges {
			switch e.Unmet {
			case lifecycle.CondCommitted:
				return Step{Args: "accept", Why: artifact.DecisionFile + " says accepted and nothing is committed: `accept` applies the decision and commits the change"}
			case lifecycle.CondNewPlan, lifecycle.CondNewPatch, lifecycle.CondNewReview:
				return Step{Args: lifecycle.PhaseCommand(v.Phase), Why: "a regression sent the " + string(v.Phase) + " output back: make a new one (or override with a reason)"}
			}
		}
	}
	switch v.Phase {
	case lifecycle.Done:
		return Step{Why: "the task is done; `orch redo PHASE` re-opens it"}
	case lifecycle.Planning:
		if open != "" {
			return Step{Args: "answer " + open + " TEXT", Why: "the planner asked a blocking question"}
		}
	case lifecycle.Accept:
		return Step{Args: "accept --verdict accepted|changes_requested|rejected --reason R", Why: or(interrupted, "the accept decision is yours")}
	case lifecycle.Revert:
		return Step{Args: "revert --reason R", Why: or(interrupted, "the decision asked for a revert")}
	}
	if w, ok := worker.Registry(worker.Deps{}).For(v.Phase); ok {
		why := workWhy[v.Phase]
		if a, ok := v.Actors[v.Phase]; ok && a.LastRun == lifecycle.RunCancelled {
			why = "the last run was cancelled: run it again"
		}
		if len(v.Invalid) > 0 {
			why = "re-run the phase, or fix the invalid file named above"
		}
		return Step{Args: w.Command(), Why: or(interrupted, why)}
	}
	return Step{}
}

// workWhy says what a phase's worker does, for the hint.
var workWhy = map[lifecycle.Phase]string{
	lifecycle.Planning:   "the planner drafts the plan; or write planning/planning.ai.json yourself",
	lifecycle.PlanReview: "the plan reviewers judge the plan",
	lifecycle.Codegen:    "codegen writes the change the plan describes",
	lifecycle.Review:     "the code reviewers judge the change",
	lifecycle.Test:       "run the suites on the change, sandboxed",
}

// OpenQuestion is the id of the plan's first open blocking question
// while the task plans, "" otherwise.
func OpenQuestion(t *task.Task, phase lifecycle.Phase) string {
	if phase != lifecycle.Planning {
		return ""
	}
	return OpenQuestionOf(artifact.LoadPlan(t.Dir), phase)
}

// OpenQuestionOf is OpenQuestion of a plan the caller loaded.
func OpenQuestionOf(plan artifact.Loaded[artifact.Plan], phase lifecycle.Phase) string {
	if phase != lifecycle.Planning || !plan.OK() {
		return ""
	}
	if qs := plan.Value.OpenQuestions(); len(qs) > 0 {
		return qs[0].ID
	}
	return ""
}

// DoneWithoutCommit warns about a task overridden to done when no
// accepted commit is recorded: the change never reached the branch. It
// returns "" when there is nothing to warn about.
func DoneWithoutCommit(p *task.Project, id string) string {
	t, err := p.Open(id)
	if err != nil {
		return ""
	}
	if d := artifact.LoadDecision(t.Dir); d.OK() && d.Value.Verdict == artifact.VerdictAccepted && d.Value.Commit != "" {
		return ""
	}
	if artifact.LoadRevertRecord(t.Dir).OK() {
		return "" // done by revert: nothing of the change is meant to stay
	}
	return "the task is done by override and nothing was committed: code/diff.patch is not in your branch (`orch redo accept` and `orch accept --verdict accepted` commit it)"
}

// or returns a unless it is empty, else b.
func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Waits says in a few words what a task whose status is v and step s
// waits for — "waits for your answer to q1", "waits for your accept
// decision", "running codegen (pid 42)", "ready to move to review",
// "test failures: back to codegen" —
// and whether that is a person. The words name no command, so they read
// the same in a shell, the REPL and on the board.
func Waits(s Step, v orchestrator.StatusView) (words string, human bool) {
	if a, ok := v.Actors[v.Phase]; ok && a.Status == lifecycle.StatusRunning {
		if pid, live := a.LivePID(); live {
			return fmt.Sprintf("running %s (pid %d)", v.Phase, pid), false
		}
	}
	args := s.Args
	switch {
	case v.Phase == lifecycle.Done:
		return "done", false
	case args == "":
		return s.Why, false
	case strings.HasPrefix(args, "answer "):
		return "waits for your answer to " + strings.Fields(args)[1], true
	case strings.HasPrefix(args, "accept "):
		return "waits for your accept decision", true
	case args == "accept":
		return "waits for the accepted change to be committed", true
	case strings.HasPrefix(args, "revert "):
		return "waits for a revert with your reason", true
	case strings.HasPrefix(args, "next --from"):
		return "an interrupted commit waits to be rolled forward", false
	case args == "next" && v.Suggested != nil:
		if back, ok := regression(v); ok {
			return back, false
		}
		return "ready to move to " + string(*v.Suggested), false
	}
	if w, ok := workerWords[args]; ok {
		return "waits for " + w, false
	}
	return s.Why, false
}

// regression says why a task leaves the forward path when the edge that
// holds towards the suggested phase is not the forward one — "test
// failures: back to codegen", "revert requested: on to revert" — so a
// failed gate never reads like progress.
func regression(v orchestrator.StatusView) (string, bool) {
	for _, e := range v.Edges {
		if e.Holds && e.To == *v.Suggested && !e.Forward && e.To != v.Phase {
			way := "back to "
			if e.To.Index() > v.Phase.Index() {
				way = "on to " // accept's revert
			}
			if e.Label == "" {
				return way + string(e.To), true
			}
			return e.Label + ": " + way + string(e.To), true
		}
	}
	return "", false
}

// workerWords names the work a phase's command does.
var workerWords = map[string]string{
	"plan":        "the planner",
	"review plan": "the plan reviewers",
	"codegen":     "codegen",
	"review code": "the code reviewers",
	"test":        "a test run",
}

// WrongPhase refuses phase p's command (exit 3, nothing changed) for a
// task whose status is v, when its phase is neither p nor one step before
// it; nil otherwise. The advice is step, the status's line naming the
// command that moves the task on, never a way past the gates; skipping
// phases with --override is named only as the deliberate escape hatch.
// From the phase before p, from done and during an interrupted commit the
// command's own checks answer. command renders CLI words as the user
// types them (`orch accept`, or `/accept` in the REPL). The CLI's phase
// commands and the fleet's accept and revert gates refuse with it.
func WrongPhase(v orchestrator.StatusView, p lifecycle.Phase, command func(string) string, step string) error {
	if v.Phase == p || v.Phase.Terminal() || v.Pending != nil {
		return nil
	}
	for _, e := range v.Edges {
		if e.To == p {
			return nil
		}
	}
	return exit.New(exit.ErrRefused, "task %s is in %s, not %s: %s runs once the task reaches %s",
		v.Task, v.Phase, p, "`"+command(lifecycle.PhaseCommand(p))+"`", p).
		WithHint("%s", step).
		WithHint("(to skip the gates on purpose, with a reason that is logged: %s)",
			command(fmt.Sprintf("next --override \"REASON\" --to %s", p)))
}

// StepLine is the status's line naming the command that moves the task
// on, in shell words (orch status prints it).
func StepLine(s Step) string {
	if s.Args == "" {
		return s.Why
	}
	return fmt.Sprintf("run: orch %s  (%s)", s.Args, strings.TrimSpace(s.Why))
}
