package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/agent/tools"
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/gitx"
	"github.com/orchdev/orch/internal/nextstep"
	"github.com/orchdev/orch/internal/task"
	"github.com/orchdev/orch/internal/visibility"
)

// codegenFixture brings task t1 (file plan: main.go) to codegen: the plan
// written over MCP, next to plan_review, then the override gate to
// codegen (no model reviews the plan here).
func codegenFixture(t *testing.T) (*fixture, string) {
	t.Helper()
	return codegenFixtureWith(t, "")
}

// codegenFixtureWith is codegenFixture with more configuration.
func codegenFixtureWith(t *testing.T, config string) (*fixture, string) {
	t.Helper()
	f := newFixture(t, "[mcp]\nallow = [\"override\"]\n"+config)
	f.call(ToolNewTask, map[string]any{"brief": "add a flag", "id": "t1"})
	f.call(ToolWriteArtifact, map[string]any{"task": "t1", "path": artifact.PlanFile, "content": validPlan})
	// Outside codegen, code is refused and nothing is written.
	msg := f.refused(ToolSubmitCode, map[string]any{"task": "t1", "files": []map[string]any{{"path": "main.go", "content": "package main\n"}}})
	if !strings.Contains(msg, "task t1 is in planning, not codegen") {
		t.Errorf("submit_code in planning: %s", msg)
	}
	f.call(ToolNext, map[string]any{"task": "t1", "from": "planning"})
	f.call(ToolOverride, map[string]any{"task": "t1", "reason": "plan reviewed on paper", "to": "codegen"})
	tk, err := f.project.Open("t1")
	if err != nil {
		t.Fatal(err)
	}
	return f, tk.Dir
}

// codeArea lists the files of the task's code/ folder.
func codeArea(t *testing.T, taskDir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(filepath.Join(taskDir, "code"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(taskDir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out
}

func TestSubmitCode(t *testing.T) {
	f, dir := codegenFixture(t)
	repo, err := gitx.Open(context.Background(), f.dir)
	if err != nil {
		t.Fatal(err)
	}
	head, err := repo.Head(context.Background())
	if err != nil {
		t.Fatal(err)
	}

	// A path outside the reviewed file plan: refused, the plan named,
	// nothing written, no phase run.
	msg := f.refused(ToolSubmitCode, map[string]any{"task": "t1", "files": []map[string]any{{"path": "flag.go", "content": "package main\n"}}})
	for _, want := range []string{"flag.go is outside the reviewed file plan; you may change only: main.go", "nothing written"} {
		if !strings.Contains(msg, want) {
			t.Errorf("out-of-plan submission: %q lacks %q", msg, want)
		}
	}

	// An edit whose old_string is not in the file: codegen's own message.
	edit := map[string]any{"path": "main.go", "old_string": "func main() { }", "new_string": "func main() { println(1) }"}
	msg = f.refused(ToolSubmitCode, map[string]any{"task": "t1", "edits": []map[string]any{edit}})
	plan := artifact.LoadPlan(dir)
	fp := artifact.LoadFilePlan(dir, plan)
	policy, _ := visibility.NewPolicy(nil)
	ws, err := tools.NewWritable(repo, head, policy, tools.Options{Plan: fp.Value})
	if err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(edit)
	want, isErr, err := ws.Call(context.Background(), tools.EditFile, args)
	ws.Close()
	if err != nil || !isErr || !strings.Contains(want, "old_string was not found in main.go") {
		t.Fatalf("the workspace's own answer to the edit: %q %v %v", want, isErr, err)
	}
	if !strings.Contains(msg, "edits[0]: "+want) {
		t.Errorf("edit not found: %q\nwant codegen's message %q", msg, "edits[0]: "+want)
	}
	if files := codeArea(t, dir); len(files) != 0 {
		t.Errorf("refused submissions wrote %v", files)
	}
	if n := len(f.events("t1", "phase_started")); n != 0 {
		t.Errorf("refused submissions started %d phases", n)
	}

	// A valid submission: staged and recorded like codegen's answer.
	edit["old_string"] = "func main() {}"
	out := f.call(ToolSubmitCode, map[string]any{"task": "t1", "edits": []map[string]any{edit}, "notes": "prints 1"})
	if out["status"] != "completed" || out["base"] != head || out["attempt"] != float64(1) || !slices.Equal(anyStrings(out["files"]), []string{"main.go"}) {
		t.Errorf("submit_code: %v", out)
	}
	if n := out["next"].(map[string]any); n["tool"] != ToolNext {
		t.Errorf("after the submission, next: %v", n)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "code", "files", "main.go"))
	if string(got) != "package main\n\nfunc main() { println(1) }\n" {
		t.Errorf("code/files/main.go:\n%s", got)
	}
	patch, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(artifact.DiffFile)))
	if !strings.Contains(string(patch), "+func main() { println(1) }") || !strings.Contains(string(patch), "-func main() {}") {
		t.Errorf("diff.patch:\n%s", patch)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(artifact.CodegenFile)))
	cg, err := artifact.DecodeCodegen(artifact.CodegenFile, raw)
	if err != nil {
		t.Fatalf("codegen.json: %v", err)
	}
	var rec map[string]any
	json.Unmarshal(raw, &rec)
	if cg.Status != "completed" || rec["base"] != head || rec["attempt"] != float64(1) || rec["notes"] != "prints 1" {
		t.Errorf("codegen.json: %s", raw)
	}
	if st, fin := f.events("t1", "phase_started"), f.events("t1", "phase_finished"); len(st) != 1 || len(fin) != 1 || fin[0].Data["phase"] != "codegen" || fin[0].Data["status"] != "completed" {
		t.Errorf("phase events: %v %v", st, fin)
	}
	if mc := f.events("t1", "model_call"); len(mc) != 0 {
		t.Errorf("model_call events: %v", mc)
	}
	var calls []string
	for _, ev := range f.events("t1", "mcp_call") {
		if ev.Data["tool"] == ToolSubmitCode {
			calls = append(calls, str(ev.Data["outcome"]))
			if ev.Data["client"] != "test-host 1.0" {
				t.Errorf("mcp_call client: %v", ev.Data)
			}
		}
	}
	if !slices.Equal(calls, []string{"refused", "refused", "refused", "ok"}) {
		t.Errorf("submit_code mcp_call outcomes: %v", calls)
	}
	// next moves on to review.
	n := f.call(ToolNext, map[string]any{"task": "t1", "from": "codegen"})
	if n["to"] != "review" {
		t.Errorf("next after the submission: %v", n)
	}
	// In review, code is not submitted any more.
	if msg := f.refused(ToolSubmitCode, map[string]any{"task": "t1", "edits": []map[string]any{edit}}); !strings.Contains(msg, "is in review, not codegen") {
		t.Errorf("submit_code in review: %s", msg)
	}
}

func anyStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, str(x))
	}
	return out
}

// TestNextOffersSubmitCode: in codegen the step is orch's codegen model
// (run_phase codegen) or the host's own agent (submit_code); elsewhere
// there is no alternative.
func TestNextOffersSubmitCode(t *testing.T) {
	s := &Server{}
	for _, tc := range []struct {
		name, args, wantTool, wantPhase string
		wantOr                          []string
	}{
		{"codegen", "codegen", ToolRunPhase, "codegen", []string{ToolSubmitCode}},
		{"planning", "plan", ToolRunPhase, "planning", nil},
		{"plan review", "review plan", ToolRunPhase, "plan_review", nil},
		{"review", "review code", ToolRunPhase, "review", nil},
		{"test", "test", ToolRunPhase, "test", nil},
		{"edge holds", "next", ToolNext, "", nil},
		{"a codegen run is live", "", "", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := s.nextOf("t1", nextstep.Step{Args: tc.args, Why: "because"})
			var or []string
			for _, a := range n.Or {
				or = append(or, a.Tool)
				if a.Arguments["task"] != "t1" || a.Arguments["edits"] == "" || a.Why == "" {
					t.Errorf("alternative %+v", a)
				}
			}
			if n.Tool != tc.wantTool || n.Arguments["phase"] != tc.wantPhase || !slices.Equal(or, tc.wantOr) {
				t.Errorf("next %+v, want tool %q phase %q or %v", n, tc.wantTool, tc.wantPhase, tc.wantOr)
			}
			if offers := strings.Contains(n.Why, ToolSubmitCode); offers != (tc.wantOr != nil) {
				t.Errorf("why %q: names submit_code %v, want %v", n.Why, offers, tc.wantOr != nil)
			}
		})
	}

	// Through the tools: status and a refusal's next line offer both.
	f, _ := codegenFixture(t)
	n := f.call(ToolStatus, map[string]any{"task": "t1"})["next"].(map[string]any)
	or, _ := n["or"].([]any)
	if n["tool"] != ToolRunPhase || n["arguments"].(map[string]any)["phase"] != "codegen" || len(or) != 1 || or[0].(map[string]any)["tool"] != ToolSubmitCode {
		t.Errorf("status in codegen, next: %v", n)
	}
	msg := f.refused(ToolSubmitCode, map[string]any{"task": "t1", "files": []map[string]any{{"path": "flag.go", "content": "package main\n"}}})
	if !strings.Contains(msg, "\nnext: call run_phase (`orch codegen --task t1`)") || !strings.Contains(msg, "\nor: call submit_code: write the change with your own agent") {
		t.Errorf("refusal in codegen: %s", msg)
	}
}

// snapshot maps every file below dir (but .git, the transcript, the lock
// files and the readers' observation cache, which any reader may refresh
// as git refreshes its index: docs/artifacts.md) to its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if rel, _ := filepath.Rel(dir, p); d.IsDir() && filepath.ToSlash(rel) == ".orch/cache/observed" {
			return filepath.SkipDir
		}
		if d.IsDir() || d.Name() == task.TranscriptFile || d.Name() == task.LockFile || d.Name() == ".lock" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// assertRefusedSubmit calls submit_code with a valid change and checks the
// refusal: its text, exit code, that nothing changed on disk and that it
// is the last mcp_call event, outcome refused.
func assertRefusedSubmit(t *testing.T, f *fixture, want string, code int) {
	t.Helper()
	before := snapshot(t, f.dir)
	edit := map[string]any{"path": "main.go", "old_string": "func main() {}", "new_string": "func main() { println(1) }"}
	msg := f.refused(ToolSubmitCode, map[string]any{"task": "t1", "edits": []map[string]any{edit}})
	for _, w := range []string{want, fmt.Sprintf("(exit code %d, as the orch command would exit)", code)} {
		if !strings.Contains(msg, w) {
			t.Errorf("refusal %q lacks %q", msg, w)
		}
	}
	after := snapshot(t, f.dir)
	for p, b := range after {
		if before[p] != b {
			t.Errorf("the refused submission changed %s", p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			t.Errorf("the refused submission removed %s", p)
		}
	}
	calls := f.events("t1", "mcp_call")
	last := calls[len(calls)-1].Data
	if last["tool"] != ToolSubmitCode || last["outcome"] != "refused" || !strings.Contains(str(last["error"]), want) {
		t.Errorf("mcp_call of the refusal: %v", last)
	}
}

// TestSubmitCodePlanChanged: the plan edited after plan review is refused
// (exit 3) and nothing is written.
func TestSubmitCodePlanChanged(t *testing.T) {
	f, dir := codegenFixture(t)
	edited := strings.Replace(validPlan, "Add a flag", "Add a long flag", 1)
	if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(artifact.PlanFile)), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	assertRefusedSubmit(t, f, "orch: codegen works from the reviewed plan: planning/planning.ai.json changed after the override plan_review → codegen gate", 3)
	if files := codeArea(t, dir); len(files) != 0 {
		t.Errorf("the refused submission wrote %v", files)
	}
}
