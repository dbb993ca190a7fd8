// Package autopilot runs a task through its phases: each phase's work, then
// `next`, in turn, stopping at the human gates (open blocking questions,
// the accept decision) unless answers or --yes were given, and bounding
// the codegen ↔ review/test loop. What to do next is decided from the
// orchestrator's status, never guessed.
package autopilot

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/worker"
)

// Workers finds each phase's worker (worker.Registry; tests bring their
// own). A phase without a worker cannot be automated here; the autopilot
// stops and says so. The accept worker runs only with Yes and must hold
// the decision to take (worker.Deps.Accept).
type Workers interface {
	For(p lifecycle.Phase) (worker.Worker, bool)
}

// Answerer records a person's answer to an open question (agent.Answer).
type Answerer func(ctx context.Context, id, question, text string) error

// Options configure a run.
type Options struct {
	// Until stops when the task reaches this phase ("" = done).
	Until lifecycle.Phase
	// Yes takes the accept decision (accepted, when the evidence is
	// complete) and carries out a requested revert.
	Yes bool
	// MaxAttempts bounds codegen runs (default 3).
	MaxAttempts int
	// Answers answer open blocking questions by id.
	Answers map[string]string
	// Answer records them; nil means questions stop the run.
	Answer Answerer
	// Event receives progress; may be nil.
	Event func(Event)
	// Worked receives each phase's outcome after its work succeeded (the
	// demo narrates from it); may be nil.
	Worked func(lifecycle.Phase, worker.Outcome)
}

// Event is one step of the run, streamed as a JSON line by `orch run --json`.
//
//	{"event": "work", "phase": "codegen", "action": "codegen", "attempt": 2}
//	{"event": "next", "from": "test", "to": "codegen", "reason": "..."}
//	{"event": "stop", "phase": "accept", "stop": "gate", "message": "..."}
type Event struct {
	Event   string          `json:"event"`
	Phase   lifecycle.Phase `json:"phase,omitempty"`
	Action  string          `json:"action,omitempty"`
	Attempt int             `json:"attempt,omitempty"`
	From    lifecycle.Phase `json:"from,omitempty"`
	To      lifecycle.Phase `json:"to,omitempty"`
	Reason  string          `json:"reason,omitempty"`
	Stop    Stop            `json:"stop,omitempty"`
	Message string          `json:"message,omitempty"`
}

// Stop says why a run ended.
type Stop string

// Stop reasons.
const (
	StopDone     Stop = "done"     // the task is done
	StopUntil    Stop = "until"    // the task reached --until
	StopGate     Stop = "gate"     // a human must answer or decide
	StopAttempts Stop = "attempts" // the codegen loop ran out of attempts
	StopStuck    Stop = "stuck"    // a phase's work did not make the task move
)

// Result is how a run ended.
type Result struct {
	Task    string
	Phase   lifecycle.Phase
	Stop    Stop
	Message string
}

// maxSteps bounds the loop whatever happens.
const maxSteps = 200

// Run drives task id until done, --until, a gate, the attempt bound, or a
// phase that does not move. Errors of the work (a model failure, an invalid
// artifact) end the run and are returned as they are.
func Run(ctx context.Context, o *orchestrator.Orchestrator, id string, workers Workers, opt Options) (Result, error) {
	if opt.MaxAttempts <= 0 {
		opt.MaxAttempts = 3
	}
	emit := func(e Event) {
		if opt.Event != nil {
			opt.Event(e)
		}
	}
	res := Result{Task: id}
	stop := func(p lifecycle.Phase, s Stop, msg string) (Result, error) {
		res.Phase, res.Stop, res.Message = p, s, msg
		emit(Event{Event: "stop", Phase: p, Stop: s, Message: msg})
		return res, nil
	}
	codegenRuns := 0
	worked := map[lifecycle.Phase]int{} // work runs since the task last moved
	planRounds := 0
	for range maxSteps {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		v, err := o.Status(id)
		if err != nil {
			return res, err
		}
		phase := v.Phase
		res.Phase = phase
		if opt.Until != "" && phase == opt.Until {
			return stop(phase, StopUntil, fmt.Sprintf("reached %s", phase))
		}
		if phase == lifecycle.Done {
			return stop(phase, StopDone, "the task is done")
		}
		if v.Suggested != nil {
			nr, err := o.Next(ctx, id, orchestrator.NextRequest{From: phase})
			if err != nil {
				return res, err
			}
			emit(Event{Event: "next", From: nr.From, To: nr.To, Reason: nr.Reason})
			clear(worked)
			continue
		}
		if len(v.Invalid) > 0 {
			return res, &orchestrator.Error{Kind: orchestrator.ErrInvalid, Msg: "orch: invalid artifact: " + v.Invalid[0]}
		}
		if worked[phase] > 0 && phase != lifecycle.Planning {
			return stop(phase, StopStuck, fmt.Sprintf("%s ran but the task cannot move on: %s", phase, v.Reason))
		}
		worked[phase]++
		t, err := o.Project.Open(id)
		if err != nil {
			return res, err
		}
		work := func(attempt int, run worker.Run) error {
			w, ok := workers.For(phase)
			if !ok {
				return errStop
			}
			emit(Event{Event: "work", Phase: phase, Action: w.Command(), Attempt: attempt})
			run.Task = id
			out, err := w.Work(ctx, run)
			if err == nil && opt.Worked != nil {
				opt.Worked(phase, out)
			}
			return err
		}
		switch phase {
		case lifecycle.Planning:
			plan := artifact.LoadPlan(t.Dir)
			if plan.OK() {
				if open := plan.Value.OpenQuestions(); len(open) > 0 {
					answered := 0
					for _, q := range open {
						if ans, ok := opt.Answers[q.ID]; ok && opt.Answer != nil {
							emit(Event{Event: "work", Phase: phase, Action: "answer " + q.ID})
							if err := opt.Answer(ctx, id, q.ID, ans); err != nil {
								return res, err
							}
							answered++
						}
					}
					if answered < len(open) {
						return stop(phase, StopGate, openQuestions(open))
					}
				}
			}
			planRounds++
			if planRounds > opt.MaxAttempts+2 {
				return stop(phase, StopStuck, fmt.Sprintf("%d planning rounds without a plan ready for review: %s", planRounds-1, v.Reason))
			}
			err = work(planRounds, worker.Run{})
		case lifecycle.PlanReview:
			err = work(0, worker.Run{})
		case lifecycle.Codegen:
			if codegenRuns >= opt.MaxAttempts {
				return stop(phase, StopAttempts, fmt.Sprintf("codegen ran %d times without passing review and tests: look at history/ and the last report, then `orch codegen` or `orch redo`", codegenRuns))
			}
			codegenRuns++
			err = work(codegenRuns, worker.Run{})
		case lifecycle.Review:
			err = work(0, worker.Run{})
		case lifecycle.Test:
			err = work(0, worker.Run{})
		case lifecycle.Accept:
			if !opt.Yes {
				return stop(phase, StopGate, "the accept decision is yours: `orch accept` (or run with --yes to accept when the evidence is complete)")
			}
			err = work(0, worker.Run{})
		case lifecycle.Revert:
			if !opt.Yes {
				return stop(phase, StopGate, "a revert was requested: `orch revert --reason ...` (or run with --yes)")
			}
			reason := "revert requested by the decision"
			if d := artifact.LoadDecision(t.Dir); d.OK() && len(d.Value.Reasons) > 0 {
				reason = strings.Join(d.Value.Reasons, "; ")
			}
			err = work(0, worker.Run{Reason: reason})
		}
		if errors.Is(err, errStop) {
			return stop(phase, StopStuck, fmt.Sprintf("%s cannot be automated here", phase))
		}
		if err != nil {
			return res, err
		}
	}
	return stop(res.Phase, StopStuck, fmt.Sprintf("stopped after %d steps", maxSteps))
}

var errStop = errors.New("no action")

func openQuestions(qs []artifact.Question) string {
	var b strings.Builder
	b.WriteString("open blocking question(s): answer with `orch answer ID TEXT` or `orch run --answer ID=TEXT`:")
	for _, q := range qs {
		fmt.Fprintf(&b, "\n  %s: %s", q.ID, q.Text)
	}
	return b.String()
}
