package codegen

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/agent/agenttest"
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/phasetest"
)

// cgGoodAnswer is a valid codegen answer for cgPlan.
func cgGoodAnswer() map[string]any {
	return map[string]any{
		"status":  "completed",
		"files":   []any{map[string]any{"path": "calc.go", "content": agenttest.CalcFixed}, map[string]any{"path": "calc_test.go", "content": agenttest.CalcTest}},
		"deletes": []any{},
		"notes":   "fixed the operator",
	}
}

func TestCodegenWritesFilesAndPatch(t *testing.T) {
	f := agenttest.NewCodeEnv(t, nil)
	api := agenttest.NewAnthropicAPI(t, func(int, map[string]any) any { return cgGoodAnswer() })
	ctx := context.Background()
	res, err := phasetest.Run(ctx, f.O, f.ID, Worker{RT: api.Runtime(f)})
	if err != nil {
		t.Fatal(err)
	}
	head := strings.TrimSpace(agenttest.Git(t, f.Root, "rev-parse", "HEAD"))
	rec := res.Record
	if rec.Status != "completed" || rec.Base != head || rec.Attempt != 1 || len(rec.Unplanned) != 0 {
		t.Errorf("record %+v", rec)
	}
	if got := strings.Join(rec.Files, ","); got != "calc.go,calc_test.go" {
		t.Errorf("files %s", got)
	}
	if f.Read("code/files/calc.go") != agenttest.CalcFixed || f.Read("code/files/calc_test.go") != agenttest.CalcTest {
		t.Errorf("code/files content differs")
	}
	cg := artifact.LoadCodegen(f.Task.Dir)
	if !cg.OK() || cg.Value.Base != head || cg.Value.Status != "completed" {
		t.Fatalf("codegen.json %+v", cg)
	}
	if want := []FileStat{{Path: "calc.go", Added: 1, Removed: 1}, {Path: "calc_test.go", Added: 9}}; !equalStats(rec.DiffStat, want) {
		t.Errorf("diffstat %+v, want %+v", rec.DiffStat, want)
	}

	// The patch applies to the base and reproduces the files.
	patch := filepath.Join(f.Task.Dir, "code", "diff.patch")
	agenttest.Git(t, f.Root, "apply", "--check", patch)
	clone := t.TempDir()
	agenttest.Git(t, clone, "clone", "-q", f.Root, ".")
	agenttest.Git(t, clone, "apply", patch)
	for _, p := range []string{"calc.go", "calc_test.go"} {
		got, err := os.ReadFile(filepath.Join(clone, p))
		if err != nil || string(got) != f.Read("code/files/"+p) {
			t.Errorf("%s after git apply: %q, %v", p, got, err)
		}
	}
	// The user's working tree is untouched.
	if got, _ := os.ReadFile(filepath.Join(f.Root, "calc.go")); string(got) != agenttest.Calc {
		t.Errorf("working tree changed: %q", got)
	}

	// The prompt carried the plan and the planned file at the base.
	reqs := api.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	prompt := agenttest.UserText(reqs[0])
	for _, want := range []string{"Make Add add", "calc_test.go (create): test Add", "return a - b", "does not exist at the base", "Arithmetic helpers"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("prompt lacks %q", want)
		}
	}
	if strings.Contains(prompt, "fix round") {
		t.Errorf("a first attempt is not a fix round")
	}

	// The same inputs again: answered from the cache, no request.
	if _, err := phasetest.Run(ctx, f.O, f.ID, Worker{RT: api.Runtime(f)}); err != nil {
		t.Fatal(err)
	}
	if n := len(api.Requests()); n != 1 {
		t.Errorf("re-run made %d requests, want the cache to answer", n)
	}
	calls := f.ModelCalls()
	if len(calls) != 2 || calls[0]["cached"] != false || calls[1]["cached"] != true || calls[1]["phase"] != "codegen" || calls[1]["role"] != "codegen" {
		t.Errorf("model_call events %v", calls)
	}
	if !f.Exists("history/1-codegen/code/codegen.json") {
		t.Errorf("the re-run did not archive the previous attempt")
	}
	// --fresh asks again.
	rt := api.Runtime(f)
	rt.Fresh = true
	res, err = phasetest.Run(ctx, f.O, f.ID, Worker{RT: rt})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(api.Requests()); n != 2 {
		t.Errorf("fresh run: %d requests, want 2", n)
	}
	if res.Record.Attempt != 3 {
		t.Errorf("attempt %d, want 3", res.Record.Attempt)
	}
	if to := f.Next(); to != lifecycle.Review {
		t.Errorf("orch next went to %s, want review", to)
	}
	f.NoKeyOnDisk()
}

func equalStats(a, b []FileStat) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestCodegenFixLoop: a failing test report and then a blocking review,
// archived by `orch next`, reach the next codegen prompt.
func TestCodegenFixLoop(t *testing.T) {
	f := agenttest.NewCodeEnv(t, nil)
	// Each round's answer differs (a regression needs a new patch).
	api := agenttest.NewAnthropicAPI(t, func(n int, _ map[string]any) any {
		a := cgGoodAnswer()
		a["files"].([]any)[0].(map[string]any)["content"] = agenttest.CalcFixed + strings.Repeat("\n// fix round", n)
		return a
	})
	ctx := context.Background()
	if _, err := phasetest.Run(ctx, f.O, f.ID, Worker{RT: api.Runtime(f)}); err != nil {
		t.Fatal(err)
	}
	if to := f.Next(); to != lifecycle.Review {
		t.Fatalf("next → %s", to)
	}
	gittest.Write(t, f.Task.Dir, "review/code-review.json", `{"ok":true,"issues":[]}`)
	if to := f.Next(); to != lifecycle.Test {
		t.Fatalf("next → %s", to)
	}
	gittest.Write(t, f.Task.Dir, "test/logs/go-test.log", "=== RUN   TestAdd\n--- FAIL: TestAdd (0.00s)\nFAIL\texample.com/calc\n")
	gittest.Write(t, f.Task.Dir, "test/report.json", `{"status":"completed","overall_pass":false,
	 "summary":{"passed":0,"failed":1,"skipped":0,"error":0},
	 "suites":[{"id":"go-test","kind":"test","command":"go test -json ./...","exit_code":1,"overall_pass":false,
	   "summary":{"passed":0,"failed":1,"skipped":0,"error":0},"log":"test/logs/go-test.log",
	   "cases":[{"name":"TestAdd","package":"example.com/calc","status":"fail","output":"calc_test.go:7: Add(2, 3) = -1, want 5\n"},
	            {"name":"TestSub","package":"example.com/calc","status":"pass"}]}]}`)
	if to := f.Next(); to != lifecycle.Codegen {
		t.Fatalf("next → %s, want codegen", to)
	}
	res, err := phasetest.Run(ctx, f.O, f.ID, Worker{RT: api.Runtime(f)})
	if err != nil {
		t.Fatal(err)
	}
	reqs := api.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	prompt := agenttest.UserText(reqs[1])
	for _, want := range []string{"fix round", "TestAdd", "Add(2, 3) = -1, want 5", "--- FAIL: TestAdd", "history/1-codegen/test/report.json", "+func Add(a, b int) int { return a + b }"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("fix prompt lacks %q", want)
		}
	}
	if strings.Contains(prompt, "TestSub") {
		t.Errorf("fix prompt names a passing test")
	}
	if got := strings.Join(res.Record.FixFrom, ","); got != "history/1-codegen" || res.Record.Attempt != 2 {
		t.Errorf("fix_from %s attempt %d", got, res.Record.Attempt)
	}

	// A blocking review sends it back again: its issue is in the next prompt.
	if to := f.Next(); to != lifecycle.Review {
		t.Fatalf("next → %s", to)
	}
	gittest.Write(t, f.Task.Dir, "review/code-review.json", `{"ok":false,"issues":[
	  {"severity":"blocking","kind":"code","file":"calc.go","line":4,"message":"handle integer overflow"},
	  {"severity":"info","kind":"style","message":"nice"}]}`)
	if to := f.Next(); to != lifecycle.Codegen {
		t.Fatalf("next → %s, want codegen", to)
	}
	if _, err := phasetest.Run(ctx, f.O, f.ID, Worker{RT: api.Runtime(f)}); err != nil {
		t.Fatal(err)
	}
	prompt = agenttest.UserText(api.Requests()[2])
	for _, want := range []string{"handle integer overflow", "calc.go:4", "history/2-codegen/review/code-review.json", "TestAdd"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("second fix prompt lacks %q", want)
		}
	}
	if strings.Contains(prompt, "nice") {
		t.Errorf("info issues are not failures")
	}
}

// TestGatherFailuresStopsAtReplan: failures archived before the plan was
// revised do not reach codegen.
func TestGatherFailuresStopsAtReplan(t *testing.T) {
	dir := t.TempDir()
	report := `{"status":"completed","overall_pass":false,"summary":{"passed":0,"failed":1,"skipped":0,"error":0},"suites":[{"id":"s","kind":"test","command":"c","exit_code":1,"overall_pass":false,"summary":{"passed":0,"failed":1,"skipped":0,"error":0},"cases":[{"name":"TestOld","status":"fail"}]}]}`
	gittest.Write(t, dir, "history/1-codegen/test/report.json", report)
	gittest.Write(t, dir, "history/2-planning/review/code-review.json", `{"ok":false,"issues":[{"severity":"blocking","kind":"plan","message":"plan wrong"}]}`)
	if f := agent.GatherFailures(dir, 1000); !f.Empty() {
		t.Errorf("failures before a re-plan: %+v", f)
	}
	gittest.Write(t, dir, "history/3-codegen/test/report.json", strings.Replace(report, "TestOld", "TestNew", 1))
	gittest.Write(t, dir, "history/4-codegen-failed/test/report.json", strings.Replace(report, "TestOld", "TestFailedRun", 1))
	f := agent.GatherFailures(dir, 1000)
	if f.TestFrom != "history/3-codegen" || len(f.Suites) != 1 || f.Suites[0].Cases[0].Name != "TestNew" {
		t.Errorf("failures %+v", f)
	}
	// A newer passing report hides the older failure.
	gittest.Write(t, dir, "history/5-codegen/test/report.json", `{"status":"completed","overall_pass":true,"summary":{"passed":1,"failed":0,"skipped":0,"error":0},"suites":[]}`)
	if f := agent.GatherFailures(dir, 1000); !f.Empty() {
		t.Errorf("a passing newest report still reports %+v", f)
	}
	// Changes requested at accept: the reasons, and the patch they were about.
	gittest.Write(t, dir, "history/6-codegen/accept/decision.json", `{"verdict":"changes_requested","target":"codegen","reasons":["log the retries"],"decider":{"kind":"human"}}`)
	gittest.Write(t, dir, "history/6-codegen/code/diff.patch", "diff --git a/a.go b/a.go\n")
	f = agent.GatherFailures(dir, 1000)
	if f.DecideFrom != "history/6-codegen" || strings.Join(f.Reasons, ",") != "log the retries" || f.DiffFrom != "history/6-codegen" {
		t.Errorf("failures %+v", f)
	}
	text := agent.RenderFailures(f)
	for _, want := range []string{"asked for changes", "log the retries", "diff --git a/a.go"} {
		if !strings.Contains(text, want) {
			t.Errorf("rendered failures lack %q:\n%s", want, text)
		}
	}
}

// TestCodegenRefusesUnplannedPaths: a single answer writing or deleting a
// path outside the file plan is refused, with the plan's paths named for
// the model to correct; nothing is written.
func TestCodegenRefusesUnplannedPaths(t *testing.T) {
	f := agenttest.NewCodeEnv(t, nil)
	bad := `{"status":"completed","files":[
		{"path":"calc.go","content":` + agenttest.JSONString(agenttest.CalcFixed) + `},
		{"path":"internal/extra/extra.go","content":"package extra\n"}],"deletes":["README.md"],
		"notes":"needed a helper package"}`
	good := `{"status":"completed","edits":[{"path":"./calc.go","old_string":"a - b","new_string":"a + b"}],"files":[],"deletes":[]}`
	rt := f.ScriptRuntime(agenttest.Entry{Role: "codegen", JSON: bad}, agenttest.Entry{Role: "codegen", JSON: good})
	res, err := phasetest.Run(context.Background(), f.O, f.ID, Worker{RT: rt})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Record.Unplanned) != 0 || strings.Join(res.Record.Files, ",") != "calc.go" {
		t.Errorf("record %+v", res.Record)
	}
	if got := strings.Join(res.Record.Untouched, ","); got != "calc_test.go" {
		t.Errorf("untouched %s", got)
	}
	if f.Exists("code/files/internal/extra/extra.go") || f.Read("code/files/calc.go") != agenttest.CalcFixed {
		t.Errorf("code/files: extra written or calc.go wrong: %q", f.Read("code/files/calc.go"))
	}
	// The second request carried the refusal, naming the plan's paths.
	calls := f.ModelCalls()
	if len(calls) != 2 {
		t.Fatalf("%d model calls, want 2", len(calls))
	}
	if to := f.Next(); to != lifecycle.Review {
		t.Errorf("orch next → %s, want review", to)
	}
}

// TestCodegenUnplannedMessage: the refusal names the path and the plan.
func TestCodegenUnplannedMessage(t *testing.T) {
	f := agenttest.NewCodeEnv(t, nil)
	bad := `{"status":"completed","files":[{"path":"internal/extra/extra.go","content":"package extra\n"}],"deletes":[]}`
	rt := f.ScriptRuntime(agenttest.Entry{Role: "codegen", JSON: bad}, agenttest.Entry{Role: "codegen", JSON: bad}, agenttest.Entry{Role: "codegen", JSON: bad})
	_, err := phasetest.Run(context.Background(), f.O, f.ID, Worker{RT: rt})
	if err == nil {
		t.Fatal("accepted a path outside the file plan")
	}
	for _, want := range []string{"internal/extra/extra.go is outside the reviewed file plan", "calc.go (update), calc_test.go (create)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if f.Exists("code") {
		t.Error("code/ written")
	}
}

func TestCodegenPlanUnclearRoutesToPlanReview(t *testing.T) {
	f := agenttest.NewCodeEnv(t, nil)
	rt := f.ScriptRuntime(agenttest.Entry{Role: "codegen", JSON: `{"status":"plan_unclear","files":[],"deletes":[],
		"questions":[{"id":"","text":"Should Add saturate on overflow?"}]}`})
	res, err := phasetest.Run(context.Background(), f.O, f.ID, Worker{RT: rt})
	if err != nil {
		t.Fatal(err)
	}
	if res.Record.Status != "plan_unclear" || len(res.Record.Questions) != 1 || res.Record.Questions[0].ID != "q1" {
		t.Errorf("record %+v", res.Record)
	}
	if f.Exists("code/files") || f.Exists("code/diff.patch") {
		t.Errorf("plan_unclear wrote code")
	}
	cg := artifact.LoadCodegen(f.Task.Dir)
	if !cg.OK() || cg.Value.Status != "plan_unclear" {
		t.Fatalf("codegen.json %+v", cg)
	}
	if to := f.Next(); to != lifecycle.PlanReview {
		t.Errorf("orch next → %s, want plan_review", to)
	}
}

func TestCodegenFailedStaysInCodegen(t *testing.T) {
	f := agenttest.NewCodeEnv(t, nil)
	rt := f.ScriptRuntime(agenttest.Entry{Role: "codegen", JSON: `{"status":"failed","files":[],"deletes":[],"notes":"the plan needs a library I cannot see"}`})
	res, err := phasetest.Run(context.Background(), f.O, f.ID, Worker{RT: rt})
	if err != nil {
		t.Fatal(err)
	}
	if res.Record.Status != "failed" || f.Phase() != "codegen" {
		t.Errorf("record %+v phase %s", res.Record, f.Phase())
	}
	if _, err := f.O.Next(context.Background(), f.ID, orchestrator.NextRequest{}); err == nil {
		t.Errorf("orch next moved a failed codegen")
	}
}

func TestCodegenRefusesWithoutFilePlan(t *testing.T) {
	f := agenttest.NewCodeEnv(t, nil)
	gittest.Write(t, f.Task.Dir, "planning/planning.ai.json", `{"id":"fix","title":"T","brief":"b"}`)
	rt := f.ScriptRuntime(agenttest.Entry{Role: "codegen", JSON: `{}`})
	_, err := phasetest.Run(context.Background(), f.O, f.ID, Worker{RT: rt})
	if err == nil || !strings.Contains(err.Error(), "needs a file plan") {
		t.Fatalf("error %v", err)
	}
	if len(f.ModelCalls()) != 0 {
		t.Errorf("a model was called without a file plan")
	}
}

// TestCodegenHostileAnswers: every unsafe answer is refused with a clear
// error, nothing is written outside the task folder, and the task stays
// in codegen without a valid artifact.
func TestCodegenHostileAnswers(t *testing.T) {
	file := func(p, content string) string {
		return `{"status":"completed","files":[{"path":` + agenttest.JSONString(p) + `,"content":` + agenttest.JSONString(content) + `}],"deletes":[]}`
	}
	big := strings.Repeat("x", 20<<20)
	cases := []struct {
		name   string
		answer string
		want   string
	}{
		{"dotdot", file("../x", "pwned\n"), `unsafe path "../x": ".." element`},
		{"absolute", file("/etc/passwd", "root::0:0::/:/bin/sh\n"), `unsafe path "/etc/passwd": absolute path`},
		{"git hook", file(".git/hooks/pre-commit", "#!/bin/sh\nrm -rf /\n"), `names the .git directory`},
		{"git upper case", file(".GIT/config", "[core]\n"), `element ".GIT" names the .git directory`},
		{"orch folder", file(".orch/tasks/fix/state.json", "{}"), "inside the .orch directory"},
		{"nul bytes", file("calc.go", "package calc\x00\x01"), "contains a NUL byte: binary content is not accepted"},
		{"lone surrogate", `{"status":"completed","files":[{"path":"calc.go","content":"a\ud800b"}],"deletes":[]}`, "lone UTF-16 surrogate"},
		{"20 MB", file("calc.go", big), "20971520 bytes, at most 8388608 are accepted"},
		{"duplicate", `{"status":"completed","files":[{"path":"calc.go","content":"a"},{"path":"calc.go","content":"b"}],"deletes":[]}`, `"calc.go" is also named at files[0].path`},
		{"write and delete", `{"status":"completed","files":[{"path":"calc.go","content":"a"}],"deletes":["calc.go"]}`, `is also named at files[0].path`},
		{"through a symlink", file("link/passwd", "x\n"), "needs link to be a directory"},
		{"onto a symlink", file("link", "x\n"), "is a symbolic link at base"},
		{"no change", file("calc.go", agenttest.Calc), "identical to the base commit"},
		{"delete missing", `{"status":"completed","files":[],"deletes":["nope.go"]}`, `"nope.go" does not exist at the base commit`},
		{"edit missing text", `{"status":"completed","edits":[{"path":"calc.go","old_string":"a * b","new_string":"a + b"}],"files":[],"deletes":[]}`, "old_string was not found in calc.go"},
		{"edit ambiguous", `{"status":"completed","edits":[{"path":"calc.go","old_string":"a","new_string":"A"}],"files":[],"deletes":[]}`, "occurs 7 times in calc.go"},
		{"unplanned", file("other.go", "package calc\n"), "other.go is outside the reviewed file plan"},
	}
	passwd, _ := os.ReadFile("/etc/passwd")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := agenttest.NewCodeEnvWithLink(t, "nope.go\tdelete")
			answers := []agenttest.Entry{{Role: "codegen", JSON: tc.answer}, {Role: "codegen", JSON: tc.answer}, {Role: "codegen", JSON: tc.answer}}
			if len(tc.answer) > 1<<20 {
				// One big answer is enough: the last one decides the error.
				answers[0].JSON, answers[1].JSON = `{"status":"completed"}`, `{"status":"completed"}`
			}
			_, err := phasetest.Run(context.Background(), f.O, f.ID, Worker{RT: f.ScriptRuntime(answers...)})
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q\nwant it to contain %q", agent.ShortPath(err.Error()), tc.want)
			}
			if f.Phase() != "codegen" {
				t.Errorf("phase %s", f.Phase())
			}
			if f.Exists("code") {
				t.Errorf("code/ was written")
			}
			if !f.Exists("history/1-codegen-failed/codegen/raw/codegen.txt") {
				t.Errorf("the raw answer was not kept")
			}
			if cg := artifact.LoadCodegen(f.Task.Dir); cg.Present {
				t.Errorf("codegen.json present")
			}
			// Nothing outside the task folder.
			status := agenttest.Git(t, f.Root, "status", "--porcelain", "--untracked-files=all", "--", ".", ":!.orch")
			if status != "" {
				t.Errorf("the repository changed:\n%s", status)
			}
			if _, err := os.Lstat(filepath.Join(filepath.Dir(f.Root), "x")); err == nil {
				t.Errorf("../x was written")
			}
			if now, _ := os.ReadFile("/etc/passwd"); string(now) != string(passwd) {
				t.Fatalf("/etc/passwd changed")
			}
			if len(f.ModelCalls()) != 3 {
				t.Errorf("%d model calls, want 3 (re-prompted twice)", len(f.ModelCalls()))
			}
		})
	}
}

// TestCodegenRepromptsWithTheProblem: the second request quotes what was
// wrong with the first answer, and a corrected answer is accepted.
func TestCodegenRepromptsWithTheProblem(t *testing.T) {
	f := agenttest.NewCodeEnv(t, nil)
	api := agenttest.NewAnthropicAPI(t, func(n int, _ map[string]any) any {
		if n == 1 {
			return map[string]any{"status": "completed", "files": []any{map[string]any{"path": "../calc.go", "content": agenttest.CalcFixed}}, "deletes": []any{}}
		}
		return cgGoodAnswer()
	})
	if _, err := phasetest.Run(context.Background(), f.O, f.ID, Worker{RT: api.Runtime(f)}); err != nil {
		t.Fatal(err)
	}
	reqs := api.Requests()
	if len(reqs) != 2 || !strings.Contains(agenttest.UserText(reqs[1]), `unsafe path "../calc.go"`) {
		t.Errorf("re-prompt %d requests: %s", len(reqs), agent.ShortPath(agenttest.UserText(reqs[len(reqs)-1])))
	}
}

func TestCheckAnswerText(t *testing.T) {
	cases := []struct {
		raw string
		ok  bool
	}{
		{`{"a":"plain"}`, true},
		{`{"a":"\ud83d\ude00"}`, true},
		{`{"a":"\\ud800"}`, true}, // an escaped backslash, then text
		{`{"a":"\ud800"}`, false},
		{`{"a":"\udc00"}`, false},
		{`{"a":"\ud800\u0041"}`, false},
		{`{"a":"\ud800x"}`, false},
		{"{\"a\":\"\xff\"}", false},
		{`{"a":"\u00e9"}`, true},
	}
	for _, tc := range cases {
		if err := checkAnswerText([]byte(tc.raw)); (err == nil) != tc.ok {
			t.Errorf("%s: err %v, want ok %v", tc.raw, err, tc.ok)
		}
	}
}

func TestCheckCodegenAnswer(t *testing.T) {
	cases := []struct {
		name, raw, want string
	}{
		{"ok", `{"status":"completed","files":[{"path":"a.go","content":"x"}],"deletes":["b.go"]}`, ""},
		{"only deletes", `{"status":"completed","files":[],"deletes":["b.go"]}`, ""},
		{"bad status", `{"status":"done","files":[{"path":"a.go","content":"x"}]}`, `status: expected`},
		{"empty completed", `{"status":"completed","files":[],"deletes":[]}`, "needs at least one entry in edits, files or deletes"},
		{"unclear without question", `{"status":"plan_unclear","files":[],"deletes":[],"questions":[{"id":"q","text":" "}]}`, "needs at least one question"},
		{"failed without notes", `{"status":"failed","files":[],"deletes":[]}`, "needs notes"},
		{"case clash", `{"status":"completed","files":[{"path":"A.go","content":"x"},{"path":"a.go","content":"y"}]}`, "only in case"},
		// Folded as a case-insensitive file system folds (Unicode simple
		// case folding), not lower-cased: "ſ" (long s) is "s", the Kelvin
		// sign is "k", final "ς" is "σ"; "İ" lower-cases to "i" but folds
		// to nothing else.
		{"long s folds to s", `{"status":"completed","files":[{"path":"ſrc/a.go","content":"x"}],"deletes":["src/a.go"]}`, `"src/a.go" differs from "ſrc/a.go" only in case`},
		{"Kelvin sign folds to k", `{"status":"completed","edits":[{"path":"kit.go","old_string":"a","new_string":"b"}],"files":[{"path":"\u212ait.go","content":"y"}]}`, "only in case"},
		{"final sigma folds to sigma", `{"status":"completed","files":[{"path":"docs/σοφός.md","content":"x"},{"path":"docs/ΣΟΦΌΣ.md","content":"y"},{"path":"docs/σοφόσ.md","content":"z"}]}`, `files[1].path: "docs/ΣΟΦΌΣ.md" differs from "docs/σοφός.md" only in case`},
		{"dotted capital I is not i", `{"status":"completed","files":[{"path":"İ.txt","content":"x"},{"path":"i.txt","content":"y"}]}`, ""},
		{"empty path", `{"status":"completed","files":[{"path":"","content":"x"}]}`, "the path is empty"},
		{"backslash", `{"status":"completed","files":[{"path":"a\\b.go","content":"x"}]}`, "backslash"},
		{"not an object", `[1]`, "does not match the schema"},
		{"wrong type", `{"status":"completed","files":"a.go"}`, "does not match the schema"},
		{"several problems", `{"status":"completed","files":[{"path":"/a","content":"x"},{"path":"b/../c","content":"y"}]}`, `absolute path; files[1].path`},
	}
	for _, tc := range cases {
		agenttest.CheckAnswer(t, tc.name, CheckAnswer, tc.raw, tc.want)
	}
}

// FuzzCheckCodegenAnswer: whatever the model sends, an accepted answer
// only names safe, distinct paths with text content.
func FuzzCheckCodegenAnswer(f *testing.F) {
	f.Add([]byte(`{"status":"completed","files":[{"path":"a.go","content":"x"}],"deletes":["b.go"]}`))
	f.Add([]byte(`{"status":"completed","files":[{"path":"../a","content":"x"}]}`))
	f.Add([]byte(`{"status":"plan_unclear","questions":[{"id":"","text":"why?"}]}`))
	f.Add([]byte(`{"status":"completed","files":[{"path":".GIT/x","content":"\u0000"}]}`))
	f.Add([]byte(`{"status":"completed","files":[{"path":"a","content":"\ud800"}]}`))
	f.Add([]byte(`{"status":"completed","edits":[{"path":"a.go","old_string":"x","new_string":"y"},{"path":"a.go","old_string":"y","new_string":"z"}],"files":[{"path":"A.go","content":"x"}],"deletes":["./b.go"]}`))
	f.Add([]byte(`{"status":"completed","files":[{"path":"ſ.go","content":"x"}],"deletes":["S.go"]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		a, err := CheckAnswer(raw)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		edited := map[string]bool{}
		for _, e := range a.Edits {
			if artifact.CheckPath(e.Path) != nil || e.OldString == "" || e.OldString == e.NewString || strings.ContainsRune(e.NewString, 0) {
				t.Fatalf("accepted edit %+v", e)
			}
			edited[e.Path] = true
		}
		for _, fl := range a.Files {
			if artifact.CheckPath(fl.Path) != nil || seen[fl.Path] || edited[fl.Path] || strings.ContainsRune(fl.Content, 0) || len(fl.Content) > artifact.MaxCodeFileBytes || !utf8.ValidString(fl.Content) {
				t.Fatalf("accepted unsafe file %q", fl.Path)
			}
			seen[fl.Path] = true
		}
		for _, d := range a.Deletes {
			if artifact.CheckPath(d) != nil || seen[d] || edited[d] {
				t.Fatalf("accepted unsafe delete %q", d)
			}
			seen[d] = true
		}
		// Two paths differing only in case would be one file on a
		// case-insensitive file system.
		for p := range edited {
			seen[p] = true
		}
		for p := range seen {
			for q := range seen {
				if p != q && strings.EqualFold(p, q) {
					t.Fatalf("accepted %q and %q", p, q)
				}
			}
		}
	})
}

func TestDiffStat(t *testing.T) {
	patch := `diff --git a/calc.go b/calc.go
index 1111111..2222222 100644
--- a/calc.go
+++ b/calc.go
@@ -1,4 +1,4 @@
 package calc
-func Add(a, b int) int { return a - b }
+func Add(a, b int) int { return a + b }
+// --- not a header
diff --git a/old.txt b/old.txt
deleted file mode 100644
--- a/old.txt
+++ /dev/null
@@ -1,2 +0,0 @@
-one
-two
diff --git "a/sp ace\t.go" "b/sp ace\t.go"
new file mode 100644
--- /dev/null
+++ "b/sp ace\t.go"
@@ -0,0 +1 @@
+x
diff --git a/img.png b/img.png
new file mode 100644
GIT binary patch
literal 3
KcmZ>

literal 0
HcmV?d00001

`
	want := []FileStat{
		{Path: "calc.go", Added: 2, Removed: 1},
		{Path: "old.txt", Removed: 2},
		{Path: "sp ace\t.go", Added: 1},
		{Path: "img.png", Binary: true},
	}
	got := DiffStat([]byte(patch))
	if !equalStats(got, want) {
		t.Errorf("diffstat\n got %+v\nwant %+v", got, want)
	}
	if a, r := DiffTotals(got); a != 3 || r != 3 {
		t.Errorf("totals +%d -%d", a, r)
	}
}

// TestCodegenOnlyDeletes: a plan that only deletes gives a patch and no
// code/files, which `orch next` accepts.
func TestCodegenOnlyDeletes(t *testing.T) {
	f := agenttest.NewCodeEnv(t, map[string]string{"old/legacy.go": "package old\n"})
	// A new plan goes through planning again: codegen works from the plan
	// that entered codegen (README, "Evidence is bound to the change").
	f.Override(lifecycle.Planning)
	gittest.Write(t, f.Task.Dir, "planning/planning.ai.json", `{"id":"fix","title":"Drop legacy","brief":"remove old/","file_plan":[{"path":"old/legacy.go","intent":"delete"}]}`)
	f.Override(lifecycle.Codegen)
	rt := f.ScriptRuntime(agenttest.Entry{Role: "codegen", JSON: `{"status":"completed","files":[],"deletes":["old/legacy.go"]}`})
	res, err := phasetest.Run(context.Background(), f.O, f.ID, Worker{RT: rt})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Record.Files) != 0 || strings.Join(res.Record.Deletes, ",") != "old/legacy.go" || f.Exists("code/files") {
		t.Errorf("record %+v", res.Record)
	}
	agenttest.Git(t, f.Root, "apply", "--check", filepath.Join(f.Task.Dir, "code", "diff.patch"))
	if to := f.Next(); to != lifecycle.Review {
		t.Errorf("orch next → %s, want review", to)
	}
}

// TestCodegenPromptHasNoUntrackedOrSecretFiles: an untracked .env (and a
// tracked file whose name looks secret) never reaches the model, not even
// when it sits beside the planned file.
func TestCodegenPromptHasNoUntrackedOrSecretFiles(t *testing.T) {
	const untracked, tracked = "OPENAI_API_KEY=sk-untracked-0123456789", "password: tracked-secret-9876"
	f := agenttest.NewCodeEnv(t, map[string]string{"secrets.yml": tracked + "\n", "calc_extra.go": "package calc\n// extra neighbour\n"})
	gittest.Write(t, f.Root, ".env", untracked+"\n")
	gittest.Write(t, f.Root, "notes.txt", "calc untracked notes\n")
	api := agenttest.NewAnthropicAPI(t, func(int, map[string]any) any { return cgGoodAnswer() })
	if _, err := phasetest.Run(context.Background(), f.O, f.ID, Worker{RT: api.Runtime(f)}); err != nil {
		t.Fatal(err)
	}
	reqs := api.Requests()
	if len(reqs) == 0 {
		t.Fatal("no request")
	}
	data, _ := json.Marshal(reqs)
	for _, secret := range []string{untracked, "sk-untracked", tracked, "notes.txt", "secrets.yml", ".env"} {
		if strings.Contains(string(data), secret) {
			t.Errorf("the request carries %q", secret)
		}
	}
	if !strings.Contains(string(data), "extra neighbour") {
		t.Error("the tracked neighbour is missing: the test would pass for the wrong reason")
	}
}

// TestCodegenRefusesAnEditedPlan: codegen works from exactly the plan that
// entered codegen (README, "Evidence is bound to the change"); an edited plan is refused before
// any model call.
func TestCodegenRefusesAnEditedPlan(t *testing.T) {
	f := agenttest.NewCodeEnv(t, nil)
	gittest.Write(t, f.Task.Dir, "planning/planning.ai.json", strings.Replace(agenttest.CalcPlan, `"title":`, `"goals":["more"],"title":`, 1))
	rt := f.ScriptRuntime(agenttest.Entry{Role: "codegen", JSON: `{"status":"completed","files":[],"deletes":[]}`})
	_, err := phasetest.Run(context.Background(), f.O, f.ID, Worker{RT: rt})
	if !errors.Is(err, exit.ErrRefused) || !strings.Contains(err.Error(), "planning/planning.ai.json changed after the override planning → codegen gate") {
		t.Fatalf("got %v, want a refusal naming the edited plan", err)
	}
	if f.Exists("code/codegen.json") {
		t.Error("codegen ran on the edited plan")
	}
	if to := f.Next(); to != lifecycle.PlanReview {
		t.Errorf("orch next → %s, want plan_review", to)
	}
}
