package lifecycle

import (
	"slices"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/artifact"
)

func TestPilot(t *testing.T) {
	q1 := artifact.Question{ID: "q1", Text: "which store?", Blocking: true}
	q2 := artifact.Question{ID: "q2", Text: "which format?", Blocking: true}
	has := func(ids ...string) func(string) bool {
		return func(id string) bool { return slices.Contains(ids, id) }
	}
	for _, tc := range []struct {
		name    string
		in      PilotInput
		action  PilotAction
		stop    PilotStopReason
		msg     string // a part of the message
		answer  []string
		attempt int
	}{
		{name: "until", in: PilotInput{Phase: Test, Until: Test, Movable: true}, action: PilotStop, stop: StopUntil, msg: "reached test"},
		{name: "done", in: PilotInput{Phase: Done}, action: PilotStop, stop: StopDone},
		{name: "until done is done", in: PilotInput{Phase: Done, Until: Done}, action: PilotStop, stop: StopUntil},
		{name: "a condition holds", in: PilotInput{Phase: Review, Movable: true, Worked: 1}, action: PilotNext},
		{name: "invalid artifact", in: PilotInput{Phase: Review, Invalid: []string{"review/code-review.json: $.ok: expected a boolean"}}, action: PilotFail, msg: "invalid artifact: review/code-review.json"},
		{name: "worked and stuck", in: PilotInput{Phase: Test, Worked: 1, Reason: "test/report.json is missing"}, action: PilotStop, stop: StopStuck, msg: "test ran but the task cannot move on: test/report.json is missing"},
		{name: "planning may run again", in: PilotInput{Phase: Planning, Worked: 1, MaxAttempts: 3, PlanRounds: 1}, action: PilotWork, attempt: 2},
		{name: "first plan round", in: PilotInput{Phase: Planning, MaxAttempts: 3}, action: PilotWork, attempt: 1},
		{name: "too many plan rounds", in: PilotInput{Phase: Planning, MaxAttempts: 3, PlanRounds: 5, Reason: "open questions"}, action: PilotStop, stop: StopStuck, msg: "5 planning rounds"},
		{name: "one plan round left", in: PilotInput{Phase: Planning, MaxAttempts: 3, PlanRounds: 4}, action: PilotWork, attempt: 5},
		{name: "questions without answers", in: PilotInput{Phase: Planning, MaxAttempts: 3, Open: []artifact.Question{q1}}, action: PilotStop, stop: StopGate, msg: "q1: which store?"},
		{name: "questions all answered", in: PilotInput{Phase: Planning, MaxAttempts: 3, Open: []artifact.Question{q1, q2}, Answerable: has("q1", "q2")}, action: PilotWork, answer: []string{"q1", "q2"}, attempt: 1},
		{name: "some answered", in: PilotInput{Phase: Planning, MaxAttempts: 3, Open: []artifact.Question{q1, q2}, Answerable: has("q2")}, action: PilotStop, stop: StopGate, msg: "q1: which store?", answer: []string{"q2"}},
		{name: "answers then too many rounds", in: PilotInput{Phase: Planning, MaxAttempts: 1, PlanRounds: 3, Open: []artifact.Question{q1}, Answerable: has("q1")}, action: PilotStop, stop: StopStuck, answer: []string{"q1"}},
		{name: "plan review", in: PilotInput{Phase: PlanReview}, action: PilotWork},
		{name: "codegen", in: PilotInput{Phase: Codegen, MaxAttempts: 3, CodegenRuns: 2}, action: PilotWork, attempt: 3},
		{name: "codegen out of attempts", in: PilotInput{Phase: Codegen, MaxAttempts: 3, CodegenRuns: 3}, action: PilotStop, stop: StopAttempts, msg: "codegen ran 3 times"},
		{name: "review", in: PilotInput{Phase: Review}, action: PilotWork},
		{name: "test", in: PilotInput{Phase: Test}, action: PilotWork},
		{name: "accept is a person's", in: PilotInput{Phase: Accept}, action: PilotStop, stop: StopGate, msg: "`orch accept`"},
		{name: "accept with yes", in: PilotInput{Phase: Accept, Yes: true}, action: PilotWork},
		{name: "revert is a person's", in: PilotInput{Phase: Revert}, action: PilotStop, stop: StopGate, msg: "`orch revert --reason"},
		{name: "revert with yes", in: PilotInput{Phase: Revert, Yes: true}, action: PilotWork},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Pilot(tc.in)
			if got.Action != tc.action || got.Stop != tc.stop || got.Attempt != tc.attempt {
				t.Errorf("Pilot = %+v, want action %s stop %q attempt %d", got, tc.action, tc.stop, tc.attempt)
			}
			if !strings.Contains(got.Message, tc.msg) {
				t.Errorf("message %q lacks %q", got.Message, tc.msg)
			}
			var ids []string
			for _, q := range got.Answer {
				ids = append(ids, q.ID)
			}
			if !slices.Equal(ids, tc.answer) {
				t.Errorf("answers %v, want %v", ids, tc.answer)
			}
		})
	}
}
