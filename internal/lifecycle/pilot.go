package lifecycle

import (
	"fmt"
	"strings"

	"github.com/orchdev/orch/internal/artifact"
)

// The autopilot's rules (`orch run`, the demo): what to do next in a task,
// given its status and what the run has done so far. Like Decide, Pilot is
// a pure function; internal/autopilot carries out its steps (the work, the
// transitions, the answers) and counts.

// PilotAction is what the autopilot does next.
type PilotAction string

// Pilot actions.
const (
	// PilotNext takes the transition the status suggests (orch next).
	PilotNext PilotAction = "next"
	// PilotWork runs the phase's worker.
	PilotWork PilotAction = "work"
	// PilotStop ends the run (Step.Stop says why).
	PilotStop PilotAction = "stop"
	// PilotFail ends the run with an error: an artifact is invalid.
	PilotFail PilotAction = "fail"
)

// PilotStopReason says why a run ended.
type PilotStopReason string

// Stop reasons.
const (
	StopDone     PilotStopReason = "done"     // the task is done
	StopUntil    PilotStopReason = "until"    // the task reached --until
	StopGate     PilotStopReason = "gate"     // a human must answer or decide
	StopAttempts PilotStopReason = "attempts" // the codegen loop ran out of attempts
	StopStuck    PilotStopReason = "stuck"    // a phase's work did not make the task move
)

// PilotInput is what the autopilot knows at a step.
type PilotInput struct {
	// Phase is the task's phase; Until the phase to stop at ("" = done).
	Phase, Until Phase
	// Movable: the status suggests a transition (a condition holds).
	Movable bool
	// Reason is the status's explanation of why the phase cannot move.
	Reason string
	// Invalid lists the status's invalid artifacts.
	Invalid []string
	// Worked counts the phase's work runs since the task last moved.
	Worked int
	// PlanRounds and CodegenRuns count the planner's and codegen's runs
	// so far in this run; MaxAttempts bounds codegen runs (planning gets
	// two rounds more, for its questions).
	PlanRounds, CodegenRuns, MaxAttempts int
	// Yes takes the human decisions: accept, and carrying out a revert.
	Yes bool
	// Open are the plan's open blocking questions (planning only);
	// Answerable reports whether the run holds an answer to one.
	Open       []artifact.Question
	Answerable func(id string) bool
}

// PilotStep is what to do.
type PilotStep struct {
	Action PilotAction
	// Stop and Message say why the run stops (PilotStop, PilotFail).
	Stop    PilotStopReason
	Message string
	// Answer lists the open questions to answer first, with the run's
	// answers (before the work, or before stopping at the gate when
	// some remain unanswered).
	Answer []artifact.Question
	// Attempt numbers the work run (planning rounds, codegen runs; 0 for
	// the other phases).
	Attempt int
}

// Pilot decides the autopilot's next step.
func Pilot(in PilotInput) PilotStep {
	stop := func(s PilotStopReason, format string, args ...any) PilotStep {
		return PilotStep{Action: PilotStop, Stop: s, Message: fmt.Sprintf(format, args...)}
	}
	p := in.Phase
	switch {
	case in.Until != "" && p == in.Until:
		return stop(StopUntil, "reached %s", p)
	case p == Done:
		return stop(StopDone, "the task is done")
	case in.Movable:
		return PilotStep{Action: PilotNext}
	case len(in.Invalid) > 0:
		return PilotStep{Action: PilotFail, Message: "invalid artifact: " + in.Invalid[0]}
	case in.Worked > 0 && p != Planning:
		return stop(StopStuck, "%s ran but the task cannot move on: %s", p, in.Reason)
	}
	work := PilotStep{Action: PilotWork}
	switch p {
	case Planning:
		if len(in.Open) > 0 {
			for _, q := range in.Open {
				if in.Answerable != nil && in.Answerable(q.ID) {
					work.Answer = append(work.Answer, q)
				}
			}
			if len(work.Answer) < len(in.Open) {
				s := stop(StopGate, "%s", openQuestions(in.Open))
				s.Answer = work.Answer
				return s
			}
		}
		if in.PlanRounds >= in.MaxAttempts+2 {
			s := stop(StopStuck, "%d planning rounds without a plan ready for review: %s", in.PlanRounds, in.Reason)
			s.Answer = work.Answer
			return s
		}
		work.Attempt = in.PlanRounds + 1
	case Codegen:
		if in.CodegenRuns >= in.MaxAttempts {
			return stop(StopAttempts, "codegen ran %d times without passing review and tests: look at history/ and the last report, then `orch codegen` or `orch redo`", in.CodegenRuns)
		}
		work.Attempt = in.CodegenRuns + 1
	case Accept:
		if !in.Yes {
			return stop(StopGate, "the accept decision is yours: `orch accept` (or run with --yes to accept when the evidence is complete)")
		}
	case Revert:
		if !in.Yes {
			return stop(StopGate, "a revert was requested: `orch revert --reason ...` (or run with --yes)")
		}
	}
	return work
}

func openQuestions(qs []artifact.Question) string {
	var b strings.Builder
	b.WriteString("open blocking question(s): answer with `orch answer ID TEXT` or `orch run --answer ID=TEXT`:")
	for _, q := range qs {
		fmt.Fprintf(&b, "\n  %s: %s", q.ID, q.Text)
	}
	return b.String()
}
