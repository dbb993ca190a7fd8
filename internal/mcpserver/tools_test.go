package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/view"
)

// validPlan is a plan `orch next` accepts out of planning.
const validPlan = `{"id": "t1", "title": "Add a flag", "brief": "add a flag",
 "file_plan": [{"path": "main.go", "intent": "update", "summary": "the flag"}],
 "questions": [{"id": "q1", "text": "Long or short flag?", "blocking": false, "answer": null}]}`

func TestToolsOfferedFollowTheGates(t *testing.T) {
	base := []string{ToolAnswer, ToolCost, ToolListTasks, ToolLog, ToolNewTask, ToolNext, ToolReadArtifact, ToolRunPhase, ToolStatus, ToolSubmitCode, ToolWriteArtifact}
	for _, tc := range []struct {
		name, config string
		extra        []string
	}{
		{"default: no human gate", "", nil},
		{"accept allowed", "[mcp]\nallow = [\"accept\"]\n", []string{ToolAccept}},
		{"every gate", "[mcp]\nallow = [\"accept\", \"revert\", \"override\", \"redo\"]\n", []string{ToolAccept, ToolOverride, ToolRedo, ToolRevert}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.config)
			want := slices.Sorted(slices.Values(append(slices.Clone(base), tc.extra...)))
			got := f.toolNames()
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("tools %v, want %v", got, want)
			}
		})
	}
}

func TestReadOnlyTools(t *testing.T) {
	f := newFixture(t, "")
	// No task yet: the next step is to create one.
	out := f.call(ToolListTasks, nil)
	if n := out["next"].(map[string]any); n["tool"] != ToolNewTask {
		t.Errorf("list_tasks without tasks: next %v", n)
	}
	created := f.call(ToolNewTask, map[string]any{"brief": "add a --verbose flag", "id": "t1"})
	if created["task"] != "t1" || created["phase"] != "planning" {
		t.Fatalf("new_task: %v", created)
	}
	out = f.call(ToolListTasks, nil)
	tasks := out["tasks"].([]any)
	if len(tasks) != 1 || tasks[0].(map[string]any)["id"] != "t1" || tasks[0].(map[string]any)["current"] != true {
		t.Errorf("list_tasks: %v", out)
	}
	// list_tasks' tasks are orch list --json's (view.List): the title and
	// what the task waits for included.
	entries, err := view.List(f.srv.orchestrator())
	if err != nil {
		t.Fatal(err)
	}
	var wantTasks any
	json.Unmarshal([]byte(mustJSON(t, entries)), &wantTasks)
	if gb, wb := mustJSON(t, out["tasks"]), mustJSON(t, wantTasks); gb != wb {
		t.Errorf("list_tasks' tasks:\n%s\nwant (orch list --json):\n%s", gb, wb)
	}
	if task := tasks[0].(map[string]any); task["title"] != "add a --verbose flag" || task["waits"] != "waits for the planner" {
		t.Errorf("list_tasks: title %q, waits %q; want the brief's first line and the planner", task["title"], task["waits"])
	}

	// status is orch status --json (view.StatusOf) plus next.
	st := f.call(ToolStatus, map[string]any{"task": "t1"})
	next := st["next"].(map[string]any)
	delete(st, "next")
	want, _, err := view.StatusOf(f.srv.orchestrator(), "t1")
	if err != nil {
		t.Fatal(err)
	}
	var wantMap map[string]any
	b, _ := json.Marshal(want)
	json.Unmarshal(b, &wantMap)
	gb, _ := json.Marshal(st)
	if string(gb) != mustJSON(t, wantMap) {
		t.Errorf("status:\n%s\nwant (orch status --json):\n%s", gb, mustJSON(t, wantMap))
	}
	if next["tool"] != ToolRunPhase || next["command"] != "orch plan --task t1" || next["arguments"].(map[string]any)["phase"] != "planning" {
		t.Errorf("status next: %v", next)
	}

	// log: the created event, then new_task's mcp_call naming the client.
	lg := f.call(ToolLog, map[string]any{"task": "t1"})
	evs := lg["events"].([]any)
	if len(evs) != 2 || evs[0].(map[string]any)["kind"] != "created" || evs[1].(map[string]any)["kind"] != "mcp_call" ||
		evs[1].(map[string]any)["client"] != "test-host 1.0" || evs[1].(map[string]any)["tool"] != ToolNewTask {
		t.Errorf("log: %v", evs)
	}
	if lg := f.call(ToolLog, map[string]any{"task": "t1", "since": 1}); len(lg["events"].([]any)) != 1 || lg["total"] != float64(2) {
		t.Errorf("log since 1: %v", lg)
	}
	if lg := f.call(ToolLog, map[string]any{"task": "t1", "limit": 1}); lg["events"].([]any)[0].(map[string]any)["seq"] != float64(2) {
		t.Errorf("log limit 1 keeps the newest: %v", lg)
	}

	// cost: nothing spent yet.
	c := f.call(ToolCost, map[string]any{"task": "t1"})
	if c["task"] != "t1" || c["prices_as_of"] == "" || c["total"].(map[string]any)["calls"] != float64(0) {
		t.Errorf("cost: %v", c)
	}
	if c := f.call(ToolCost, map[string]any{"all": true}); len(c["tasks"].([]any)) != 1 {
		t.Errorf("cost all: %v", c)
	}

	// read_artifact: the brief, whole and paged.
	r := f.call(ToolReadArtifact, map[string]any{"task": "t1", "path": "planning/brief.md"})
	if !strings.Contains(str(r["text"]), "add a --verbose flag") || r["uri"] != "orch://task/t1/planning/brief.md" || r["truncated"] != false {
		t.Errorf("read_artifact: %v", r)
	}
	if r := f.call(ToolReadArtifact, map[string]any{"task": "t1", "path": "planning/brief.md", "offset": 4, "limit": 3}); r["text"] != "a -" || r["truncated"] != true {
		t.Errorf("read_artifact paged: %v", r)
	}
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRefusals: every refusal names what is wrong, says what to do next,
// changes nothing, and (for tools that act) is logged with its outcome.
func TestRefusals(t *testing.T) {
	f := newFixture(t, "")
	f.call(ToolNewTask, map[string]any{"brief": "add a flag", "id": "t1"})
	tk, _ := f.project.Open("t1")
	outside := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(outside, []byte("secret"), 0o644)
	if err := os.Symlink(outside, filepath.Join(tk.Dir, "planning", "link.md")); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(tk.Dir, "state.json"))
	for _, tc := range []struct {
		name string
		tool string
		args map[string]any
		want []string
	}{
		{"blank brief", ToolNewTask, map[string]any{"brief": "  "}, []string{"the brief is blank", "exit code 2"}},
		{"bad id", ToolStatus, map[string]any{"task": "../x"}, []string{"exit code 2"}},
		{"unknown task", ToolStatus, map[string]any{"task": "nope"}, []string{"nope", "next: call list_tasks (`orch list`)"}},
		{"unknown task, acting", ToolNext, map[string]any{"task": "nope"}, []string{"nope", "exit code 2", "next: call list_tasks"}},
		{"nothing holds", ToolNext, map[string]any{"task": "t1"}, []string{"planning/planning.ai.json is missing", "exit code 3", "next: call run_phase (`orch plan --task t1`)"}},
		{"from mismatch", ToolNext, map[string]any{"task": "t1", "from": "review"}, []string{"not review", "exit code 3"}},
		{"bad phase", ToolNext, map[string]any{"task": "t1", "to": "shipping"}, []string{"/properties/to: enum: shipping does not equal any of: [planning plan_review codegen review test accept revert done]"}},
		{"state.json", ToolReadArtifact, map[string]any{"task": "t1", "path": "state.json"}, []string{"not a file under planning/"}},
		{"transcript", ToolReadArtifact, map[string]any{"task": "t1", "path": "transcript.jsonl"}, []string{"not a file under"}},
		{"escape", ToolReadArtifact, map[string]any{"task": "t1", "path": "planning/../../../x"}, []string{`".."`}},
		{"symlink out", ToolReadArtifact, map[string]any{"task": "t1", "path": "planning/link.md"}, []string{"expected a regular file"}},
		{"missing", ToolReadArtifact, map[string]any{"task": "t1", "path": "review/code-review.json"},
			[]string{"orch: task t1 has no review/code-review.json yet\n`orch review code` writes it (run_phase review)", "exit code 4"}},
		{"write state.json", ToolWriteArtifact, map[string]any{"task": "t1", "path": "state.json", "content": "{}"}, []string{"orch's own", "exit code 2"}},
		{"write transcript", ToolWriteArtifact, map[string]any{"task": "t1", "path": "transcript.jsonl", "content": "{}"}, []string{"exit code 2"}},
		{"write a review", ToolWriteArtifact, map[string]any{"task": "t1", "path": artifact.CodeReviewFile, "content": `{"ok": true, "issues": []}`}, []string{"come from run_phase"}},
		{"write a decision", ToolWriteArtifact, map[string]any{"task": "t1", "path": artifact.DecisionFile, "content": `{}`}, []string{"human gates"}},
		{"invalid plan", ToolWriteArtifact, map[string]any{"task": "t1", "path": artifact.PlanFile, "content": `{"id": "t1", "title": ""}`},
			[]string{"planning/planning.ai.json: $.title: expected", "nothing written", "exit code 4"}},
		{"not JSON", ToolWriteArtifact, map[string]any{"task": "t1", "path": artifact.PlanFile, "content": `{"id": "t1",`}, []string{"planning/planning.ai.json", "exit code 4"}},
		{"duplicate key", ToolWriteArtifact, map[string]any{"task": "t1", "path": artifact.PlanFile, "content": `{"id": "a", "id": "b", "title": "x", "brief": "y"}`}, []string{"exit code 4"}},
		{"unsafe file plan", ToolWriteArtifact, map[string]any{"task": "t1", "path": artifact.FilePlanFile, "content": `{"files": [{"path": ".git/config", "intent": "update"}]}`}, []string{"planning/plan.files.json", "exit code 4"}},
		{"unknown question", ToolAnswer, map[string]any{"task": "t1", "question": "q9", "text": "yes"}, []string{"no plan yet", "exit code 3"}},
		{"blank answer", ToolAnswer, map[string]any{"task": "t1", "question": "q1", "text": " "}, []string{"blank", "exit code 2"}},
		{"run accept", ToolRunPhase, map[string]any{"task": "t1", "phase": "accept"}, []string{"/properties/phase: enum: accept does not equal any of: [planning plan_review codegen review test]"}},
		{"run nonsense", ToolRunPhase, map[string]any{"task": "t1", "phase": "deploy"}, []string{"/properties/phase: enum: deploy"}},
		{"unknown argument", ToolStatus, map[string]any{"task": "t1", "force": true}, []string{"force"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := f.refused(tc.tool, tc.args)
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("refusal %q lacks %q", msg, w)
				}
			}
		})
	}
	after, _ := os.ReadFile(filepath.Join(tk.Dir, "state.json"))
	if string(before) != string(after) {
		t.Errorf("state.json changed:\n%s\n%s", before, after)
	}
	for _, p := range []string{artifact.PlanFile, artifact.FilePlanFile, artifact.CodeReviewFile, artifact.DecisionFile} {
		if _, err := os.Lstat(filepath.Join(tk.Dir, p)); err == nil {
			t.Errorf("%s was written", p)
		}
	}
	// The refusal of an invalid plan is the message orch next gives for
	// the same file.
	bad := `{"id": "t1", "title": "x", "brief": "y", "questions": [{"id": "q1", "text": "?", "blocking": "yes"}]}`
	scratch := t.TempDir()
	os.MkdirAll(filepath.Join(scratch, "planning"), 0o755)
	os.WriteFile(filepath.Join(scratch, artifact.PlanFile), []byte(bad), 0o644)
	want := artifact.LoadPlan(scratch).Err
	if want == nil {
		t.Fatal("the bad plan loads")
	}
	if msg := f.refused(ToolWriteArtifact, map[string]any{"task": "t1", "path": artifact.PlanFile, "content": bad}); !strings.HasPrefix(msg, "orch: "+want.Error()+": nothing written") {
		t.Errorf("refusal %q, want orch next's message %q", msg, want)
	}
	// The gates are not offered: calling one is an error of the protocol.
	if _, err := f.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: ToolAccept, Arguments: map[string]any{"verdict": "accepted", "reasons": []string{"lgtm"}}}); err == nil || !strings.Contains(err.Error(), "accept") {
		t.Errorf("accept without [mcp] allow: %v", err)
	}
	// The refused actions on t1 are logged with their outcome.
	var refusedWrites int
	for _, ev := range f.events("t1", "mcp_call") {
		if ev.Data["tool"] == ToolWriteArtifact {
			if ev.Data["outcome"] != "refused" || ev.Data["client"] != "test-host 1.0" || str(ev.Data["error"]) == "" {
				t.Errorf("mcp_call: %v", ev.Data)
			}
			refusedWrites++
		}
	}
	if refusedWrites != 9 {
		t.Errorf("%d refused writes logged, want 9", refusedWrites)
	}
}

// TestWriteAnswerNext: the plan written through MCP is the one orch next
// judges; the answer is recorded like orch answer's; next takes the edge.
func TestWriteAnswerNext(t *testing.T) {
	f := newFixture(t, "")
	f.call(ToolNewTask, map[string]any{"brief": "add a flag", "id": "t1"})
	blocking := strings.Replace(validPlan, `"blocking": false`, `"blocking": true`, 1)
	w := f.call(ToolWriteArtifact, map[string]any{"task": "t1", "path": artifact.PlanFile, "content": blocking})
	if n := w["next"].(map[string]any); n["tool"] != ToolAnswer || n["arguments"].(map[string]any)["question"] != "q1" {
		t.Errorf("after a plan with an open question, next: %v", n)
	}
	tk, _ := f.project.Open("t1")
	if got, _ := os.ReadFile(filepath.Join(tk.Dir, artifact.PlanFile)); string(got) != blocking {
		t.Errorf("plan on disk:\n%s", got)
	}
	a := f.call(ToolAnswer, map[string]any{"task": "t1", "question": "q1", "text": "long: --verbose"})
	if len(a["open_questions"].([]any)) != 0 || a["answer"] != "long: --verbose" {
		t.Errorf("answer: %v", a)
	}
	if ui := f.events("t1", "user_input"); len(ui) != 1 || ui[0].Data["answer"] != "long: --verbose" {
		t.Errorf("user_input events: %v", ui)
	}
	if n := a["next"].(map[string]any); n["tool"] != ToolNext {
		t.Errorf("after the answer, next: %v", n)
	}
	md := f.call(ToolWriteArtifact, map[string]any{"task": "t1", "path": artifact.PlanMarkdownFile, "content": "# Add a flag\n"})
	if md["bytes"] != float64(13) {
		t.Errorf("plan.md: %v", md)
	}
	n := f.call(ToolNext, map[string]any{"task": "t1", "from": "planning"})
	if n["from"] != "planning" || n["to"] != "plan_review" {
		t.Fatalf("next: %v", n)
	}
	if nx := n["next"].(map[string]any); nx["tool"] != ToolRunPhase || nx["arguments"].(map[string]any)["phase"] != "plan_review" {
		t.Errorf("next's next: %v", nx)
	}
	// Out of planning the plan is not written any more.
	msg := f.refused(ToolWriteArtifact, map[string]any{"task": "t1", "path": artifact.PlanFile, "content": validPlan})
	if !strings.Contains(msg, "is in plan_review, not planning") {
		t.Errorf("write in plan_review: %s", msg)
	}
	// A retry of the same next is refused (from mismatch), nothing moves.
	if msg := f.refused(ToolNext, map[string]any{"task": "t1", "from": "planning"}); !strings.Contains(msg, "not planning") {
		t.Errorf("retried next: %s", msg)
	}
	var tools []string
	for _, ev := range f.events("t1", "mcp_call") {
		tools = append(tools, str(ev.Data["tool"])+":"+str(ev.Data["outcome"]))
	}
	want := []string{"new_task:ok", "write_artifact:ok", "answer:ok", "write_artifact:ok", "next:ok", "write_artifact:refused", "next:refused"}
	if !slices.Equal(tools, want) {
		t.Errorf("mcp_call events %v, want %v", tools, want)
	}
	if tr := f.events("t1", "transition"); len(tr) != 1 {
		t.Errorf("transitions: %d", len(tr))
	}
}

func TestGatesWhenAllowed(t *testing.T) {
	f := newFixture(t, "[mcp]\nallow = [\"override\", \"redo\"]\n")
	f.call(ToolNewTask, map[string]any{"brief": "add a flag", "id": "t1"})
	if msg := f.refused(ToolOverride, map[string]any{"task": "t1", "reason": " "}); !strings.Contains(msg, "non-blank reason") {
		t.Errorf("blank override: %s", msg)
	}
	o := f.call(ToolOverride, map[string]any{"task": "t1", "reason": "plan reviewed on paper", "to": "codegen"})
	if o["to"] != "codegen" || o["override"] != true {
		t.Fatalf("override: %v", o)
	}
	if ov := f.events("t1", "override"); len(ov) != 1 || ov[0].Data["reason"] != "plan reviewed on paper" {
		t.Errorf("override events: %v", ov)
	}
	r := f.call(ToolRedo, map[string]any{"task": "t1", "phase": "planning", "reason": "start over"})
	if r["to"] != "planning" {
		t.Errorf("redo: %v", r)
	}
	// A gate removed from the configuration while serving is refused.
	os.WriteFile(filepath.Join(f.project.Dir, "config.toml"), []byte("[mcp]\nallow = [\"redo\"]\n"), 0o644)
	if msg := f.refused(ToolOverride, map[string]any{"task": "t1", "reason": "again"}); !strings.Contains(msg, "[mcp] allow does not name it") {
		t.Errorf("override after removal: %s", msg)
	}
	calls := f.events("t1", "mcp_call")
	if last := calls[len(calls)-1]; last.Data["tool"] != ToolOverride || last.Data["outcome"] != "refused" {
		t.Errorf("the refused override is not logged: %v", last.Data)
	}
	if ov := f.events("t1", "override"); len(ov) != 1 {
		t.Errorf("override events: %d", len(ov))
	}
}

// TestOptPhase: the optional phase arguments of next, override and redo.
func TestOptPhase(t *testing.T) {
	for _, tc := range []struct {
		arg, v, want, err string
	}{
		{"to", "", "", ""},
		{"to", "review", "review", ""},
		{"from", "plan_review", "plan_review", ""},
		{"phase", "nonsense", "", "orch: phase: "},
		{"to", "Review ", "review", ""},
		{"to", "accepted", "", "orch: to: "},
	} {
		p, err := optPhase(tc.arg, tc.v)
		if string(p) != tc.want || (err == nil) != (tc.err == "") || (err != nil && (!strings.HasPrefix(exit.Format(err), tc.err) || exit.Of(err) != exit.Usage)) {
			t.Errorf("optPhase(%q, %q) = %q, %v; want %q, error %q (exit 2)", tc.arg, tc.v, p, err, tc.want, tc.err)
		}
	}
	f := newFixture(t, "")
	f.call(ToolNewTask, map[string]any{"brief": "add a flag", "id": "t1"})
	// Through the tool, the schema's enum refuses a bad phase first.
	if msg := f.refused(ToolNext, map[string]any{"task": "t1", "from": "nowhere"}); !strings.Contains(msg, "/properties/from: enum: nowhere does not equal any of") {
		t.Errorf("next with a bad from: %s", msg)
	}
}

// TestToolSchemasAndHints: every tool has an output schema (an object with
// next), its hints say truthfully whether it only reads, and the
// arguments that name a phase, a verdict or a target list their values,
// taken from the lifecycle and the decision's decoder.
func TestToolSchemasAndHints(t *testing.T) {
	f := newFixture(t, "[mcp]\nallow = [\"accept\", \"revert\", \"override\", \"redo\"]\n")
	type want struct{ readOnly, idempotent, destructive, openWorld bool }
	hintsOf := map[string]want{
		ToolListTasks:     {readOnly: true, idempotent: true},
		ToolStatus:        {readOnly: true, idempotent: true},
		ToolLog:           {readOnly: true, idempotent: true},
		ToolReadArtifact:  {readOnly: true, idempotent: true},
		ToolCost:          {readOnly: true, idempotent: true},
		ToolNewTask:       {},
		ToolNext:          {},
		ToolWriteArtifact: {idempotent: true, destructive: true},
		ToolAnswer:        {destructive: true},
		ToolRunPhase:      {openWorld: true},
		ToolSubmitCode:    {},
		ToolAccept:        {destructive: true},
		ToolRevert:        {destructive: true},
		ToolOverride:      {destructive: true},
		ToolRedo:          {destructive: true},
	}
	phases := []any{"planning", "plan_review", "codegen", "review", "test", "accept", "revert", "done"}
	enums := map[string]map[string][]any{
		ToolNext:     {"to": phases, "from": phases},
		ToolOverride: {"to": phases},
		ToolRedo:     {"phase": phases},
		ToolRunPhase: {"phase": {"planning", "plan_review", "codegen", "review", "test"}},
		ToolAccept:   {"verdict": {"accepted", "changes_requested", "rejected", "revert"}, "target": {"codegen", "review", "planning"}},
	}
	seen := 0
	for tool, err := range f.cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		seen++
		w, ok := hintsOf[tool.Name]
		if !ok {
			t.Errorf("tool %s is not in this test's table", tool.Name)
			continue
		}
		a := tool.Annotations
		got := want{readOnly: a.ReadOnlyHint, idempotent: a.IdempotentHint,
			destructive: a.DestructiveHint != nil && *a.DestructiveHint, openWorld: a.OpenWorldHint != nil && *a.OpenWorldHint}
		if got != w || a.OpenWorldHint == nil || (!a.ReadOnlyHint && a.DestructiveHint == nil) {
			t.Errorf("%s: hints %+v, want %+v", tool.Name, got, w)
		}
		var out struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		b, _ := json.Marshal(tool.OutputSchema)
		if err := json.Unmarshal(b, &out); err != nil || out.Type != "object" || out.Properties["next"] == nil || !slices.Contains(out.Required, "next") {
			t.Errorf("%s: output schema %s, want an object that requires next", tool.Name, b)
		}
		var in struct {
			Properties map[string]struct {
				Enum []any `json:"enum"`
			} `json:"properties"`
		}
		b, _ = json.Marshal(tool.InputSchema)
		json.Unmarshal(b, &in)
		for prop, p := range in.Properties {
			wantEnum := enums[tool.Name][prop]
			if !slices.Equal(p.Enum, wantEnum) {
				t.Errorf("%s: %s's enum %v, want %v", tool.Name, prop, p.Enum, wantEnum)
			}
		}
	}
	if seen != len(hintsOf) {
		t.Errorf("%d tools listed, want %d", seen, len(hintsOf))
	}
	// list_tasks' output schema describes a task's title and what it
	// waits for, as orch list --json prints them.
	for tool, err := range f.cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		if tool.Name != ToolListTasks {
			continue
		}
		var out struct {
			Properties struct {
				Tasks struct {
					Items struct {
						Properties map[string]struct {
							Type        string `json:"type"`
							Description string `json:"description"`
						} `json:"properties"`
					} `json:"items"`
				} `json:"tasks"`
			} `json:"properties"`
		}
		b, _ := json.Marshal(tool.OutputSchema)
		json.Unmarshal(b, &out)
		props := out.Properties.Tasks.Items.Properties
		for _, name := range []string{"id", "phase", "revision", "updated_at", "current", "title", "waits", "error", "state_disagrees"} {
			if p, ok := props[name]; !ok || (name == "title" || name == "waits") && (p.Type != "string" || p.Description == "") {
				t.Errorf("list_tasks' output schema: tasks[].%s is %+v (present %v), want it described", name, p, ok)
			}
		}
	}
	// A result names a phase among the enum too: status' output schema.
	f.call(ToolNewTask, map[string]any{"brief": "add a flag", "id": "t1"})
	if st := f.call(ToolStatus, map[string]any{"task": "t1"}); st["phase"] != "planning" || st["suggested"] != nil {
		t.Errorf("status: %v", st)
	}
}
