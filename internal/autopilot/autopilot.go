// Package autopilot runs a task through its phases: each phase's work, then
// `next`, in turn, stopping at the human gates (open blocking questions,
// the accept decision) unless answers or --yes were given, and bounding
// the codegen ↔ review/test loop. What to do next is decided by
// lifecycle.Pilot from the orchestrator's status, never guessed here; this
// package carries the steps out.
package autopilot

import (
	"context"
	"fmt"
	"strings"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/exit"
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

// Answerer records a person's answer to an open question (planner.Answer).
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

// Stop says why a run ended (the rules are lifecycle.Pilot's).
type Stop = lifecycle.PilotStopReason

// Stop reasons.
const (
	StopDone     = lifecycle.StopDone
	StopUntil    = lifecycle.StopUntil
	StopGate     = lifecycle.StopGate
	StopAttempts = lifecycle.StopAttempts
	StopStuck    = lifecycle.StopStuck
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
	in := lifecycle.PilotInput{Until: opt.Until, MaxAttempts: opt.MaxAttempts, Yes: opt.Yes}
	in.Answerable = func(q string) bool {
		_, ok := opt.Answers[q]
		return ok && opt.Answer != nil
	}
	worked := map[lifecycle.Phase]int{} // work runs since the task last moved
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
		in.Phase, in.Movable, in.Reason, in.Invalid, in.Worked = phase, v.Suggested != nil, v.Reason, v.Invalid, worked[phase]
		in.Open = nil
		t, err := o.Project.Open(id)
		if err != nil {
			return res, err
		}
		if phase == lifecycle.Planning {
			if plan := artifact.LoadPlan(t.Dir); plan.OK() {
				in.Open = plan.Value.OpenQuestions()
			}
		}
		step := lifecycle.Pilot(in)
		for _, q := range step.Answer {
			emit(Event{Event: "work", Phase: phase, Action: "answer " + q.ID})
			if err := opt.Answer(ctx, id, q.ID, opt.Answers[q.ID]); err != nil {
				return res, err
			}
		}
		switch step.Action {
		case lifecycle.PilotStop:
			return stop(phase, step.Stop, step.Message)
		case lifecycle.PilotFail:
			return res, exit.New(exit.ErrInvalid, "%s", step.Message)
		case lifecycle.PilotNext:
			nr, err := o.Next(ctx, id, orchestrator.NextRequest{From: phase})
			if err != nil {
				return res, err
			}
			emit(Event{Event: "next", From: nr.From, To: nr.To, Reason: nr.Reason})
			clear(worked)
			continue
		}
		worked[phase]++
		switch phase {
		case lifecycle.Planning:
			in.PlanRounds++
		case lifecycle.Codegen:
			in.CodegenRuns++
		}
		w, ok := workers.For(phase)
		if !ok {
			return stop(phase, StopStuck, fmt.Sprintf("%s cannot be automated here", phase))
		}
		run := worker.Run{Task: id}
		if phase == lifecycle.Accept {
			// The decision is taken on what this step observed: a task
			// changed since (another terminal, the board) is refused.
			run.Seen = v.Revision
		}
		if phase == lifecycle.Revert {
			run.Reason = "revert requested by the decision"
			if d := artifact.LoadDecision(t.Dir); d.OK() && len(d.Value.Reasons) > 0 {
				run.Reason = strings.Join(d.Value.Reasons, "; ")
			}
		}
		emit(Event{Event: "work", Phase: phase, Action: w.Command(), Attempt: step.Attempt})
		out, err := w.Work(ctx, run)
		if err != nil {
			return res, err
		}
		if opt.Worked != nil {
			opt.Worked(phase, out)
		}
	}
	return stop(res.Phase, StopStuck, fmt.Sprintf("stopped after %d steps", maxSteps))
}
