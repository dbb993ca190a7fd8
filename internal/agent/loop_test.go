package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/agent/agenttest"
	"github.com/orchdev/orch/internal/agent/codegen"
	"github.com/orchdev/orch/internal/agent/review"
	"github.com/orchdev/orch/internal/agent/tools"
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/llm"
	"github.com/orchdev/orch/internal/phasetest"
	"github.com/orchdev/orch/internal/testphase"
	"github.com/orchdev/orch/internal/work"
)

// toolRuntime is a runtime of f whose every role is served by m.
func toolRuntime(f *agenttest.CodeEnv, m *agenttest.ToolModel, edit func(*config.Config)) *agent.Runtime {
	rt := f.Runtime(config.Provider{Type: "command", Command: config.Command{"false"}})
	if edit != nil {
		edit(&rt.Config)
	}
	return m.Use(rt)
}

// TestCodegenToolLoop drives codegen through every tool: the model reads,
// searches, edits, is refused outside the file plan and for a bad edit or
// delete, sees its edits, and finishes; orch stages the edited files and
// computes the patch; a re-run with the same inputs is answered turn by
// turn from the cache.
func TestCodegenToolLoop(t *testing.T) {
	f := agenttest.NewCodeEnv(t, map[string]string{"docs/use.md": "Call Add(2, 3).\n"})
	gittest.Write(t, f.Root, ".env", "TOKEN=untracked-secret\n")
	m := &agenttest.ToolModel{T: t}
	m.Turn = agenttest.Scripted(
		agenttest.Calls(agenttest.ToolCall(t, tools.Search, map[string]any{"pattern": `func Add\(`})),
		agenttest.Calls(agenttest.ToolCall(t, tools.ReadFile, map[string]any{"path": "./calc.go"}), agenttest.ToolCall(t, tools.ReadFile, map[string]any{"path": ".env"})),
		agenttest.Calls(agenttest.ToolCall(t, tools.EditFile, map[string]any{"path": "calc.go", "old_string": "a - b", "new_string": "a + b"})),
		agenttest.Calls(agenttest.ToolCall(t, tools.WriteFile, map[string]any{"path": "calc_test.go", "content": agenttest.CalcTest})),
		agenttest.Calls(agenttest.ToolCall(t, tools.WriteFile, map[string]any{"path": "other.go", "content": "package calc\n"}),
			agenttest.ToolCall(t, tools.WriteFile, map[string]any{"path": "../x", "content": "x"}),
			agenttest.ToolCall(t, tools.WriteFile, map[string]any{"path": ".git/hooks/pre-commit", "content": "x"})),
		agenttest.Calls(agenttest.ToolCall(t, tools.EditFile, map[string]any{"path": "calc.go", "old_string": "a * b", "new_string": "x"}),
			agenttest.ToolCall(t, tools.DeleteFile, map[string]any{"path": "calc.go"})),
		agenttest.Calls(agenttest.ToolCall(t, tools.ListFiles, map[string]any{"pattern": "*.go"}), agenttest.ToolCall(t, tools.ReadFile, map[string]any{"path": "calc.go", "offset": 4, "limit": 1})),
		agenttest.Calls(agenttest.ToolCall(t, tools.Finish, map[string]any{"status": "completed", "notes": "fixed the operator"})),
	)
	rt := toolRuntime(f, m, nil)
	ctx := context.Background()
	res, err := phasetest.Run(ctx, f.O, f.ID, codegen.Worker{RT: rt, Tests: testphase.Runner{Config: rt.Config}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(res.Record.Files, ","); got != "calc.go,calc_test.go" || res.Record.Status != "completed" || res.Record.Notes != "fixed the operator" {
		t.Errorf("record %+v", res.Record)
	}
	if f.Read("code/files/calc.go") != agenttest.CalcFixed || f.Read("code/files/calc_test.go") != agenttest.CalcTest {
		t.Errorf("code/files: %q", f.Read("code/files/calc.go"))
	}
	if !strings.Contains(f.Read("code/diff.patch"), "+func Add(a, b int) int { return a + b }") {
		t.Errorf("diff.patch:\n%s", f.Read("code/diff.patch"))
	}
	if got, _ := os.ReadFile(filepath.Join(f.Root, "calc.go")); string(got) != agenttest.Calc {
		t.Errorf("the working tree changed: %q", got)
	}
	if f.Exists("code/.scratch") || f.Exists(".scratch") {
		t.Error("the scratch folder was committed with the artifacts")
	}

	reqs := m.Requests()
	if len(reqs) != 8 {
		t.Fatalf("%d turns, want 8", len(reqs))
	}
	first := reqs[0]
	var names []string
	for _, tl := range first.Tools {
		names = append(names, tl.Name)
	}
	if got := strings.Join(names, ","); got != "list_files,read_file,search,edit_file,write_file,delete_file,run_tests,finish" {
		t.Errorf("tools offered: %s", got)
	}
	// The stable prefix's breakpoint, and the moving one on the newest
	// message.
	if first.CacheKey == "" || len(first.Messages) != 3 || !first.Messages[1].CacheBreakpoint || !first.Messages[2].CacheBreakpoint {
		t.Errorf("layout: cache key %q, messages %d", first.CacheKey, len(first.Messages))
	}
	if strings.Contains(first.Messages[1].Content, "return a - b") || strings.Contains(first.Messages[1].Content, "Arithmetic helpers") {
		t.Error("with tools, files are read with read_file, not sent up front")
	}
	if !strings.Contains(first.Messages[1].Content, "Repository map") || !strings.Contains(first.Messages[1].Content, "Add: calc.go:3,4") {
		t.Errorf("the first message lacks the ranked repository map:\n%s", first.Messages[1].Content)
	}
	results := agenttest.ToolResults(reqs[7])
	want := []struct {
		has   string
		isErr bool
	}{
		{"calc.go:4:func Add(a, b int) int { return a - b }", false},
		// The read of calc.go before it was edited: stale, so replaced
		// by a note in the conversation re-sent after the edit.
		{"This read_file result was removed: you changed calc.go afterwards", false},
		{`".env" is not a tracked file of the repository`, true},
		{"ok: calc.go edited (1 replacement)", false},
		{"ok: calc_test.go written", false},
		{"other.go is outside the reviewed file plan; you may change only: calc.go (update), calc_test.go (create)", true},
		{`unsafe path "../x"`, true},
		{`unsafe path ".git/hooks/pre-commit"`, true},
		{"old_string was not found in calc.go", true},
		{"calc.go is planned with intent update, not delete", true},
		{"calc.go\ncalc_test.go\n", false},
		{"     4\tfunc Add(a, b int) int { return a + b }", false},
	}
	if len(results) != len(want) {
		t.Fatalf("%d tool results, want %d", len(results), len(want))
	}
	// Before the edit, the model saw the lines it read.
	if r := agenttest.ToolResults(reqs[2]); len(r) < 2 || !strings.Contains(r[1].Content, "     4\tfunc Add(a, b int) int { return a - b }") {
		t.Errorf("the read before the edit: %+v", r)
	}
	for i, w := range want {
		if !strings.Contains(results[i].Content, w.has) || results[i].IsError != w.isErr {
			t.Errorf("result %d: %q (error %v), want %q (error %v)", i, results[i].Content, results[i].IsError, w.has, w.isErr)
		}
		if results[i].ToolCallID == "" {
			t.Errorf("result %d answers no call", i)
		}
	}
	for _, r := range reqs {
		for _, msg := range r.Messages {
			if strings.Contains(msg.Content, "untracked-secret") {
				t.Fatal("the untracked .env reached the model")
			}
		}
	}
	mc := f.ModelCalls()
	if len(mc) != 8 || fmt.Sprint(mc[0]["turn"]) != "1" || fmt.Sprint(mc[7]["turn"]) != "8" {
		t.Fatalf("model_call events: %v", mc)
	}
	if tc, _ := mc[4]["tool_calls"].([]any); len(tc) != 3 {
		t.Errorf("turn 5's event lists %v", mc[4]["tool_calls"])
	}

	// The same inputs again: every turn answered from the cache.
	rt = toolRuntime(f, m, nil)
	if _, err := phasetest.Run(ctx, f.O, f.ID, codegen.Worker{RT: rt, Tests: testphase.Runner{Config: rt.Config}}); err != nil {
		t.Fatal(err)
	}
	if n := len(m.Requests()); n != 8 {
		t.Errorf("the re-run sent %d new requests, want 0", n-8)
	}
	if to := f.Next(); to != lifecycle.Review {
		t.Errorf("orch next → %s", to)
	}
}

// TestCodegenRunTests: run_tests runs the configured suite on the edits so
// far (failing before the edit, passing after), and is refused past
// [tools] max_test_runs.
func TestCodegenRunTests(t *testing.T) {
	f := agenttest.NewCodeEnv(t, nil)
	m := &agenttest.ToolModel{T: t}
	m.Turn = agenttest.Scripted(
		agenttest.Calls(agenttest.ToolCall(t, tools.RunTests, nil)),
		agenttest.Calls(agenttest.ToolCall(t, tools.EditFile, map[string]any{"path": "calc.go", "old_string": "a - b", "new_string": "a + b"})),
		agenttest.Calls(agenttest.ToolCall(t, tools.RunTests, map[string]any{})),
		agenttest.Calls(agenttest.ToolCall(t, tools.RunTests, map[string]any{})),
		agenttest.Calls(agenttest.ToolCall(t, tools.Finish, map[string]any{"status": "completed"})),
	)
	rt := toolRuntime(f, m, func(c *config.Config) {
		c.Tools.MaxTestRuns = 2
		c.Test.Sandbox = "none"
		c.Test.Suites = []config.Suite{{Name: "plus", Kind: "test", Command: config.Command{"sh", "-c", "grep -q 'a + b' calc.go || { echo 'Add still subtracts'; exit 1; }"}}}
	})
	tests := testphase.Runner{Config: rt.Config, OwnWorktrees: codegen.RunTestsDir}
	if _, err := phasetest.Run(context.Background(), f.O, f.ID, codegen.Worker{RT: rt, Tests: tests}); err != nil {
		t.Fatal(err)
	}
	res := agenttest.ToolResults(m.Requests()[4])
	if len(res) != 4 {
		t.Fatalf("%d results", len(res))
	}
	if !strings.Contains(res[0].Content, "FAIL: 0 passed, 1 failed") || !strings.Contains(res[0].Content, "Add still subtracts") {
		t.Errorf("first run: %q", res[0].Content)
	}
	if !strings.HasPrefix(res[2].Content, "PASS: 1 passed, 0 failed") {
		t.Errorf("second run: %q", res[2].Content)
	}
	if !res[3].IsError || !strings.Contains(res[3].Content, "already used 2 times") {
		t.Errorf("third run: %q", res[3].Content)
	}
	if _, err := os.Stat(filepath.Join(f.Task.Dir, "test")); err == nil {
		t.Error("run_tests wrote test/ into the task")
	}
}

// TestLoopTruncatedTurn: a turn cut off by the output limit that used all
// of it ends the run with a TruncatedError; nothing is re-sent (no
// output budget is left to continue it), and the event says so.
func TestLoopTruncatedTurn(t *testing.T) {
	for _, noTools := range []bool{false, true} {
		f := agenttest.NewCodeEnv(t, nil)
		m := &agenttest.ToolModel{T: t, NoTools: noTools}
		m.Turn = agenttest.Scripted(llm.Response{Text: `{"status":"completed","files":[{"path":"calc.go","content":"package ca`, StopReason: "length", Usage: llm.Usage{InputTokens: 2000, OutputTokens: 16000}})
		_, err := phasetest.Run(context.Background(), f.O, f.ID, codegen.Worker{RT: toolRuntime(f, m, nil)})
		var te *llm.TruncatedError
		if !errors.As(err, &te) || !strings.Contains(err.Error(), "cut off at its output limit of 16000 tokens") || !strings.Contains(err.Error(), "max_output_tokens.codegen") {
			t.Fatalf("tools %v: error %v", !noTools, err)
		}
		if n := len(m.Requests()); n != 1 {
			t.Errorf("tools %v: %d requests, want 1 (a cut answer is not re-sent)", !noTools, n)
		}
		if mc := f.ModelCalls(); len(mc) != 1 || mc[0]["truncated"] != true {
			t.Errorf("tools %v: events %v", !noTools, mc)
		}
	}
}

// TestLoopTurnLimit: a model that never finishes is stopped after
// [tools] max_turns turns.
func TestLoopTurnLimit(t *testing.T) {
	f := agenttest.NewCodeEnv(t, nil)
	m := &agenttest.ToolModel{T: t}
	m.Turn = agenttest.Scripted(agenttest.Calls(agenttest.ToolCall(t, tools.ListFiles, map[string]any{})))
	_, err := phasetest.Run(context.Background(), f.O, f.ID, codegen.Worker{RT: toolRuntime(f, m, func(c *config.Config) { c.Tools.MaxTurns = 3 })})
	var tl *agent.TurnLimitError
	if !errors.As(err, &tl) || tl.Turns != 3 {
		t.Fatalf("error %v", err)
	}
	reqs := m.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d turns", len(reqs))
	}
	if last := agenttest.ToolResults(reqs[2]); !strings.Contains(last[len(last)-1].Content, "1 model turn(s) left") {
		t.Errorf("the model was not warned: %q", last[len(last)-1].Content)
	}
}

// TestLoopBudgetPerTurn: every turn is reserved against the budgets before
// it is sent; the turn that would cross a limit is refused and recorded.
func TestLoopBudgetPerTurn(t *testing.T) {
	f := agenttest.NewCodeEnv(t, nil)
	m := &agenttest.ToolModel{T: t}
	m.Turn = agenttest.Scripted(agenttest.Calls(agenttest.ToolCall(t, tools.ListFiles, map[string]any{})))
	rt := toolRuntime(f, m, func(c *config.Config) {
		c.Budgets.Phase = map[string]config.Budget{"codegen": {Calls: 2}}
	})
	_, err := phasetest.Run(context.Background(), f.O, f.ID, codegen.Worker{RT: rt})
	var be *agent.BudgetError
	if !errors.As(err, &be) || be.Limit != "calls" {
		t.Fatalf("error %v", err)
	}
	if n := len(m.Requests()); n != 2 {
		t.Errorf("%d turns sent, want 2", n)
	}
	found := false
	for _, ev := range f.Events() {
		if ev.Kind == "budget_exceeded" && ev.Data["role"] == agent.RoleCodegen {
			found = true
		}
	}
	if !found {
		t.Error("no budget_exceeded event")
	}
}

// TestLoopInvalidFinish: finish arguments that are not a valid answer
// come back as a tool error; the corrected finish ends the run.
func TestLoopInvalidFinish(t *testing.T) {
	f := agenttest.NewCodeEnv(t, nil)
	m := &agenttest.ToolModel{T: t}
	m.Turn = agenttest.Scripted(
		agenttest.Calls(agenttest.ToolCall(t, tools.Finish, map[string]any{"status": "completed"})),
		agenttest.Calls(agenttest.ToolCall(t, tools.Finish, map[string]any{"status": "plan_unclear", "questions": []any{map[string]any{"text": "Which operator?"}}})),
	)
	res, err := phasetest.Run(context.Background(), f.O, f.ID, codegen.Worker{RT: toolRuntime(f, m, nil)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Record.Status != "plan_unclear" || len(res.Record.Questions) != 1 || res.Record.Questions[0].ID != "q1" {
		t.Errorf("record %+v", res.Record)
	}
	r := agenttest.ToolResults(m.Requests()[1])
	if len(r) != 1 || !r[0].IsError || !strings.Contains(r[0].Content, "you have not changed any file") {
		t.Errorf("results %+v", r)
	}
}

// TestJSONRetryAnswerCached: an answer accepted after a re-prompt answers
// the original request next time, without the retries.
func TestJSONRetryAnswerCached(t *testing.T) {
	f := agenttest.NewCodeEnv(t, nil)
	m := &agenttest.ToolModel{T: t, NoTools: true}
	good := `{"status":"completed","edits":[{"path":"calc.go","old_string":"a - b","new_string":"a + b"}],"files":[],"deletes":[]}`
	m.Turn = agenttest.Scripted(llm.Response{Text: `{"status":"done"}`}, llm.Response{Text: good})
	if _, err := phasetest.Run(context.Background(), f.O, f.ID, codegen.Worker{RT: toolRuntime(f, m, nil)}); err != nil {
		t.Fatal(err)
	}
	reqs := m.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	if !strings.Contains(reqs[0].Messages[1].Content, "return a - b") {
		t.Error("without tools the planned file must be in the prompt")
	}
	if _, err := phasetest.Run(context.Background(), f.O, f.ID, codegen.Worker{RT: toolRuntime(f, m, nil)}); err != nil {
		t.Fatal(err)
	}
	if n := len(m.Requests()); n != 2 {
		t.Errorf("the re-run sent %d requests, want 0", n-2)
	}
	if f.Read("code/files/calc.go") != agenttest.CalcFixed {
		t.Errorf("calc.go %q", f.Read("code/files/calc.go"))
	}
}

// TestReviewersShareOneEngine: plan reviewers with tools read the
// repository and finish; one reviewer's failure does not cancel the others
// (each finishes and is cached, so the re-run asks only the one that
// failed); every persona gets the same shared prefix, marked for caching,
// with its own instructions last.
func TestReviewersShareOneEngine(t *testing.T) {
	f := agenttest.NewCodeEnv(t, nil)
	f.Override(lifecycle.PlanReview)
	failRisk := true
	verdict := map[string]any{"ok": true, "severity": "info", "decision": "approve", "blocking_issues": []any{}, "suggestions": []any{}, "summary": "fine"}
	m := &agenttest.ToolModel{T: t}
	m.Turn = func(n int, req llm.Request) (llm.Response, error) {
		if req.Role == "plan_reviewer:risk" && failRisk {
			return llm.Response{}, errors.New("the risk model is down")
		}
		if len(agenttest.ToolResults(req)) == 0 {
			return agenttest.Calls(agenttest.ToolCall(t, tools.ReadFile, map[string]any{"path": "calc.go"})), nil
		}
		return agenttest.Calls(agenttest.ToolCall(t, tools.Finish, verdict)), nil
	}
	perPersona := func(c *config.Config) { c.Review.Calls = config.ReviewCallsPerPersona }
	_, err := phasetest.Run(context.Background(), f.O, f.ID, review.PlanWorker{RT: toolRuntime(f, m, perPersona)})
	if err == nil || !strings.Contains(err.Error(), "risk") || !strings.Contains(err.Error(), "the risk model is down") {
		t.Fatalf("error %v", err)
	}
	byRole := map[string]int{}
	var shared string
	for _, r := range m.Requests() {
		byRole[r.Role]++
		if len(r.Messages) < 3 || !r.Messages[1].CacheBreakpoint || r.CacheKey != "orch-fix-plan_reviewer" {
			t.Fatalf("%s: layout %+v", r.Role, r.Messages)
		}
		if shared == "" {
			shared = r.Messages[1].Content
		} else if r.Messages[1].Content != shared {
			t.Errorf("%s: a different shared prefix", r.Role)
		}
		persona := strings.TrimPrefix(r.Role, "plan_reviewer:")
		if !strings.Contains(r.Messages[2].Content, "as the "+persona+" reviewer") {
			t.Errorf("%s: the persona is not in the last message", r.Role)
		}
	}
	for _, p := range []string{"product", "architecture", "implementation", "testing"} {
		if byRole["plan_reviewer:"+p] != 2 {
			t.Errorf("%s made %d requests, want 2 (read, finish): cancelled by the failure?", p, byRole["plan_reviewer:"+p])
		}
	}
	if strings.Contains(shared, "return a - b") {
		t.Error("with tools the files are read, not sent up front")
	}
	read := agenttest.ToolResults(m.Requests()[len(m.Requests())-1])
	if len(read) != 1 || !strings.Contains(read[0].Content, "return a - b") {
		t.Errorf("read_file result %+v", read)
	}

	failRisk = false
	before := len(m.Requests())
	res, err := phasetest.Run(context.Background(), f.O, f.ID, review.PlanWorker{RT: toolRuntime(f, m, perPersona)})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Review.OK || len(res.Review.Reviewers) != 5 {
		t.Errorf("review %+v", res.Review)
	}
	for _, r := range m.Requests()[before:] {
		if r.Role != "plan_reviewer:risk" {
			t.Errorf("the re-run asked %s again instead of using its cached answers", r.Role)
		}
	}
}

// TestCodeReviewersReadTheChange: code reviewers with tools see the
// changed files as the change leaves them.
func TestCodeReviewersReadTheChange(t *testing.T) {
	f := agenttest.NewCodeEnv(t, nil)
	m := &agenttest.ToolModel{T: t}
	m.Turn = func(n int, req llm.Request) (llm.Response, error) {
		if req.Role == agent.RoleCodegen {
			if len(agenttest.ToolResults(req)) == 0 {
				return agenttest.Calls(agenttest.ToolCall(t, tools.EditFile, map[string]any{"path": "calc.go", "old_string": "a - b", "new_string": "a + b"})), nil
			}
			return agenttest.Calls(agenttest.ToolCall(t, tools.Finish, map[string]any{"status": "completed"})), nil
		}
		if len(agenttest.ToolResults(req)) == 0 {
			return agenttest.Calls(agenttest.ToolCall(t, tools.ReadFile, map[string]any{"path": "calc.go"}), agenttest.ToolCall(t, tools.EditFile, map[string]any{"path": "calc.go", "old_string": "a", "new_string": "b"})), nil
		}
		return agenttest.Calls(agenttest.ToolCall(t, tools.Finish, map[string]any{"ok": true, "issues": []any{}})), nil
	}
	if _, err := phasetest.Run(context.Background(), f.O, f.ID, codegen.Worker{RT: toolRuntime(f, m, nil)}); err != nil {
		t.Fatal(err)
	}
	if to := f.Next(); to != lifecycle.Review {
		t.Fatalf("next → %s", to)
	}
	res, err := phasetest.Run(context.Background(), f.O, f.ID, review.CodeWorker{RT: toolRuntime(f, m, func(c *config.Config) { c.Review.Calls = config.ReviewCallsPerPersona })})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Review.OK || len(res.Review.Reviewers) != 4 {
		t.Errorf("review %+v", res.Review)
	}
	for _, r := range m.Requests() {
		if !strings.HasPrefix(r.Role, agent.RoleCodeReviewer) || len(agenttest.ToolResults(r)) == 0 {
			continue
		}
		var names []string
		for _, tl := range r.Tools {
			names = append(names, tl.Name)
		}
		if got := strings.Join(names, ","); got != "list_files,read_file,search,finish" {
			t.Errorf("%s was offered %s", r.Role, got)
		}
		res := agenttest.ToolResults(r)
		if !strings.Contains(res[0].Content, "return a + b") {
			t.Errorf("%s read %q, want the changed file", r.Role, res[0].Content)
		}
		if !res[1].IsError || !strings.Contains(res[1].Content, "unknown tool") {
			t.Errorf("%s could call edit_file: %q", r.Role, res[1].Content)
		}
	}
}

// TestRoleLimitsFromConfig: each role's requests carry its output limit
// and reasoning effort from [max_output_tokens] and [reasoning_effort]
// (a reviewer persona takes its base role's), else the [context] default
// and the provider's default effort; a cut answer's error names the
// role's limit.
func TestRoleLimitsFromConfig(t *testing.T) {
	f := agenttest.NewCodeEnv(t, nil)
	m := &agenttest.ToolModel{T: t}
	m.Turn = func(n int, req llm.Request) (llm.Response, error) {
		return llm.Response{Text: `{"status":"completed","files":[{"path":"calc.go","content":"package ca`, StopReason: "max_tokens", Usage: llm.Usage{InputTokens: 2000, OutputTokens: int64(req.MaxTokens)}}, nil
	}
	rt := toolRuntime(f, m, func(c *config.Config) {
		c.MaxOutputTokens = map[string]int{"codegen": 900, "code_reviewer": 300}
		c.ReasoningEffort = map[string]string{"codegen": "high"}
	})
	_, err := phasetest.Run(context.Background(), f.O, f.ID, codegen.Worker{RT: rt})
	var te *llm.TruncatedError
	if !errors.As(err, &te) || te.MaxTokens != 900 || !strings.Contains(err.Error(), "output limit of 900 tokens") {
		t.Fatalf("error %v", err)
	}
	reqs := m.Requests()
	if len(reqs) != 1 || reqs[0].MaxTokens != 900 || reqs[0].ReasoningEffort != "high" {
		t.Fatalf("codegen requests %d: max_tokens %d, effort %q", len(reqs), reqs[0].MaxTokens, reqs[0].ReasoningEffort)
	}
	for _, tc := range []struct {
		role   string
		tokens int
		effort string
	}{
		{"codegen", 900, "high"},
		{"code_reviewer:security", 300, ""},
		{"planner", 16000, ""},
	} {
		req := llm.Request{Role: tc.role}
		rt.Limits(&req)
		if req.MaxTokens != tc.tokens || req.ReasoningEffort != tc.effort {
			t.Errorf("%s: max_tokens %d effort %q, want %d %q", tc.role, req.MaxTokens, req.ReasoningEffort, tc.tokens, tc.effort)
		}
	}
	// What a request sets is kept.
	req := llm.Request{Role: "codegen", MaxTokens: 50, ReasoningEffort: "low"}
	rt.Limits(&req)
	if req.MaxTokens != 50 || req.ReasoningEffort != "low" {
		t.Errorf("Limits overrode the request: %d %q", req.MaxTokens, req.ReasoningEffort)
	}
}

// TestLoopKeepsProviderState: an answer's provider state (Anthropic's
// thinking blocks) goes back with it in the next turn, also when the turn
// is replayed from the cache.
func TestLoopKeepsProviderState(t *testing.T) {
	f := agenttest.NewCodeEnv(t, nil)
	state := json.RawMessage(`[{"type":"thinking","thinking":"look first","signature":"sig-1"}]`)
	turns := agenttest.Scripted(
		llm.Response{ToolCalls: []llm.ToolCall{agenttest.ToolCall(t, "read_file", map[string]any{"path": "calc.go"})}, ProviderState: state, StopReason: "tool_use"},
		agenttest.Calls(agenttest.ToolCall(t, "edit_file", map[string]any{"path": "calc.go", "old_string": "a - b", "new_string": "a + b"})),
		agenttest.Calls(agenttest.ToolCall(t, "finish", map[string]any{"status": "completed"})),
	)
	for run := 1; run <= 2; run++ {
		m := &agenttest.ToolModel{T: t, Turn: turns}
		rt := toolRuntime(f, m, nil)
		if _, err := phasetest.Run(context.Background(), f.O, f.ID, codegen.Worker{RT: rt}); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		reqs := m.Requests()
		if run == 2 {
			// Answered from the cache turn by turn: nothing reached the model.
			if len(reqs) != 0 {
				t.Fatalf("run 2: %d requests reached the model, want 0 (cached)", len(reqs))
			}
			break
		}
		if len(reqs) != 3 {
			t.Fatalf("%d requests, want 3", len(reqs))
		}
		var got json.RawMessage
		for _, msg := range reqs[1].Messages {
			if msg.Role == llm.RoleAssistant {
				got = msg.ProviderState
			}
		}
		if string(got) != string(state) {
			t.Errorf("turn 2 sent the assistant turn with provider state %s, want %s", got, state)
		}
	}
}

// fakeTests is a work.TestRunner answering a fixed report; it remembers
// what it was asked to run.
type fakeTests struct {
	rep  work.TestReport
	runs []work.TestRun
}

func (f *fakeTests) Ready() error { return nil }

func (f *fakeTests) Run(ctx context.Context, r work.TestRun) (work.TestReport, error) {
	f.runs = append(f.runs, r)
	return f.rep, nil
}

// TestCodegenRunTestsThroughItsRunner: run_tests runs the suites through
// the runner codegen was given (the registry gives the test phase's), on
// the base with the edits so far as a patch; without a runner the tool is
// not offered.
func TestCodegenRunTestsThroughItsRunner(t *testing.T) {
	f := agenttest.NewCodeEnv(t, nil)
	m := &agenttest.ToolModel{T: t}
	m.Turn = agenttest.Scripted(
		agenttest.Calls(agenttest.ToolCall(t, tools.EditFile, map[string]any{"path": "calc.go", "old_string": "a - b", "new_string": "a + b"})),
		agenttest.Calls(agenttest.ToolCall(t, tools.RunTests, nil)),
		agenttest.Calls(agenttest.ToolCall(t, tools.Finish, map[string]any{"status": "completed"})),
	)
	rt := toolRuntime(f, m, nil)
	fake := &fakeTests{rep: work.TestReport{TestReport: artifact.TestReport{Status: artifact.TestCompleted, OverallPass: true,
		Summary: artifact.Summary{Passed: 7}, Suites: []artifact.Suite{{ID: "unit"}}}}}
	if _, err := phasetest.Run(context.Background(), f.O, f.ID, codegen.Worker{RT: rt, Tests: fake}); err != nil {
		t.Fatal(err)
	}
	base := gittest.Git(t, f.Root, "rev-parse", "HEAD")
	if len(fake.runs) != 1 || fake.runs[0].Base != base || fake.runs[0].Task != f.ID || !strings.Contains(string(fake.runs[0].Patch), "+func Add(a, b int) int { return a + b }") {
		t.Fatalf("runs %+v; want one on the base %s with the edit as a patch", fake.runs, base)
	}
	if res := agenttest.ToolResults(m.Requests()[2]); len(res) != 2 || !strings.HasPrefix(res[1].Content, "PASS: 7 passed, 0 failed, 0 skipped, 0 errors in 1 suite(s)") {
		t.Errorf("run_tests answered %+v", res)
	}

	g := agenttest.NewCodeEnv(t, nil)
	m2 := &agenttest.ToolModel{T: t}
	m2.Turn = agenttest.Scripted(agenttest.Calls(agenttest.ToolCall(t, tools.Finish, map[string]any{"status": "failed", "notes": "looking"})))
	_, _ = phasetest.Run(context.Background(), g.O, g.ID, codegen.Worker{RT: toolRuntime(g, m2, nil)})
	if len(m2.Requests()) == 0 {
		t.Fatal("no model call without a runner")
	}
	for _, d := range m2.Requests()[0].Tools {
		if d.Name == tools.RunTests {
			t.Error("codegen without a runner offers run_tests")
		}
	}
}

// TestRunTestsWorktreePlace: run_tests runs in the warm test worktree of
// the repository's build cache folder, or, with [test] build_cache off, in
// a worktree of its own below that folder's run_tests/ (never inside the
// repository, never the bare system temp folder), removed after the run.
func TestRunTestsWorktreePlace(t *testing.T) {
	for _, warm := range []bool{true, false} {
		cache := t.TempDir()
		t.Setenv("XDG_CACHE_HOME", cache)
		f := agenttest.NewCodeEnv(t, nil)
		m := &agenttest.ToolModel{T: t}
		m.Turn = agenttest.Scripted(
			agenttest.Calls(agenttest.ToolCall(t, tools.RunTests, nil)),
			agenttest.Calls(agenttest.ToolCall(t, tools.Finish, map[string]any{"status": "failed", "notes": "only looking"})),
		)
		rt := toolRuntime(f, m, func(c *config.Config) {
			c.Test.BuildCache = warm
			c.Test.Sandbox = "none"
			c.Test.Suites = []config.Suite{{Name: "where", Kind: "test", Command: config.Command{"sh", "-c", `printf 'ran-%s:%s\n' in "$(pwd -P)"; exit 1`}}}
		})
		tests := testphase.Runner{Config: rt.Config, OwnWorktrees: codegen.RunTestsDir}
		if _, err := phasetest.Run(context.Background(), f.O, f.ID, codegen.Worker{RT: rt, Tests: tests}); err != nil {
			t.Fatal(err)
		}
		res := agenttest.ToolResults(m.Requests()[1])
		if len(res) != 1 {
			t.Fatalf("%d results", len(res))
		}
		_, where, _ := strings.Cut(res[0].Content, "ran-in:")
		where, _, _ = strings.Cut(where, "\n")
		build, err := testphase.BuildCacheDir(f.Root)
		if err != nil {
			t.Fatal(err)
		}
		build, _ = filepath.EvalSymlinks(build)
		want := filepath.Join(build, testphase.WarmWorktree)
		if !warm {
			want = filepath.Join(build, codegen.RunTestsDir) + string(filepath.Separator)
		}
		if !strings.HasPrefix(where, want) {
			t.Errorf("build_cache %v: run_tests ran in %q, want below %q", warm, where, want)
		}
		if !warm {
			if entries, err := os.ReadDir(filepath.Join(build, codegen.RunTestsDir)); err != nil || len(entries) != 0 {
				t.Errorf("run_tests left %v behind (%v)", entries, err)
			}
		}
	}
}

// TestLoopTextAnswer: a turn that answers in text instead of calling
// finish is taken when the text is a valid answer (a code fence allowed);
// otherwise (prose, a key given twice) the model is told to answer through
// finish, and the loop goes on.
func TestLoopTextAnswer(t *testing.T) {
	reviewers := func(c *config.Config) {
		c.Review.CodePersonas, c.Review.Calls = []string{"tests"}, config.ReviewCallsPerPersona
	}
	for _, tc := range []struct {
		name  string
		text  string
		turns int
	}{
		{"valid", `{"ok":true,"issues":[]}`, 1},
		{"fenced", "```json\n{\"ok\":true,\"issues\":[]}\n```", 1},
		{"prose", "Looks fine to me.", 2},
		{"ambiguous", `{"ok":true,"ok":false,"issues":[]}`, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := agenttest.NewCodeEnv(t, nil)
			if _, err := phasetest.Run(context.Background(), f.O, f.ID, codegen.Worker{RT: f.ScriptRuntime(agenttest.CodegenEntry)}); err != nil {
				t.Fatal(err)
			}
			f.Next()
			m := &agenttest.ToolModel{T: t}
			m.Turn = agenttest.Scripted(llm.Response{Text: tc.text}, agenttest.Calls(agenttest.ToolCall(t, tools.Finish, map[string]any{"ok": true, "issues": []any{}})))
			if _, err := phasetest.Run(context.Background(), f.O, f.ID, review.CodeWorker{RT: toolRuntime(f, m, reviewers)}); err != nil {
				t.Fatal(err)
			}
			reqs := m.Requests()
			if len(reqs) != tc.turns {
				t.Fatalf("%d turns, want %d", len(reqs), tc.turns)
			}
			if tc.turns == 2 {
				last := reqs[1].Messages[len(reqs[1].Messages)-1]
				if last.Role != llm.RoleUser || !strings.Contains(last.Content, "calling finish") {
					t.Errorf("the model was told %+v", last)
				}
			}
		})
	}
}
