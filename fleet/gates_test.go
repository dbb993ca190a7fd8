package fleet

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/agent/planner"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/landing"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/nextstep"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/phasetest"
	"github.com/orchdev/orch/internal/view"
)

func TestMain(m *testing.M) {
	// The sample's test runs and the end-to-end test's builds (orch,
	// orch-fleet, Temporal's development server) keep the user's Go build
	// and module caches: gittest.Main gives the test a home of its own,
	// and caches under it would download every module again and, at new
	// paths, compile everything again.
	for _, v := range []string{"GOCACHE", "GOMODCACHE"} {
		if os.Getenv(v) == "" {
			if out, err := exec.Command("go", "env", v).Output(); err == nil {
				os.Setenv(v, strings.TrimSpace(string(out)))
			}
		}
	}
	os.Exit(gittest.Main(m))
}

// questionPlan is a plan with one open blocking question.
const questionPlan = `{"id":"t","title":"Add a readme","brief":"b","file_plan":[{"path":"notes/readme.txt","intent":"create"}],"questions":[{"id":"q1","text":"bytes or runes?","blocking":true}]}`

// TestGateValidators runs each gate's Update validator on the workflow's
// observation of a real task (computed by the worker's own code and sent
// through JSON, as Temporal carries it) and the local command's check on
// the same task, and wants the same refusal: message and exit code (or
// both accept).
func TestGateValidators(t *testing.T) {
	ctx := context.Background()
	s := func(v string) *string { return &v }
	cases := []struct {
		name  string
		phase lifecycle.Phase
		plan  string // planning.ai.json, when not the fixture's
		valid func(Observation) error
		local func(f phasetest.Fixture) error
		want  exit.Code
	}{
		{"answer blank", lifecycle.Planning, questionPlan,
			func(o Observation) error { return ValidateAnswer("t", o, AnswerRequest{Question: "q1", Text: "  "}) },
			func(f phasetest.Fixture) error {
				_, err := planner.AnswerQuestion(ctx, f.O, "t", "q1", "  ")
				return err
			}, exit.Usage},
		{"answer outside planning", lifecycle.Codegen, "",
			func(o Observation) error { return ValidateAnswer("t", o, AnswerRequest{Question: "q1", Text: "runes"}) },
			func(f phasetest.Fixture) error {
				_, err := planner.AnswerQuestion(ctx, f.O, "t", "q1", "runes")
				return err
			}, exit.Refused},
		{"answer unknown question", lifecycle.Planning, questionPlan,
			func(o Observation) error { return ValidateAnswer("t", o, AnswerRequest{Question: "q9", Text: "runes"}) },
			func(f phasetest.Fixture) error {
				_, err := planner.AnswerQuestion(ctx, f.O, "t", "q9", "runes")
				return err
			}, exit.Usage},
		{"answer invalid plan", lifecycle.Planning, `{"id":"t"`,
			func(o Observation) error { return ValidateAnswer("t", o, AnswerRequest{Question: "q1", Text: "runes"}) },
			func(f phasetest.Fixture) error {
				_, err := planner.AnswerQuestion(ctx, f.O, "t", "q1", "runes")
				return err
			}, exit.Invalid},
		{"answer taken", lifecycle.Planning, questionPlan,
			func(o Observation) error { return ValidateAnswer("t", o, AnswerRequest{Question: "q1", Text: "runes"}) },
			func(f phasetest.Fixture) error {
				_, err := planner.AnswerQuestion(ctx, f.O, "t", "q1", "runes")
				return err
			}, exit.OK},
		{"accept in codegen", lifecycle.Codegen, "",
			func(o Observation) error {
				return ValidateAccept("t", o, AcceptRequest{Verdict: "accepted", Reasons: []string{"ok"}})
			},
			func(f phasetest.Fixture) error {
				return localAccept(t, f, landing.AcceptOptions{Verdict: "accepted", Reasons: []string{"ok"}})
			}, exit.Refused},
		{"accept blank reason", lifecycle.Accept, "",
			func(o Observation) error {
				return ValidateAccept("t", o, AcceptRequest{Verdict: "accepted", Reasons: []string{" "}})
			},
			func(f phasetest.Fixture) error {
				return localAccept(t, f, landing.AcceptOptions{Verdict: "accepted", Reasons: []string{" "}})
			}, exit.Usage},
		{"accept changes without target", lifecycle.Accept, "",
			func(o Observation) error {
				return ValidateAccept("t", o, AcceptRequest{Verdict: "changes_requested", Reasons: []string{"redo"}})
			},
			func(f phasetest.Fixture) error {
				return localAccept(t, f, landing.AcceptOptions{Verdict: "changes_requested", Reasons: []string{"redo"}})
			}, exit.Usage},
		{"accept bad verdict", lifecycle.Accept, "",
			func(o Observation) error {
				return ValidateAccept("t", o, AcceptRequest{Verdict: "yes", Reasons: []string{"ok"}})
			},
			func(f phasetest.Fixture) error {
				return localAccept(t, f, landing.AcceptOptions{Verdict: "yes", Reasons: []string{"ok"}})
			}, exit.Usage},
		{"accept taken", lifecycle.Accept, "",
			func(o Observation) error {
				return ValidateAccept("t", o, AcceptRequest{Verdict: "rejected", Reasons: []string{"no"}})
			},
			func(f phasetest.Fixture) error {
				return localAccept(t, f, landing.AcceptOptions{Verdict: "rejected", Reasons: []string{"no"}})
			}, exit.OK},
		{"override blank reason", lifecycle.Codegen, "",
			func(o Observation) error { return ValidateOverride("t", o, OverrideRequest{Reason: " "}) },
			func(f phasetest.Fixture) error {
				_, err := f.O.Next(ctx, "t", orchestrator.NextRequest{Override: s(" ")})
				return err
			}, exit.Usage},
		{"override to the same phase", lifecycle.Codegen, "",
			func(o Observation) error {
				return ValidateOverride("t", o, OverrideRequest{Reason: "r", To: lifecycle.Codegen})
			},
			func(f phasetest.Fixture) error {
				_, err := f.O.Next(ctx, "t", orchestrator.NextRequest{Override: s("r"), To: lifecycle.Codegen})
				return err
			}, exit.Refused},
		{"override out of revert", lifecycle.Revert, "",
			func(o Observation) error { return ValidateOverride("t", o, OverrideRequest{Reason: "r"}) },
			func(f phasetest.Fixture) error {
				_, err := f.O.Next(ctx, "t", orchestrator.NextRequest{Override: s("r")})
				return err
			}, exit.Refused},
		{"override taken", lifecycle.Codegen, "",
			func(o Observation) error {
				return ValidateOverride("t", o, OverrideRequest{Reason: "reviewed by hand", To: lifecycle.Test})
			},
			func(f phasetest.Fixture) error {
				_, err := f.O.Next(ctx, "t", orchestrator.NextRequest{Override: s("reviewed by hand"), To: lifecycle.Test})
				return err
			}, exit.OK},
		{"redo a later phase", lifecycle.Codegen, "",
			func(o Observation) error { return ValidateRedo("t", o, RedoRequest{Phase: lifecycle.Test}) },
			func(f phasetest.Fixture) error { _, err := f.O.Redo(ctx, "t", lifecycle.Test, ""); return err }, exit.Refused},
		{"redo done", lifecycle.Codegen, "",
			func(o Observation) error { return ValidateRedo("t", o, RedoRequest{Phase: lifecycle.Done}) },
			func(f phasetest.Fixture) error { _, err := f.O.Redo(ctx, "t", lifecycle.Done, ""); return err }, exit.Usage},
		{"redo taken", lifecycle.Review, "",
			func(o Observation) error {
				return ValidateRedo("t", o, RedoRequest{Phase: lifecycle.Codegen, Reason: "again"})
			},
			func(f phasetest.Fixture) error { _, err := f.O.Redo(ctx, "t", lifecycle.Codegen, "again"); return err }, exit.OK},
		{"revert blank reason", lifecycle.Revert, "",
			func(o Observation) error { return ValidateRevert("t", o, " ") },
			func(f phasetest.Fixture) error { return landing.CheckRevertReason(" ") }, exit.Usage},
		{"revert in codegen", lifecycle.Codegen, "",
			func(o Observation) error { return ValidateRevert("t", o, "broke it") },
			func(f phasetest.Fixture) error { return localWrongPhase(t, f, lifecycle.Revert) }, exit.Refused},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := fixture(t, c.phase)
			if c.plan != "" {
				gittest.Write(t, f.Task.Dir, "planning/planning.ai.json", c.plan)
			}
			steps := &Steps{Root: f.Dir}
			obs, err := steps.observe("t", "")
			if err != nil {
				t.Fatal(err)
			}
			// As the workflow holds it: through JSON.
			data, err := json.Marshal(obs)
			if err != nil {
				t.Fatal(err)
			}
			var held Observation
			if err := json.Unmarshal(data, &held); err != nil {
				t.Fatal(err)
			}
			verr := c.valid(held)
			lerr := c.local(f)
			if exit.Of(verr) != c.want || exit.Of(lerr) != c.want {
				t.Fatalf("exit codes: validator %d (%v), local %d (%v); want %d", exit.Of(verr), verr, exit.Of(lerr), lerr, c.want)
			}
			if verr != nil && exit.Format(verr) != exit.Format(lerr) {
				t.Fatalf("messages differ:\nvalidator: %s\nlocal:     %s", exit.Format(verr), exit.Format(lerr))
			}
			// Through Temporal the refusal keeps its message, hints and
			// exit code.
			if verr != nil {
				back := FromTemporal(refusal(verr))
				if exit.Format(back) != exit.Format(verr) || exit.Of(back) != c.want {
					t.Fatalf("through Temporal: %q (%d), want %q (%d)", exit.Format(back), exit.Of(back), exit.Format(verr), c.want)
				}
			}
		})
	}
}

// localAccept is orch accept's checks before its work: the phase, then
// the decision's shape (internal/cli accept.go).
func localAccept(t *testing.T, f phasetest.Fixture, opt landing.AcceptOptions) error {
	if err := localWrongPhase(t, f, lifecycle.Accept); err != nil {
		return err
	}
	if err := landing.CheckDecision(opt); err != nil {
		return exit.New(exit.ErrUsage, "%v", err)
	}
	return nil
}

func localWrongPhase(t *testing.T, f phasetest.Fixture, p lifecycle.Phase) error {
	sj, s, err := view.StatusOf(f.O, "t")
	if err != nil {
		t.Fatal(err)
	}
	return nextstep.WrongPhase(sj.StatusView, p, func(a string) string { return "orch " + a }, nextstep.StepLine(s))
}

// fixture is phasetest's task in phase p (planning: sent back there by a
// redo, since the fixture moves its task by an override).
func fixture(t *testing.T, p lifecycle.Phase) phasetest.Fixture {
	if p != lifecycle.Planning {
		return phasetest.New(t, p)
	}
	f := phasetest.New(t, lifecycle.PlanReview)
	if _, err := f.O.Redo(context.Background(), "t", lifecycle.Planning, "back to planning"); err != nil {
		t.Fatal(err)
	}
	return f
}
