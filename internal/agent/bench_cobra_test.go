package agent_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/agent/agenttest"
	"github.com/orchdev/orch/internal/agent/codegen"
	"github.com/orchdev/orch/internal/agent/planner"
	"github.com/orchdev/orch/internal/agent/review"
	"github.com/orchdev/orch/internal/agent/tools"
	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/docblock"
	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/llm"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/phasetest"
	"github.com/orchdev/orch/internal/repomap"
	"github.com/orchdev/orch/internal/task"
)

// The cobra change of issue 10, end to end against a scripted model on the
// real spf13/cobra source (the module cache holds it: orch depends on
// cobra): the one-line change of command.go:786
// (c.SuggestionsMinimumDistance = 2 → 3) through planning, the plan
// review, codegen and the code review. Tokens are counted on what orch
// sends and what the model answers (four bytes a token,
// repomap.EstimateTokens), per phase:
//
//   - whole-file: a single answer per role, codegen returning the whole
//     file (what orch asked for before edits existed);
//   - edits: a single answer per role, codegen returning one edit;
//   - tools: the tool loop (each role reads what it needs; codegen
//     searches, reads 30 lines, edits, finishes).
//
// go test -run '^$' -bench CobraChange ./internal/agent prints the figures
// (metrics per phase) that the README quotes.

const cobraTarget = 786

// cobraSource returns the folder of the cobra module orch depends on, in
// the module cache.
func cobraSource(tb testing.TB) string {
	tb.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/spf13/cobra").Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		tb.Fatalf("find spf13/cobra in the module cache (go list -m): %v", err)
	}
	return dir
}

// cobraFiles reads every file of the cobra module.
func cobraFiles(tb testing.TB) map[string]string {
	tb.Helper()
	dir := cobraSource(tb)
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		files[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return files
}

// benchTokens counts what went to and came from the model, per phase.
// Reviewers call the model concurrently, so additions are locked.
type benchTokens struct {
	mu      *sync.Mutex
	in, out map[string]int
	first   map[string]llm.Request // each phase's first request
}

func benchPhase(role string) string {
	base, _, _ := strings.Cut(role, ":")
	return map[string]string{agent.RolePlanner: "planning", agent.RolePlanReviewer: "plan_review", agent.RoleCodegen: "codegen", agent.RoleCodeReviewer: "review"}[base]
}

func (bt benchTokens) add(req llm.Request, resp llm.Response) {
	var in strings.Builder
	for _, m := range req.Messages {
		in.WriteString(m.Content)
		for _, c := range m.ToolCalls {
			in.WriteString(c.Name)
			in.Write(c.Arguments)
		}
	}
	for _, t := range req.Tools {
		in.WriteString(t.Name + t.Description)
		in.Write(t.Parameters)
	}
	in.Write(req.Schema)
	out := resp.Text
	for _, c := range resp.ToolCalls {
		out += c.Name + string(c.Arguments)
	}
	p := benchPhase(req.Role)
	bt.mu.Lock()
	defer bt.mu.Unlock()
	if _, ok := bt.first[p]; !ok {
		bt.first[p] = req
	}
	bt.in[p] += repomap.EstimateTokens(in.String())
	bt.out[p] += repomap.EstimateTokens(out)
}

func jsonOf(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}

// benchChange is a one-line change of the token benchmarks.
type benchChange struct {
	brief, title string
	accept       string // the acceptance criterion
	summary      string // the file plan's summary of path
	path         string // the one file planned and changed
	symbol       string // what the planner searches for
	old, new     string // the edit (old occurs once in path)
	line         int    // old's line, where the roles read
	whole        string // path's content after the change (whole-file mode)
}

// runCobra runs the four model phases of the cobra change in mode and
// returns the tokens.
func runCobra(tb testing.TB, mode string) benchTokens {
	root := tb.TempDir()
	files := cobraFiles(tb)
	src := files["command.go"]
	gittest.WriteFiles(tb, root, files)
	gittest.Git(tb, root, "init", "-q")
	gittest.CommitAll(tb, root, "base")
	p, _, err := task.InitProject(root)
	if err != nil {
		tb.Fatal(err)
	}
	ch := benchChange{
		brief: "Change the SuggestionsMinimumDistance default from 2 to 3.", title: "Raise the SuggestionsMinimumDistance default to 3",
		accept: "SuggestionsMinimumDistance defaults to 3", summary: "default SuggestionsMinimumDistance to 3",
		path: "command.go", symbol: "SuggestionsMinimumDistance",
		old: "c.SuggestionsMinimumDistance = 2", new: "c.SuggestionsMinimumDistance = 3", line: cobraTarget,
		whole: strings.Replace(src, "c.SuggestionsMinimumDistance = 2", "c.SuggestionsMinimumDistance = 3", 1),
	}
	return runChange(tb, p, "t", ch, mode)
}

// runChange creates task id in project p and runs its four model phases
// in mode (whole-file, edits or tools) against a scripted model, counting
// tokens.
func runChange(tb testing.TB, p *task.Project, id string, ch benchChange, mode string) benchTokens {
	ctx := context.Background()
	if _, _, err := p.CreateTask(id, ch.brief, time.Now()); err != nil {
		tb.Fatal(err)
	}
	o := orchestrator.New(p)
	o.Wait = 5 * time.Second

	plan := map[string]any{"id": id, "title": ch.title, "brief": ch.brief,
		"acceptance_criteria": []string{ch.accept},
		"file_plan":           []any{map[string]any{"path": ch.path, "intent": "update", "summary": ch.summary}}}
	planJSON, _ := json.Marshal(plan)
	// The review panels answer in one conversation each ([review] calls
	// = "panel", the default): every persona's verdict in one answer.
	panel := func(personas []string, answer map[string]any) string {
		return jsonOf(agenttest.PanelAnswer(personas, func(string) map[string]any { return answer }))
	}
	cfg := config.Default()
	verdict := panel(cfg.Review.PlanPersonas, map[string]any{"ok": true, "severity": "info", "decision": "approve", "blocking_issues": []any{}, "suggestions": []any{}, "summary": "fine"})
	reviewAnswer := panel(cfg.Review.CodePersonas, map[string]any{"ok": true, "issues": []any{}})
	whole, _ := json.Marshal(map[string]any{"status": "completed", "files": []any{map[string]any{"path": ch.path, "content": ch.whole}}, "deletes": []any{}})
	edit, _ := json.Marshal(map[string]any{"status": "completed", "edits": []any{map[string]any{"path": ch.path, "old_string": ch.old, "new_string": ch.new}}, "files": []any{}, "deletes": []any{}})
	jsonArgs := func(v any) string {
		data, _ := json.Marshal(v)
		return string(data)
	}
	read := jsonArgs(map[string]any{"path": ch.path, "offset": max(ch.line-15, 1), "limit": 30})

	bt := benchTokens{mu: &sync.Mutex{}, in: map[string]int{}, out: map[string]int{}, first: map[string]llm.Request{}}
	m := &agenttest.ToolModel{T: nil, NoTools: mode != "tools"}
	m.Turn = func(n int, req llm.Request) (llm.Response, error) {
		var resp llm.Response
		turn := len(agenttest.ToolResults(req))
		tc := func(name string, args string) llm.Response {
			return llm.Response{ToolCalls: []llm.ToolCall{{ID: fmt.Sprintf("c%d", turn), Name: name, Arguments: json.RawMessage(args)}}, StopReason: "tool_calls"}
		}
		phase := benchPhase(req.Role)
		switch {
		case mode != "tools":
			resp.Text = map[string]string{"planning": string(planJSON), "plan_review": verdict, "review": reviewAnswer}[phase]
			if phase == "codegen" {
				resp.Text = map[string]string{"whole-file": string(whole), "edits": string(edit)}[mode]
			}
		case phase == "codegen":
			resp = []llm.Response{
				tc(tools.Search, jsonArgs(map[string]string{"pattern": regexp.QuoteMeta(ch.old)})),
				tc(tools.ReadFile, read),
				tc(tools.EditFile, jsonArgs(map[string]string{"path": ch.path, "old_string": ch.old, "new_string": ch.new})),
				tc(tools.Finish, `{"status":"completed"}`),
			}[min(turn, 3)]
		case turn == 0 && phase != "planning":
			resp = tc(tools.ReadFile, read)
		case turn == 0:
			resp = tc(tools.Search, jsonArgs(map[string]string{"pattern": ch.symbol}))
		default:
			resp = tc(tools.Finish, map[string]string{"planning": string(planJSON), "plan_review": verdict, "review": reviewAnswer}[phase])
		}
		bt.add(req, resp)
		return resp, nil
	}
	cfg.Providers = map[string]config.Provider{"default": {Type: "command", Command: config.Command{"false"}}}
	cfg.Tools.MaxTestRuns = 0
	rt := m.Use(agent.NewRuntime(p, cfg, func(string) string { return "" }))
	rt.Fresh = true
	if _, err := phasetest.Run(ctx, o, id, planner.Worker{RT: rt}); err != nil {
		tb.Fatal(err)
	}
	next := func() {
		if _, err := o.Next(ctx, id, orchestrator.NextRequest{}); err != nil {
			tb.Fatal(err)
		}
	}
	next()
	if _, err := phasetest.Run(ctx, o, id, review.PlanWorker{RT: rt}); err != nil {
		tb.Fatal(err)
	}
	next()
	res, err := phasetest.Run(ctx, o, id, codegen.Worker{RT: rt})
	if err != nil {
		tb.Fatal(err)
	}
	if len(res.Record.DiffStat) != 1 || res.Record.DiffStat[0].Added != 1 || res.Record.DiffStat[0].Removed != 1 {
		tb.Fatalf("%s: the change is not the one line: %+v", mode, res.Record.DiffStat)
	}
	next()
	if _, err := phasetest.Run(ctx, o, id, review.CodeWorker{RT: rt}); err != nil {
		tb.Fatal(err)
	}
	return bt
}

func BenchmarkCobraChange(b *testing.B) {
	for _, mode := range []string{"whole-file", "edits", "tools"} {
		b.Run(mode, func(b *testing.B) {
			var bt benchTokens
			for range b.N {
				bt = runCobra(b, mode)
			}
			totalIn, totalOut := 0, 0
			for _, p := range []string{"planning", "plan_review", "codegen", "review"} {
				b.ReportMetric(float64(bt.in[p]), p+"-in-tok")
				b.ReportMetric(float64(bt.out[p]), p+"-out-tok")
				totalIn += bt.in[p]
				totalOut += bt.out[p]
			}
			b.ReportMetric(float64(totalIn), "total-in-tok")
			b.ReportMetric(float64(totalOut), "total-out-tok")
		})
	}
}

// TestCobraChangeTokens keeps the benchmark honest in the ordinary test
// run, on the real cobra source: the targets of the agents' economy hold
// (whole task with tools ≤ 30k input tokens, without ≤ 60k, the edit
// ≤ 100 output tokens), and what each role sees is what the README says:
// without tools the lines around the task's identifiers, not whole files,
// and codegen the planned file whole.
func TestCobraChangeTokens(t *testing.T) {
	edits, tooled := runCobra(t, "edits"), runCobra(t, "tools")
	total := func(bt benchTokens, m map[string]int) int {
		n := 0
		for _, v := range m {
			n += v
		}
		return n
	}
	if in := total(tooled, tooled.in); in > 30_000 {
		t.Errorf("with tools the task sends %d input tokens, more than 30k", in)
	}
	if in := total(edits, edits.in); in > 60_000 {
		t.Errorf("without tools the task sends %d input tokens, more than 60k", in)
	}
	if out := tooled.out["codegen"]; out > 100 {
		t.Errorf("the edit is %d output tokens, more than 100", out)
	}
	if tooled.in["codegen"] >= edits.in["codegen"] {
		t.Errorf("codegen input: tools %d tokens, single answer with the file %d", tooled.in["codegen"], edits.in["codegen"])
	}
	all := func(req llm.Request) string {
		var b strings.Builder
		for _, m := range req.Messages {
			b.WriteString(m.Content)
		}
		return b.String()
	}
	files := cobraFiles(t)
	planning := all(edits.first["planning"])
	if !strings.Contains(planning, "786\t\t\tc.SuggestionsMinimumDistance = 2") && !strings.Contains(planning, "   786\t\tc.SuggestionsMinimumDistance = 2") {
		t.Errorf("the planner without tools does not see the lines around SuggestionsMinimumDistance:\n%s", planning)
	}
	for _, whole := range []string{"README.md", "site/content/user_guide.md"} {
		if strings.Contains(planning, files[whole][:2000]) {
			t.Errorf("the planner without tools got %s whole", whole)
		}
	}
	if !strings.Contains(all(edits.first["codegen"]), files["command.go"]) {
		t.Error("codegen without tools does not get the planned file whole")
	}
	if !repomap.DefinitionsAvailable {
		t.Log("built without cgo: the map has no definitions, so README's figures (measured with them) are not compared")
		return
	}
	docblock.Check(t, filepath.Join("..", "..", "README.md"), economyBegin, economyEnd,
		"\n"+economyTable(map[string]benchTokens{"edits": edits, "tools": tooled}), *updateReadme,
		"go test ./internal/agent -run TestCobraChangeTokens -update")
	t.Logf("input tokens: tools %d, single answers %d; codegen in/out: edits %d/%d, tools %d/%d", total(tooled, tooled.in), total(edits, edits.in), edits.in["codegen"], edits.out["codegen"], tooled.in["codegen"], tooled.out["codegen"])
}

var updateReadme = flag.Bool("update", false, "rewrite README.md's token economy table")

const (
	economyBegin = "<!-- BEGIN GENERATED: agents' token economy on spf13/cobra (go test ./internal/agent -run TestCobraChangeTokens -update) -->"
	economyEnd   = "<!-- END GENERATED -->"
)

// economyTable is README.md's table of the cobra change's tokens per
// phase, in each mode.
func economyTable(runs map[string]benchTokens) string {
	var b strings.Builder
	b.WriteString("| mode | planning in/out | plan review in/out | codegen in/out | code review in/out | total in/out |\n|---|---|---|---|---|---|\n")
	for _, mode := range []struct{ key, name string }{
		{"tools", "tool loop (each role reads what it needs)"},
		{"edits", "single answers (no tool calling), codegen answers one edit"},
	} {
		bt := runs[mode.key]
		fmt.Fprintf(&b, "| %s |", mode.name)
		in, out := 0, 0
		for _, p := range []string{"planning", "plan_review", "codegen", "review"} {
			fmt.Fprintf(&b, " %s / %s |", thousands(bt.in[p]), thousands(bt.out[p]))
			in += bt.in[p]
			out += bt.out[p]
		}
		fmt.Fprintf(&b, " %s / %s |\n", thousands(in), thousands(out))
	}
	return b.String()
}

// thousands writes n with thousands separators, as the README does.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
