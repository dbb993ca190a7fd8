package advisor

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/agent/agenttest"
	"github.com/orchdev/orch/internal/agent/codegen"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/phasetest"
	"github.com/orchdev/orch/internal/task"
)

const cgPassingReport = `{"status":"completed","overall_pass":true,"summary":{"passed":2,"failed":0,"skipped":0,"error":0},
 "suites":[{"id":"go-test","kind":"test","command":"go test -json ./...","exit_code":0,"overall_pass":true,"summary":{"passed":2,"failed":0,"skipped":0,"error":0}}]}`

const cgAdvice = `{"recommendation":"accepted","confidence":"high","summary":"Add now adds; the tests pass.",
 "reasons":["the tests pass (2 passed)","the code review is ok"],"risks":["none found"],"checks":["read calc.go"]}`

// toAccept runs codegen with rt and walks the task to accept with an ok
// review and a passing test report.
func toAccept(f *agenttest.CodeEnv, rt *agent.Runtime) {
	f.T.Helper()
	if _, err := phasetest.Run(context.Background(), f.O, f.ID, codegen.Worker{RT: rt}); err != nil {
		f.T.Fatal(err)
	}
	for _, step := range []struct {
		file, content string
		want          lifecycle.Phase
	}{
		{"", "", lifecycle.Review},
		{"review/code-review.json", `{"ok":true,"issues":[]}`, lifecycle.Test},
		{"test/report.json", cgPassingReport, lifecycle.Accept},
	} {
		if step.file != "" {
			gittest.Write(f.T, f.Task.Dir, step.file, step.content)
		}
		if to := f.Next(); to != step.want {
			f.T.Fatalf("next → %s, want %s", to, step.want)
		}
	}
}

func TestAdviseWritesAdviceAndNeverDecides(t *testing.T) {
	f := agenttest.NewCodeEnv(t, nil)
	rt := f.ScriptRuntime(agenttest.CodegenEntry, agenttest.Entry{Role: "accept_advisor", JSON: cgAdvice},
		agenttest.Entry{Role: "accept_advisor", JSON: `{"recommendation":"changes_requested","target":"codegen","confidence":"low","summary":"s","reasons":["r"]}`})
	toAccept(f, rt)
	before, err := f.Task.ReadState()
	if err != nil {
		t.Fatal(err)
	}
	adv, err := Advise(context.Background(), rt, f.O, f.ID)
	if err != nil {
		t.Fatal(err)
	}
	if adv.Recommendation != "accepted" || adv.Confidence != "high" || !adv.Evidence.Complete || adv.Evidence.Tests != "passed" {
		t.Errorf("advice %+v", adv)
	}
	if !strings.HasPrefix(adv.Command, "orch accept --task fix --verdict accepted --reason 'the tests pass (2 passed)'") {
		t.Errorf("command %q", adv.Command)
	}
	// The plan review was skipped by override in this test: orch says so.
	if len(adv.Cautions) != 2 || !strings.Contains(adv.Cautions[0], "plan review is missing") {
		t.Errorf("cautions %q", adv.Cautions)
	}
	var onDisk map[string]any
	if err := json.Unmarshal([]byte(f.Read(File)), &onDisk); err != nil {
		t.Fatalf("%s: %v", File, err)
	}
	if onDisk["recommendation"] != "accepted" || !strings.Contains(onDisk["advisory"].(string), "orch never decides") {
		t.Errorf("advice.json %v", onDisk)
	}
	md := f.Read(MarkdownFile)
	for _, want := range []string{"Recommendation: **accepted**", "the tests pass (2 passed)", "tests: passed (2 passed", "orch accept --task fix"} {
		if !strings.Contains(md, want) {
			t.Errorf("advice.md lacks %q:\n%s", want, md)
		}
	}
	// No decision: the task is where it was, with the same state.
	after, err := f.Task.ReadState()
	if err != nil {
		t.Fatal(err)
	}
	if after.Phase != "accept" || after.Revision != before.Revision || f.Exists("accept/decision.json") {
		t.Errorf("advise changed the task: %+v", after)
	}
	evs := f.Events()
	last := evs[len(evs)-1]
	if last.Kind != "advice" || last.Data["recommendation"] != "accepted" {
		t.Errorf("last event %+v", last)
	}
	var advisorCalls int
	for _, c := range f.ModelCalls() {
		if c["role"] == "accept_advisor" && c["phase"] == "accept" {
			advisorCalls++
		}
	}
	if advisorCalls != 1 {
		t.Errorf("%d advisor model_call events", advisorCalls)
	}
	// Advising again replaces the advice.
	if adv, err = Advise(context.Background(), rt, f.O, f.ID); err != nil || adv.Target != "codegen" {
		t.Fatalf("second advice %+v, %v", adv, err)
	}
	if !strings.Contains(f.Read(File), `"changes_requested"`) {
		t.Errorf("advice not replaced")
	}
}

func TestAdviseRefusedOutsideAccept(t *testing.T) {
	f := agenttest.NewCodeEnv(t, nil)
	_, err := Advise(context.Background(), f.ScriptRuntime(agenttest.Entry{Role: "accept_advisor", JSON: cgAdvice}), f.O, f.ID)
	if !errors.Is(err, exit.ErrRefused) || !strings.Contains(err.Error(), "is in codegen") {
		t.Fatalf("error %v", err)
	}
	if len(f.ModelCalls()) != 0 || f.Exists(File) {
		t.Errorf("advise outside accept called a model or wrote advice")
	}
}

// TestAdviseDiscardedWhenTheTaskMoves: the advice is not written when the
// task left accept while the advisor worked.
func TestAdviseDiscardedWhenTheTaskMoves(t *testing.T) {
	f := agenttest.NewCodeEnv(t, nil)
	toAccept(f, f.ScriptRuntime(agenttest.CodegenEntry))
	api := agenttest.NewAnthropicAPI(t, func(int, map[string]any) any {
		// The task moves while the model answers (no Fatal: this runs in
		// the server's goroutine).
		reason := "moved meanwhile"
		if _, err := f.O.Next(context.Background(), f.ID, orchestrator.NextRequest{To: lifecycle.Codegen, Override: &reason}); err != nil {
			t.Errorf("move the task: %v", err)
		}
		var v any
		_ = json.Unmarshal([]byte(cgAdvice), &v)
		return v
	})
	_, err := Advise(context.Background(), api.Runtime(f), f.O, f.ID)
	if !errors.Is(err, exit.ErrRefused) || !strings.Contains(err.Error(), "changed while the advisor worked") {
		t.Fatalf("error %v", err)
	}
	if f.Exists(File) || f.Exists(MarkdownFile) {
		t.Errorf("stale advice written")
	}
	f.NoKeyOnDisk()
}

func TestAdviseInvalidAnswers(t *testing.T) {
	f := agenttest.NewCodeEnv(t, nil)
	bad := agenttest.Entry{Role: "accept_advisor", JSON: `{"recommendation":"ship it","confidence":"high","summary":"s","reasons":["r"]}`}
	rt := f.ScriptRuntime(agenttest.CodegenEntry, bad, bad, bad)
	toAccept(f, rt)
	_, err := Advise(context.Background(), rt, f.O, f.ID)
	if err == nil || !strings.Contains(err.Error(), "recommendation: expected") || !strings.Contains(err.Error(), "ship it") {
		t.Fatalf("error %v", err)
	}
	if f.Exists(File) {
		t.Errorf("invalid advice written")
	}
}

func TestCheckAdviceAnswer(t *testing.T) {
	cases := []struct{ name, raw, want string }{
		{"ok", cgAdvice, ""},
		{"changes", `{"recommendation":"changes_requested","target":"planning","confidence":"low","summary":"s","reasons":["r"]}`, ""},
		{"changes without target", `{"recommendation":"changes_requested","confidence":"low","summary":"s","reasons":["r"]}`, "target: changes_requested needs"},
		{"target without changes", `{"recommendation":"rejected","target":"codegen","confidence":"low","summary":"s","reasons":["r"]}`, "target: only with changes_requested"},
		{"revert is not advice", `{"recommendation":"revert","confidence":"low","summary":"s","reasons":["r"]}`, "recommendation: expected"},
		{"bad confidence", `{"recommendation":"accepted","confidence":"total","summary":"s","reasons":["r"]}`, "confidence: expected"},
		{"no reasons", `{"recommendation":"accepted","confidence":"high","summary":"s","reasons":[" "]}`, "at least one non-blank reason"},
		{"no summary", `{"recommendation":"accepted","confidence":"high","summary":"","reasons":["r"]}`, "summary is blank"},
		{"not json object", `"accepted"`, "does not match the schema"},
	}
	for _, tc := range cases {
		agenttest.CheckAnswer(t, tc.name, CheckAnswer, tc.raw, tc.want)
	}
}

func FuzzCheckAdviceAnswer(f *testing.F) {
	f.Add([]byte(cgAdvice))
	f.Add([]byte(`{"recommendation":"changes_requested","target":"x","confidence":"low","summary":"s","reasons":[]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		a, err := CheckAnswer(raw)
		if err != nil {
			return
		}
		if !slices.Contains(adviceVerdicts, a.Recommendation) || (a.Recommendation == "changes_requested") != (a.Target != "") {
			t.Fatalf("accepted %+v", a)
		}
		if cmd := acceptCommand("t", a); strings.Count(cmd, "'")%2 != 0 && !strings.Contains(cmd, `'\''`) {
			t.Fatalf("unbalanced quoting in %q", cmd)
		}
	})
}

// TestAdviseRespectsBudgets: the advisor's calls count against the task's
// budget and are refused before they are made once it is spent.
func TestAdviseRespectsBudgets(t *testing.T) {
	f := agenttest.NewCodeEnv(t, nil)
	rt := f.ScriptRuntime(agenttest.CodegenEntry, agenttest.Entry{Role: "accept_advisor", JSON: cgAdvice})
	toAccept(f, rt)
	sum := agent.SumCosts(task.ModelCalls(f.Events()))
	rt.Config.Budgets.Calls = sum.Total.Calls // every call allowed is spent
	_, err := Advise(context.Background(), rt, f.O, f.ID)
	var be *agent.BudgetError
	if !errors.As(err, &be) || be.Limit != "calls" {
		t.Fatalf("err = %v, want a calls budget error", err)
	}
	if f.Exists(File) {
		t.Error("advice written without a model call")
	}
	after := agent.SumCosts(task.ModelCalls(f.Events()))
	if after.Total.Calls != sum.Total.Calls {
		t.Errorf("a model call was made: %d calls before, %d after", sum.Total.Calls, after.Total.Calls)
	}
}
