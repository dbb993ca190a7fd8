package cli

import (
	"fmt"
	"strings"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/task"
	"github.com/orchdev/orch/internal/worker"
)

// A step is the command that moves a task on, in CLI words without the
// leading "orch" ("codegen", "answer q1 TEXT"), and why.
type step struct {
	Args string `json:"command"`
	Why  string `json:"why"`
}

// stepFor decides the command to run for a task whose status is v: take
// the suggested edge; in a phase with work, run its worker (answer the open
// question first while planning); at the human gates, the decision. open
// is the first open blocking question's id while planning ("" when none).
// A task that is done or whose state cannot move has no step (Args "").
func stepFor(v orchestrator.StatusView, open string) step {
	if v.Pending != nil {
		return step{Args: "next --from " + string(v.Phase), Why: "any orch command rolls the interrupted commit forward"}
	}
	interrupted := ""
	if a, ok := v.Actors[v.Phase]; ok && a.Status == lifecycle.StatusRunning {
		if pid, live := a.LivePID(); live {
			return step{Why: fmt.Sprintf("wait: %s is running (pid %d)", v.Phase, pid)}
		}
		interrupted = fmt.Sprintf("the last %s run was interrupted (pid %d is gone); run it again", v.Phase, a.PID)
	}
	if v.Suggested != nil && interrupted == "" {
		return step{Args: "next", Why: fmt.Sprintf("take %s → %s", v.Phase, *v.Suggested)}
	}
	switch v.Phase {
	case lifecycle.Done:
		return step{Why: "the task is done; `redo PHASE` reopens it"}
	case lifecycle.Planning:
		if open != "" {
			return step{Args: "answer " + open + " TEXT", Why: "the planner asked a blocking question"}
		}
	case lifecycle.Accept:
		return step{Args: "accept --verdict accepted|changes_requested|rejected --reason R", Why: or(interrupted, "the accept decision is yours")}
	case lifecycle.Revert:
		return step{Args: "revert --reason R", Why: or(interrupted, "the decision asked for a revert")}
	}
	if w, ok := worker.Registry(worker.Deps{}).For(v.Phase); ok {
		why := workWhy[v.Phase]
		if len(v.Invalid) > 0 {
			why = "re-run the phase, or fix the invalid file named above"
		}
		return step{Args: w.Command(), Why: or(interrupted, why)}
	}
	return step{}
}

// workWhy says what a phase's worker does, for the hint.
var workWhy = map[lifecycle.Phase]string{
	lifecycle.Planning:   "the planner drafts the plan; or write planning/planning.ai.json yourself",
	lifecycle.PlanReview: "the plan reviewers judge the plan",
	lifecycle.Codegen:    "codegen writes the change the plan describes",
	lifecycle.Review:     "the code reviewers judge the change",
	lifecycle.Test:       "run the suites on the change, sandboxed",
}

// firstOpenQuestion is the id of the plan's first open blocking question
// while the task plans, "" otherwise.
func firstOpenQuestion(t *task.Task, phase lifecycle.Phase) string {
	if phase != lifecycle.Planning {
		return ""
	}
	plan := artifact.LoadPlan(t.Dir)
	if !plan.OK() {
		return ""
	}
	if qs := plan.Value.OpenQuestions(); len(qs) > 0 {
		return qs[0].ID
	}
	return ""
}

// command renders CLI words as the user types them: `orch codegen` in a
// shell, `/codegen` in the REPL.
func (env *Env) command(args string) string {
	if env.REPL {
		return "/" + args
	}
	return "orch " + args
}

// stepLine is the status line naming the command to run.
func (env *Env) stepLine(s step) string {
	if s.Args == "" {
		return s.Why
	}
	return fmt.Sprintf("run: %s  (%s)", env.command(s.Args), strings.TrimSpace(s.Why))
}

// or returns a unless it is empty, else b.
func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
