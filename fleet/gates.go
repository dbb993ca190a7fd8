package fleet

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"go.temporal.io/sdk/temporal"

	"github.com/orchdev/orch/internal/agent/planner"
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/landing"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/nextstep"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/view"
)

// UpdateRevert carries out a requested revert (orch revert --reason R).
const UpdateRevert = "revert"

// ErrConflict is the error type of a step that found the task's ref moved
// by someone else than its own earlier attempt: it is not retried.
const ErrConflict = "orch.conflict"

// exitPrefix starts the error type of orch's refusals: "orch.exit.3".
const exitPrefix = "orch.exit."

// The validators of the gates' Updates. Each runs inside the workflow on
// its last observation of the task (so it reads nothing and is
// deterministic) and refuses with the same check, message and exit code
// as the local command; a refused Update never enters the workflow's
// history. What only the task's lock can tell (a revision that moved, a
// run in progress) is checked again by the engine when the step runs.

// command renders CLI words as a person types them in a shell.
func command(args string) string { return "orch " + args }

// ValidateAnswer is `orch answer ID TEXT`'s refusal, or nil.
func ValidateAnswer(id string, o Observation, r AnswerRequest) error {
	plan := artifact.Loaded[artifact.Plan]{Present: o.Plan.Present}
	if o.Plan.Err != "" {
		plan.Err = errors.New(o.Plan.Err)
	}
	plan.Value.Questions = o.Plan.Questions
	return planner.CheckAnswer(id, o.Phase, plan, r.Question, r.Text)
}

// ValidateAccept is `orch accept --verdict V --reason R`'s refusal, or nil.
func ValidateAccept(id string, o Observation, r AcceptRequest) error {
	if r.Verdict == "" {
		return exit.New(exit.ErrUsage, "accept needs --verdict (accepted, changes_requested, rejected or revert) and --reason when not run in a terminal")
	}
	if err := wrongPhase(o, lifecycle.Accept); err != nil {
		return err
	}
	if err := landing.CheckDecision(landing.AcceptOptions{Verdict: r.Verdict, Target: r.Target, Reasons: r.Reasons}); err != nil {
		return exit.New(exit.ErrUsage, "%v", err)
	}
	return nil
}

// ValidateOverride is `orch next --override R [--to P]`'s refusal, or nil.
func ValidateOverride(id string, o Observation, r OverrideRequest) error {
	if r.To != "" {
		if _, err := lifecycle.ParsePhase(string(r.To)); err != nil {
			return exit.New(exit.ErrUsage, "--to: %v", err)
		}
	}
	return orchestrator.CheckOverride(lifecycle.Lifecycle(), id, o.Phase, r.To, r.Reason)
}

// ValidateRedo is `orch redo [PHASE]`'s refusal, or nil.
func ValidateRedo(id string, o Observation, r RedoRequest) error {
	if r.Phase != "" {
		if _, err := lifecycle.ParsePhase(string(r.Phase)); err != nil {
			return exit.New(exit.ErrUsage, "redo: %v", err)
		}
	}
	_, err := orchestrator.RedoTarget(o.Phase, r.Phase)
	return err
}

// ValidateRevert is `orch revert --reason R`'s refusal, or nil.
func ValidateRevert(id string, o Observation, reason string) error {
	if err := wrongPhase(o, lifecycle.Revert); err != nil {
		return err
	}
	return landing.CheckRevertReason(reason)
}

// wrongPhase is the phase commands' refusal of a task that is neither in
// phase p nor one step before it (nextstep.WrongPhase).
func wrongPhase(o Observation, p lifecycle.Phase) error {
	var v view.Status
	if len(o.Status) == 0 || json.Unmarshal(o.Status, &v) != nil {
		return nil // the step's own checks answer
	}
	return nextstep.WrongPhase(v.StatusView, p, command, nextstep.StepLine(o.Step))
}

// refusal is orch's refusal err, as Temporal carries it to the caller:
// its message, its exit code (in the error's type) and its hints (the
// error's details).
func refusal(err error) error {
	return refusalOf(err.Error(), int(exitCode(err)), exit.Hints(err))
}

func refusalOf(msg string, code int, hints []string) error {
	return temporal.NewNonRetryableApplicationError(msg, exitType(code), nil, hints)
}

func exitType(code int) string { return exitPrefix + strconv.Itoa(code) }

// exitCode is err's exit code (exit.Of).
func exitCode(err error) exit.Code { return exit.Of(err) }

// FromTemporal turns an error of a gate's Update or of the workflow into
// orch's error: a refusal of orch's checks keeps its message, exit code
// and hints, so that it is shown as the local command shows it
// (exit.Format); anything else is returned as it is.
func FromTemporal(err error) error {
	var ae *temporal.ApplicationError
	if !errors.As(err, &ae) || !strings.HasPrefix(ae.Type(), exitPrefix) {
		return err
	}
	kind := exit.ErrInternal
	if n, err := strconv.Atoi(strings.TrimPrefix(ae.Type(), exitPrefix)); err == nil {
		kind = exit.KindOf(exit.Code(n))
	}
	out := exit.New(kind, "%s", ae.Message())
	var hints []string
	if ae.HasDetails() && ae.Details(&hints) == nil {
		for _, h := range hints {
			out = out.WithHint("%s", h)
		}
	}
	return out
}
