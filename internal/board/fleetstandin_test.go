package board

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/orchdev/orch/internal/agent/planner"
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/fleetlink"
	"github.com/orchdev/orch/internal/landing"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/nextstep"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/task"
	"github.com/orchdev/orch/internal/view"
	"github.com/orchdev/orch/internal/worker"
)

// The board's tests reach "the fleet" through the real link
// (internal/fleetlink: a process, its arguments, its JSON on stdout, its
// failure as one JSON line on stderr with its exit code). The process is
// this test binary run as orch-fleet: with standinRoot set, TestMain runs
// fleetStandin instead of the tests. It speaks orch-fleet's --json
// commands over the tasks of another repository (the fleet's state, as
// the workflows of a real fleet hold it), and does what a fleet's gate
// does with orch's own code: the checks its Update validators run
// (fleet/gates.go: planner.CheckAnswer, nextstep.WrongPhase,
// landing.CheckDecision, orchestrator.CheckOverride and RedoTarget,
// landing.CheckRevertReason), then the step its worker runs
// (fleet/activity.go). Temporal is what it leaves out: that is the
// fleet's own end-to-end test's business (docs/fleet.md).
const (
	// standinRoot names the repository holding the fleet's tasks.
	standinRoot = "ORCH_BOARD_FLEET_ROOT"
	// standinAddr is the Temporal address the stand-in answers on: any
	// other --temporal is a service it cannot reach.
	standinAddr = "ORCH_BOARD_FLEET_ADDR"
)

// FleetStandinRoot and FleetStandinAddr are standinRoot and standinAddr
// for the browser tests (package board_test), which start `orch serve`
// with [fleet] binary naming this test binary.
const (
	FleetStandinRoot = standinRoot
	FleetStandinAddr = standinAddr
)

// multi is a repeatable string flag.
type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

// fleetStandin runs one orch-fleet --json command and returns its exit
// code.
func fleetStandin(args []string, stdout, stderr io.Writer) int {
	err := standin(args, stdout)
	if err == nil {
		return 0
	}
	b, _ := json.Marshal(fleetlink.FailureOf(err))
	fmt.Fprintf(stderr, "%s\n", b)
	return int(exit.Of(err))
}

func standin(args []string, stdout io.Writer) error {
	g := flag.NewFlagSet("orch-fleet", flag.ContinueOnError)
	g.SetOutput(io.Discard)
	asJSON := g.Bool("json", false, "")
	addr := g.String("temporal", "", "")
	g.String("namespace", "", "")
	g.String("remote", "", "")
	if err := g.Parse(args); err != nil {
		return exit.New(exit.ErrUsage, "%v", err)
	}
	if !*asJSON {
		return exit.New(exit.ErrUsage, "the stand-in speaks --json only")
	}
	if *addr != os.Getenv(standinAddr) {
		return fmt.Errorf("cannot reach the fleet's Temporal service at %s (namespace default): connection refused", *addr)
	}
	p, err := task.FindProject(os.Getenv(standinRoot))
	if err != nil {
		return err
	}
	o := orchestrator.New(p)
	rest := g.Args()
	if len(rest) == 0 {
		return exit.New(exit.ErrUsage, "no command")
	}
	cmd := flag.NewFlagSet(rest[0], flag.ContinueOnError)
	cmd.SetOutput(io.Discard)
	id := cmd.String("task", "", "")
	verdict := cmd.String("verdict", "", "")
	to := cmd.String("to", "", "")
	var reasons multi
	cmd.Var(&reasons, "reason", "")
	decider := cmd.String("decider", "", "")
	allow := cmd.Bool("allow-incomplete", false, "")
	expect := cmd.Int64("expect", 0, "")
	override := cmd.String("override", "", "")
	if err := cmd.Parse(rest[1:]); err != nil {
		return exit.New(exit.ErrUsage, "%v", err)
	}
	words := cmd.Args()
	enc := json.NewEncoder(stdout)
	ctx := context.Background()
	if rest[0] == "list" {
		return enc.Encode(standinList(o))
	}
	// A task the fleet does not have is what Temporal answers for a
	// workflow that does not exist.
	if _, err := p.Open(*id); err != nil {
		return fmt.Errorf("query task %s in the fleet: workflow not found for ID: orch-task-%s", *id, *id)
	}
	sj, step, err := view.StatusOf(o, *id)
	if err != nil {
		return err
	}
	switch rest[0] {
	case "status":
		return enc.Encode(sj)
	case "log":
		t, _ := p.Open(*id)
		evs, err := t.Transcript()
		if err != nil {
			return err
		}
		for _, ev := range evs {
			if err := enc.Encode(ev); err != nil {
				return err
			}
		}
		return nil
	}
	// A gate: the validator on the task as it is, then the step.
	reason := ""
	if len(reasons) > 0 {
		reason = reasons[0]
	}
	wrongPhase := func(ph lifecycle.Phase) error {
		return nextstep.WrongPhase(sj.StatusView, ph, func(a string) string { return "orch " + a }, nextstep.StepLine(step))
	}
	switch rest[0] {
	case "answer":
		if len(words) != 2 {
			return exit.New(exit.ErrUsage, "answer takes ID TEXT")
		}
		t, _ := p.Open(*id)
		if err := planner.CheckAnswer(*id, sj.Phase, artifact.LoadPlan(t.Dir), words[0], words[1]); err != nil {
			return err
		}
		_, err = planner.AnswerQuestion(ctx, o, *id, words[0], words[1])
	case "accept":
		if *verdict == "" {
			return exit.New(exit.ErrUsage, "accept needs --verdict (accepted, changes_requested, rejected or revert) and --reason when not run in a terminal")
		}
		if err := wrongPhase(lifecycle.Accept); err != nil {
			return err
		}
		if *decider == "" {
			*decider = "fleet"
		}
		opt := landing.AcceptOptions{Verdict: *verdict, Target: *to, Reasons: reasons, AllowIncomplete: *allow,
			Decider: artifact.Decider{Kind: "human", Name: *decider}, Expect: landing.Expectation{Revision: *expect}}
		if err := landing.CheckDecision(opt); err != nil {
			return exit.New(exit.ErrUsage, "%v", err)
		}
		if err = standinWork(ctx, o, lifecycle.Accept, worker.Run{Task: *id, Accept: &opt}); err == nil {
			// The workflow's next step: the transition the decision
			// makes hold.
			_, err = o.Next(ctx, *id, orchestrator.NextRequest{From: lifecycle.Accept})
		}
	case "next":
		ph := lifecycle.Phase(*to)
		if *to != "" {
			if _, err := lifecycle.ParsePhase(*to); err != nil {
				return exit.New(exit.ErrUsage, "--to: %v", err)
			}
		}
		if err := orchestrator.CheckOverride(lifecycle.Lifecycle(), *id, sj.Phase, ph, *override); err != nil {
			return err
		}
		_, err = o.Next(ctx, *id, orchestrator.NextRequest{Override: override, To: ph})
	case "redo":
		var ph lifecycle.Phase
		if len(words) == 1 {
			if ph, err = lifecycle.ParsePhase(words[0]); err != nil {
				return exit.New(exit.ErrUsage, "redo: %v", err)
			}
		}
		if _, err := orchestrator.RedoTarget(sj.Phase, ph); err != nil {
			return err
		}
		_, err = o.Redo(ctx, *id, ph, reason)
	case "revert":
		if err := wrongPhase(lifecycle.Revert); err != nil {
			return err
		}
		if err := landing.CheckRevertReason(reason); err != nil {
			return err
		}
		err = standinWork(ctx, o, lifecycle.Revert, worker.Run{Task: *id, Reason: reason})
	default:
		return exit.New(exit.ErrUsage, "unknown command %q", rest[0])
	}
	if err != nil {
		return err
	}
	v, err := o.Status(*id)
	if err != nil {
		return err
	}
	return enc.Encode(fleetlink.GateResult{Task: *id, Phase: v.Phase, Revision: v.Revision})
}

// standinList is `orch-fleet list --json`: the tasks whose workflow runs
// (every task not done) by phase, each with what its workflow waits for
// as lifecycle.Pilot says it (the fleet's workflow decides with it).
func standinList(o *orchestrator.Orchestrator) fleetlink.Listing {
	l := fleetlink.Listing{Phases: map[lifecycle.Phase][]fleetlink.TaskLine{}, Workers: map[string][]string{"orch-model": {"stand-in"}, "orch-test": {"stand-in"}, "orch-land": {"stand-in"}}}
	list, _ := o.Project.List()
	for _, sum := range list {
		v, err := o.Status(sum.ID)
		if err != nil || v.Phase == lifecycle.Done {
			continue
		}
		in := lifecycle.PilotInput{Phase: v.Phase, Movable: v.Suggested != nil, Reason: v.Reason, Invalid: v.Invalid, MaxAttempts: 3}
		if t, err := o.Project.Open(sum.ID); err == nil && v.Phase == lifecycle.Planning {
			if plan := artifact.LoadPlan(t.Dir); plan.OK() {
				in.Open = plan.Value.OpenQuestions()
			}
		}
		tl := fleetlink.TaskLine{Task: sum.ID, Revision: v.Revision}
		if s := lifecycle.Pilot(in); s.Action == lifecycle.PilotStop && s.Stop == lifecycle.StopGate {
			tl.Waiting = s.Message
		}
		l.Phases[v.Phase] = append(l.Phases[v.Phase], tl)
	}
	return l
}

// standinWork runs phase p's worker as a fleet step does.
func standinWork(ctx context.Context, o *orchestrator.Orchestrator, p lifecycle.Phase, run worker.Run) error {
	cfg, err := config.Load(o.Project.Dir)
	if err != nil {
		return err
	}
	w, ok := worker.Registry(worker.Deps{Orch: o, Config: cfg}).For(p)
	if !ok {
		return errors.New("no worker for " + string(p))
	}
	_, err = w.Work(ctx, run)
	return err
}
