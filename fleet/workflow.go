package fleet

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/view"
)

// ActivityName is the one activity a task's workflow runs: a Step.
const ActivityName = "orch.step"

// flow is a task workflow's state: the last observation (what the queries
// answer and the decisions read), the steps so far, and the gates' actions
// waiting to be carried out.
type flow struct {
	p       Params
	obs     Observation
	history []HistoryEntry
	gates   []*gateCall
	// Waiting says why the task waits for a person ("" while it moves).
	waiting string
	// running is the step in progress, if any.
	running *Step
	// failed is the step that failed for good while the workflow waits
	// for a person after it (nil otherwise).
	failed *Failure
}

// Failure is a step whose activity failed for good: it used up its
// retries or found the task's ref moved by someone else (ErrConflict).
// The workflow keeps it while it waits for a person's redo, override or
// revert (docs/fleet.md, "When a step fails").
type Failure struct {
	Step  Step   `json:"step"`
	Type  string `json:"type,omitempty"`
	Error string `json:"error"`
}

// failVersion marks the workflows that wait at a human gate after a
// step that failed for good (version 1); a history recorded before it
// (workflow.DefaultVersion) ended the workflow with the step's error and
// still does so when it is replayed.
const failVersion = "orch.wait-on-failure"

// gateCall is an accepted gate Update waiting for its step.
type gateCall struct {
	step Step
	done bool
	res  GateResult
	err  error
}

// TaskWorkflow drives one task: observe, decide with lifecycle.Pilot (the
// rules of `orch run`, without --yes: the accept decision and a revert are
// a person's), carry the step out as an activity, and at a human gate wait
// for an Update. It ends when the task is done.
func TaskWorkflow(ctx workflow.Context, p Params) (Final, error) {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 3
	}
	f := &flow{p: p, obs: Observation{Head: p.Head}}
	if err := f.register(ctx); err != nil {
		return Final{}, err
	}
	res, err := f.step(ctx, Step{Kind: StepObserve})
	if err != nil {
		return Final{}, err
	}
	if res.Error != "" {
		return Final{}, refusalOf(res.Error, res.ExitCode, res.Hints)
	}
	in := lifecycle.PilotInput{MaxAttempts: p.MaxAttempts}
	worked := map[lifecycle.Phase]int{}
	for {
		// The gates' actions first, in the order they came.
		if len(f.gates) > 0 {
			g := f.gates[0]
			f.gates = f.gates[1:]
			f.runGate(ctx, g)
			clear(worked)
			continue
		}
		o := f.obs
		in.Phase, in.Movable, in.Reason, in.Invalid, in.Worked = o.Phase, o.Movable, o.Reason, o.Invalid, worked[o.Phase]
		in.Open = nil
		if o.Phase == lifecycle.Planning && o.Plan.Present && o.Plan.Err == "" {
			for _, q := range o.Plan.Questions {
				if q.Open() {
					in.Open = append(in.Open, q)
				}
			}
		}
		s := lifecycle.Pilot(in)
		switch s.Action {
		case lifecycle.PilotStop:
			if s.Stop == lifecycle.StopDone {
				return Final{Task: p.Task, Head: f.obs.Head}, nil
			}
			f.wait(ctx, s.Message)
			continue
		case lifecycle.PilotFail:
			f.wait(ctx, s.Message)
			continue
		case lifecycle.PilotNext:
			res, err := f.step(ctx, Step{Kind: StepNext, Phase: o.Phase})
			if err != nil {
				if !f.waitAfter(ctx, Step{Kind: StepNext, Phase: o.Phase}, err) {
					return Final{}, err
				}
				clear(worked)
				continue
			}
			if res.Error != "" {
				f.wait(ctx, res.Error)
			}
			clear(worked)
			continue
		}
		worked[o.Phase]++
		switch o.Phase {
		case lifecycle.Planning:
			in.PlanRounds++
		case lifecycle.Codegen:
			in.CodegenRuns++
		}
		res, err := f.step(ctx, Step{Kind: StepWork, Phase: o.Phase})
		if err != nil {
			if !f.waitAfter(ctx, Step{Kind: StepWork, Phase: o.Phase}, err) {
				return Final{}, err
			}
			continue
		}
		if res.Error != "" {
			// orch refused the work or the work failed (a model that
			// cannot be reached, an invalid artifact): a person decides.
			f.wait(ctx, res.Error)
		}
	}
}

// wait blocks until a gate's Update arrives.
func (f *flow) wait(ctx workflow.Context, why string) {
	f.waiting = why
	_ = workflow.Await(ctx, func() bool { return len(f.gates) > 0 })
	f.waiting = ""
}

// waitAfter handles step s's activity failing for good with err, as a
// phase that runs out of attempts or fails is handled locally: the task
// stays in its phase and a person decides (orch redo, orch next
// --override, orch revert). It records the failure, which the queries
// show and the workflow's history holds (the activity's failed event),
// and waits for a gate's Update. It is false for a workflow recorded
// before this behaviour (failVersion), which then ends with err as it
// did.
func (f *flow) waitAfter(ctx workflow.Context, s Step, err error) bool {
	if workflow.GetVersion(ctx, failVersion, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return false
	}
	s.Task, s.Head = f.p.Task, f.obs.Head
	fl := failureOf(s, err)
	f.failed = &fl
	workflow.GetLogger(ctx).Warn("step failed for good; waiting for a person", "step", s.Kind, "phase", s.Phase, "error", fl.Error)
	f.wait(ctx, fl.Message())
	f.failed = nil
	return true
}

// failureOf describes step s's activity error err: the type and message
// of the application error under it (ErrConflict, or the last attempt's
// error), or the timeout that ended its last attempt.
func failureOf(s Step, err error) Failure {
	fl := Failure{Step: s, Error: err.Error()}
	var ae *temporal.ApplicationError
	var te *temporal.TimeoutError
	switch {
	case errors.As(err, &ae):
		fl.Type, fl.Error = ae.Type(), ae.Message()
	case errors.As(err, &te):
		fl.Type, fl.Error = "timeout", te.Error()
	}
	return fl
}

// Message is why the workflow waits after failure fl, with what a person
// can do.
func (fl Failure) Message() string {
	what := string(fl.Step.Kind)
	if fl.Step.Phase != "" {
		what += " " + string(fl.Step.Phase)
	}
	how := "failed for good after its retries"
	if fl.Type == ErrConflict {
		how = "found the task's ref moved by someone else"
	}
	return fmt.Sprintf("the fleet's step %s %s: %s; a person decides: orch redo, orch next --override REASON or orch revert --reason REASON", what, how, fl.Error)
}

// statusOf is the status query's answer: the last observation's `orch
// status --json` and, while the workflow waits after a failed step, that
// failure's message as its last warning (which orch status prints; the
// failure itself is in the history query). It stays orch status's JSON,
// field for field, as orch's fleet bridge reads it strictly.
func (f *flow) statusOf() (json.RawMessage, error) {
	if f.failed == nil || len(f.obs.Status) == 0 {
		return f.obs.Status, nil
	}
	var v view.Status
	if err := json.Unmarshal(f.obs.Status, &v); err != nil {
		return f.obs.Status, nil
	}
	v.Warnings = append(v.Warnings, f.failed.Message())
	return json.Marshal(v)
}

// runGate carries out a gate's step and answers its Update.
func (f *flow) runGate(ctx workflow.Context, g *gateCall) {
	res, err := f.step(ctx, g.step)
	switch {
	case err != nil:
		g.err = err
	case res.Error != "":
		g.err = refusalOf(res.Error, res.ExitCode, res.Hints)
	default:
		g.res = GateResult{Phase: res.Phase, Revision: res.Revision, Commit: res.Commit}
	}
	g.done = true
}

// step runs one activity on the queue its step belongs to and keeps its
// observation. A step's refusal by orch comes back in StepResult.Error;
// err is what Temporal could not deliver after its retries.
func (f *flow) step(ctx workflow.Context, s Step) (StepResult, error) {
	s.Task, s.Head = f.p.Task, f.obs.Head
	hb, stc := f.p.HeartbeatTimeout, f.p.StartToClose
	if hb <= 0 {
		hb = DefaultHeartbeat
	}
	if stc <= 0 {
		stc = DefaultStartToClose
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           QueueFor(s),
		StartToCloseTimeout: stc,
		HeartbeatTimeout:    hb,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        time.Second,
			BackoffCoefficient:     2,
			MaximumInterval:        30 * time.Second,
			MaximumAttempts:        10,
			NonRetryableErrorTypes: []string{ErrConflict},
		},
	})
	var res StepResult
	f.running = &s
	err := workflow.ExecuteActivity(actx, ActivityName, s).Get(ctx, &res)
	f.running = nil
	if err != nil {
		return res, err
	}
	if res.Head != "" {
		f.obs = res.Observation
	}
	f.history = append(f.history, HistoryEntry{Kind: s.Kind, Phase: s.Phase, Commit: res.Commit, Reused: res.Reused, Worker: res.Worker, Artifacts: res.Artifacts})
	return res, nil
}

// QueueFor is the task queue of step s: the test phase's work on the test
// queue, accept's and revert's (which change the repository's branch) and
// the transitions out of them on the landing queue, everything else on the
// model queue.
func QueueFor(s Step) string {
	switch {
	case s.Kind == StepWork && s.Phase == lifecycle.Test:
		return QueueTest
	case s.Kind == StepAccept, s.Kind == StepRevert:
		return QueueLand
	case s.Kind == StepNext && (s.Phase == lifecycle.Accept || s.Phase == lifecycle.Revert):
		// Leaving accept or revert needs orch's commit (or revert) of
		// the change, which is in the landing clone's branch.
		return QueueLand
	}
	return QueueModel
}

// register installs the queries and the gates' Updates.
func (f *flow) register(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, QueryStatus, f.statusOf); err != nil {
		return err
	}
	if err := workflow.SetQueryHandler(ctx, QueryLog, func() ([]json.RawMessage, error) { return f.obs.Log, nil }); err != nil {
		return err
	}
	if err := workflow.SetQueryHandler(ctx, QueryHistory, func() (FlowView, error) {
		return FlowView{Phase: f.obs.Phase, Revision: f.obs.Revision, Head: f.obs.Head, Waiting: f.waiting, Failed: f.failed, Running: f.running, Steps: f.history}, nil
	}); err != nil {
		return err
	}
	gate := func(ctx workflow.Context, s Step) (GateResult, error) {
		g := &gateCall{step: s}
		f.gates = append(f.gates, g)
		if err := workflow.Await(ctx, func() bool { return g.done }); err != nil {
			return GateResult{}, err
		}
		return g.res, g.err
	}
	checked := func(err error) error {
		if err == nil {
			return nil
		}
		return refusal(err)
	}
	for _, u := range []struct {
		name    string
		handler any
		valid   any
	}{
		{UpdateAnswer,
			func(ctx workflow.Context, r AnswerRequest) (GateResult, error) {
				return gate(ctx, Step{Kind: StepAnswer, Answer: &r})
			},
			func(ctx workflow.Context, r AnswerRequest) error { return checked(ValidateAnswer(f.p.Task, f.obs, r)) }},
		{UpdateAccept,
			func(ctx workflow.Context, r AcceptRequest) (GateResult, error) {
				return gate(ctx, Step{Kind: StepAccept, Accept: &r})
			},
			func(ctx workflow.Context, r AcceptRequest) error { return checked(ValidateAccept(f.p.Task, f.obs, r)) }},
		{UpdateOverride,
			func(ctx workflow.Context, r OverrideRequest) (GateResult, error) {
				return gate(ctx, Step{Kind: StepOverride, Override: &r})
			},
			func(ctx workflow.Context, r OverrideRequest) error {
				return checked(ValidateOverride(f.p.Task, f.obs, r))
			}},
		{UpdateRedo,
			func(ctx workflow.Context, r RedoRequest) (GateResult, error) {
				return gate(ctx, Step{Kind: StepRedo, Redo: &r})
			},
			func(ctx workflow.Context, r RedoRequest) error { return checked(ValidateRedo(f.p.Task, f.obs, r)) }},
		{UpdateRevert,
			func(ctx workflow.Context, reason string) (GateResult, error) {
				return gate(ctx, Step{Kind: StepRevert, Reason: reason})
			},
			func(ctx workflow.Context, reason string) error {
				return checked(ValidateRevert(f.p.Task, f.obs, reason))
			}},
	} {
		if err := workflow.SetUpdateHandlerWithOptions(ctx, u.name, u.handler, workflow.UpdateHandlerOptions{Validator: u.valid}); err != nil {
			return fmt.Errorf("register update %s: %w", u.name, err)
		}
	}
	return nil
}

// FlowView is what the Query "history" returns: where the workflow is,
// why it waits (if it does) and every step so far.
type FlowView struct {
	Phase    lifecycle.Phase `json:"phase"`
	Revision int64           `json:"revision"`
	Head     string          `json:"head"`
	Waiting  string          `json:"waiting,omitempty"`
	Failed   *Failure        `json:"failed,omitempty"`
	Running  *Step           `json:"running,omitempty"`
	Steps    []HistoryEntry  `json:"steps"`
}
