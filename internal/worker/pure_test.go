package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/agent/agenttest"
	"github.com/orchdev/orch/internal/agent/codegen"
	"github.com/orchdev/orch/internal/agent/planner"
	"github.com/orchdev/orch/internal/agent/review"
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/gitx"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/llm"
	"github.com/orchdev/orch/internal/repomap"
	"github.com/orchdev/orch/internal/testphase"
	"github.com/orchdev/orch/internal/work"
)

// The phases' workers are pure work: each is run here on an Input built
// by hand — a task folder and a repository in temporary folders, no orch
// project (.orch) and no engine anywhere — and its Output, its staged
// files and its records are checked. Between phases the test does what
// the engine would: it moves the staged files into the task folder.

// recorder keeps a run's records (work.Recorder).
type recorder struct {
	mu      sync.Mutex
	records []event.Payload
}

func (r *recorder) Record(p event.Payload) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records = append(r.records, p)
}

func (r *recorder) modelCalls() []event.ModelCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []event.ModelCall
	for _, p := range r.records {
		if c, ok := p.(event.ModelCall); ok {
			out = append(out, c)
		}
	}
	return out
}

// project is the agents' runtime's view of a project (agent.Project):
// here a state folder for its caches, which is not an orch project.
type project struct{ root, state string }

func (p project) RootDir() string { return p.root }
func (p project) OrchDir() string { return p.state }

// pureEnv is a repository, a task folder and a scripted model.
type pureEnv struct {
	t         *testing.T
	root, dir string
	base      string
	rt        *agent.Runtime
	cfg       config.Config
}

func newPureEnv(t *testing.T, entries ...any) *pureEnv {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	root := gittest.Init(t)
	gittest.WriteFiles(t, root, map[string]string{
		"calc.go":   agenttest.Calc,
		"go.mod":    "module example.com/calc\n\ngo 1.22\n",
		"README.md": "# calc\n\nArithmetic helpers.\n",
	})
	base := gittest.CommitAll(t, root, "base")
	dir := t.TempDir()
	gittest.Write(t, dir, artifact.BriefFile, "make Add return the sum\n")
	data, err := json.Marshal(map[string]any{"responses": entries})
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(script, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Providers = map[string]config.Provider{"default": {Type: "script", Script: script}}
	rt := agent.NewRuntime(project{root: root, state: t.TempDir()}, cfg, func(string) string { return "" })
	return &pureEnv{t: t, root: root, dir: dir, base: base, rt: rt, cfg: cfg}
}

// input builds the Input of phase p's run n by hand.
func (e *pureEnv) input(p lifecycle.Phase, run string, counters map[lifecycle.Phase]work.Counter) (work.Input, *recorder) {
	rec := &recorder{}
	repo, err := gitx.Open(context.Background(), e.root)
	if err != nil {
		e.t.Fatal(err)
	}
	return work.Input{
		Task: "t", Phase: p, Run: run, Revision: 1, Base: e.base, Repo: work.LocalRepo(repo, e.base), Dir: e.dir, Root: e.root,
		Current: p, Running: map[lifecycle.Phase]int{}, Counters: counters, Now: time.Now(),
		Out: work.Stage{Dir: e.t.TempDir()}, Records: rec,
	}, rec
}

// commit moves what in staged into the task folder, as the engine does.
func (e *pureEnv) commit(in work.Input) []string {
	e.t.Helper()
	var files []string
	err := filepath.WalkDir(in.Out.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(in.Out.Dir, p)
		files = append(files, filepath.ToSlash(rel))
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		gittest.Write(e.t, e.dir, filepath.ToSlash(rel), string(data))
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return files
}

// run runs w on in: Check, then Work.
func run[R any](t *testing.T, w work.Worker[R], in work.Input) work.Result[R] {
	t.Helper()
	if err := w.Check(context.Background(), in); err != nil {
		t.Fatalf("%s: check: %v", w.Phase(), err)
	}
	res, err := w.Work(context.Background(), in)
	if err != nil {
		t.Fatalf("%s: %v", w.Phase(), err)
	}
	return res
}

// TestWorkersOnInputsBuiltInMemory runs planning, plan review, codegen,
// code review and the tests through their workers alone.
func TestWorkersOnInputsBuiltInMemory(t *testing.T) {
	e := newPureEnv(t,
		agenttest.ScriptEntry("planner", agenttest.PlannerAnswer("Make Add add",
			[]map[string]any{agenttest.FileEntry("calc.go", "update"), agenttest.FileEntry("calc_test.go", "create")})),
		agenttest.ScriptEntry("plan_reviewer", agenttest.Verdict(true, "minor", "approve")),
		agenttest.ScriptEntry("codegen", json.RawMessage(agenttest.CodegenEntry.JSON)),
		agenttest.ScriptEntry("code_reviewer", map[string]any{"ok": true, "summary": "fine", "issues": []any{}}),
	)
	counters := map[lifecycle.Phase]work.Counter{}
	check := func(phase lifecycle.Phase, out work.Output, status lifecycle.Status, rec *recorder, calls int, files []string, want ...string) {
		t.Helper()
		if out.Status != status {
			t.Errorf("%s: status %q, want %q", phase, out.Status, status)
		}
		if got := rec.modelCalls(); len(got) != calls {
			t.Errorf("%s: %d model calls recorded, want %d", phase, len(got), calls)
		} else {
			for _, c := range got {
				if c.Phase != phase {
					t.Errorf("%s: a model call of phase %s", phase, c.Phase)
				}
			}
		}
		for _, w := range want {
			found := false
			for _, f := range files {
				found = found || f == w
			}
			if !found {
				t.Errorf("%s: %s not staged (staged %v)", phase, w, files)
			}
		}
	}

	in, rec := e.input(lifecycle.Planning, "r1", counters)
	plan := run(t, planner.Worker{RT: e.rt}, in)
	check(lifecycle.Planning, plan.Output, lifecycle.PlanReviewReady, rec, 1, e.commit(in), artifact.PlanFile, artifact.FilePlanFile, artifact.MeetingFile)
	if plan.Output.Round != 1 || plan.Value.Plan.Title != "Make Add add" || len(plan.Value.Plan.FilePlan) != 2 {
		t.Errorf("planning: round %d, plan %+v", plan.Output.Round, plan.Value.Plan)
	}
	counters[lifecycle.Planning] = work.Counter{Round: plan.Output.Round}

	in, rec = e.input(lifecycle.PlanReview, "r2", counters)
	pr := run(t, review.PlanWorker{RT: e.rt}, in)
	check(lifecycle.PlanReview, pr.Output, lifecycle.PlanApproved, rec, len(e.cfg.Review.PlanPersonas), e.commit(in), artifact.PlanReviewFile)
	if pr.Value.Review.PlanningRound != 1 || !pr.Value.Review.OK {
		t.Errorf("plan review: %+v", pr.Value.Review)
	}

	in, rec = e.input(lifecycle.Codegen, "r3", counters)
	cg := run(t, codegen.Worker{RT: e.rt}, in)
	check(lifecycle.Codegen, cg.Output, lifecycle.StatusCompleted, rec, 1, e.commit(in), artifact.CodegenFile, artifact.DiffFile, artifact.CodeFilesDir+"/calc.go")
	if cg.Output.Attempt != 1 || cg.Value.Record.Base != e.base {
		t.Errorf("codegen: attempt %d, base %s (want %s)", cg.Output.Attempt, cg.Value.Record.Base, e.base)
	}

	in, rec = e.input(lifecycle.Review, "r4", counters)
	cr := run(t, review.CodeWorker{RT: e.rt}, in)
	check(lifecycle.Review, cr.Output, lifecycle.ReviewOK, rec, len(config.Default().Review.CodePersonas), e.commit(in), artifact.CodeReviewFile)

	in, rec = e.input(lifecycle.Test, "r5", counters)
	tr := run(t, testphase.Worker{Config: e.cfg, Options: testphase.Options{Sandbox: "none"}}, in)
	check(lifecycle.Test, tr.Output, lifecycle.TestPassed, rec, 0, e.commit(in), artifact.TestReportFile)
	if tr.Value.Report.Base != e.base || !tr.Value.Report.OverallPass {
		t.Errorf("test: %+v", tr.Value.Report.TestReport)
	}

	// No orch project anywhere: nothing the workers could have read.
	for _, d := range []string{e.root, e.dir} {
		_ = filepath.WalkDir(d, func(p string, de fs.DirEntry, err error) error {
			if err == nil && de.IsDir() && strings.HasPrefix(de.Name(), ".orch") {
				t.Errorf("an orch folder exists: %s", p)
			}
			return err
		})
	}
}

// TestBudgetLeftComesInTheInput: a worker's budget left is its limits less
// the spend its Input carries — no transcript is read. With the task's
// calls spent (in total, then in the phase), the planner stops before
// calling the model, with the budget error and a budget_exceeded record;
// with the same limits and nothing spent, it plans.
func TestBudgetLeftComesInTheInput(t *testing.T) {
	planAnswer := agenttest.ScriptEntry("planner", agenttest.PlannerAnswer("Make Add add",
		[]map[string]any{agenttest.FileEntry("calc.go", "update")}))
	for _, tc := range []struct {
		name  string
		spent work.Spent
		scope string
	}{
		{"task", work.Spent{Total: work.Spend{Calls: 5, TokensIn: 900}}, "task"},
		{"phase", work.Spent{Total: work.Spend{Calls: 2}, Phases: map[lifecycle.Phase]work.Spend{lifecycle.Planning: {Calls: 2}}}, "phase planning"},
		{"none", work.Spent{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newPureEnv(t, planAnswer)
			e.rt.Config.Budgets.Calls = 5
			e.rt.Config.Budgets.Phase = map[string]config.Budget{"planning": {Calls: 2}}
			in, rec := e.input(lifecycle.Planning, "r1", map[lifecycle.Phase]work.Counter{})
			in.Spent = tc.spent
			res, err := planner.Worker{RT: e.rt}.Work(context.Background(), in)
			if tc.scope == "" {
				if err != nil || len(rec.modelCalls()) != 1 || res.Output.Round != 1 {
					t.Fatalf("nothing spent: %v, %d calls, round %d; want a plan from one call", err, len(rec.modelCalls()), res.Output.Round)
				}
				return
			}
			var be *agent.BudgetError
			if !errors.As(err, &be) || be.Scope != tc.scope || be.Limit != "calls" {
				t.Fatalf("err = %v, want the %s's calls budget exceeded", err, tc.scope)
			}
			if n := len(rec.modelCalls()); n != 0 {
				t.Errorf("%d model calls recorded, want none (nothing sent)", n)
			}
			refused := 0
			rec.mu.Lock()
			for _, p := range rec.records {
				if b, ok := p.(event.BudgetExceeded); ok && b.Phase == lifecycle.Planning {
					refused++
				}
			}
			rec.mu.Unlock()
			if refused != 1 {
				t.Errorf("%d budget_exceeded records, want 1: %v", refused, rec.records)
			}
		})
	}
}

// memRepo is a repository view held in memory (work.Repo): the files of
// one commit. It counts what it is asked.
type memRepo struct {
	commit string
	files  map[string]string
	mu     sync.Mutex
	asked  []string
}

func (m *memRepo) ask(what string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.asked = append(m.asked, what)
}

func (m *memRepo) Commit() string { return m.commit }

func (m *memRepo) Files(ctx context.Context) ([]gitx.TreeEntry, error) {
	m.ask("files")
	var out []gitx.TreeEntry
	for p, c := range m.files {
		out = append(out, gitx.TreeEntry{Path: p, Mode: "100644", Type: "blob", SHA: fmt.Sprintf("%040x", len(c))})
	}
	return out, nil
}

func (m *memRepo) ReadFile(ctx context.Context, p string) ([]byte, bool, error) {
	m.ask("read " + p)
	c, ok := m.files[p]
	return []byte(c), ok, nil
}

func (m *memRepo) Grep(ctx context.Context, pattern string, opt gitx.GrepOptions) (gitx.GrepResult, error) {
	m.ask("grep " + pattern)
	var res gitx.GrepResult
	for p, c := range m.files {
		for i, line := range strings.Split(c, "\n") {
			if strings.Contains(line, pattern) {
				res.Matches = append(res.Matches, gitx.GrepMatch{Path: p, Line: i + 1, Text: line})
			}
		}
	}
	return res, nil
}

// TestPlannerReadsTheRepositoryThroughItsView: the planner's tools
// (list_files, read_file, search) read the repository through the
// Input's view at its commit — here one held in memory, whose files
// differ from the repository on disk — and nowhere else.
func TestPlannerReadsTheRepositoryThroughItsView(t *testing.T) {
	e := newPureEnv(t)
	view := &memRepo{commit: strings.Repeat("c", 40), files: map[string]string{
		"calc.go":         "package calc\n\n// Add is only in the view.\nfunc Add(a, b int) int { return a - b }\n",
		"only_in_view.go": "package calc\n",
	}}
	m := &agenttest.ToolModel{T: t, Turn: agenttest.Scripted(
		agenttest.Calls(
			agenttest.ToolCall(t, "list_files", map[string]any{}),
			agenttest.ToolCall(t, "read_file", map[string]any{"path": "calc.go"}),
			agenttest.ToolCall(t, "search", map[string]any{"pattern": "only in the view"}),
			agenttest.ToolCall(t, "read_file", map[string]any{"path": "README.md"}),
		),
		agenttest.Calls(agenttest.ToolCall(t, "finish", agenttest.PlannerAnswer("Make Add add",
			[]map[string]any{agenttest.FileEntry("calc.go", "update")}))),
	)}
	m.Use(e.rt)
	in, _ := e.input(lifecycle.Planning, "r1", map[lifecycle.Phase]work.Counter{})
	in.Repo = view
	res := run(t, planner.Worker{RT: e.rt}, in)
	if res.Output.Round != 1 {
		t.Fatalf("planning: %+v", res.Output)
	}
	reqs := m.Requests()
	if len(reqs) < 2 {
		t.Fatalf("%d requests, want the tools' turn and the answer", len(reqs))
	}
	results := agenttest.ToolResults(reqs[1])
	if len(results) != 4 {
		t.Fatalf("%d tool results, want 4", len(results))
	}
	list, read, search, readme := results[0].Content, results[1].Content, results[2].Content, results[3].Content
	if !strings.Contains(list, "only_in_view.go") || strings.Contains(list, "README.md") || strings.Contains(list, "go.mod") {
		t.Errorf("list_files answered from elsewhere than the view:\n%s", list)
	}
	if !strings.Contains(read, "only in the view") {
		t.Errorf("read_file calc.go answered from elsewhere than the view:\n%s", read)
	}
	if !strings.Contains(search, "calc.go") || !strings.Contains(search, "only in the view") {
		t.Errorf("search answered from elsewhere than the view:\n%s", search)
	}
	if strings.Contains(readme, "Arithmetic helpers") {
		t.Errorf("read_file README.md read the repository on disk:\n%s", readme)
	}
	view.mu.Lock()
	asked := strings.Join(view.asked, "; ")
	view.mu.Unlock()
	for _, want := range []string{"files", "read calc.go", "grep only in the view"} {
		if !strings.Contains(asked, want) {
			t.Errorf("the view was not asked %q (asked: %s)", want, asked)
		}
	}
}

// ReadFiles reads several files of the view at once (the prompts'
// repository context).
func (m *memRepo) ReadFiles(ctx context.Context, paths []string, maxBytes int64, fn func(string, []byte, int64) error) error {
	m.ask("read files " + strings.Join(paths, ","))
	for _, p := range paths {
		c, ok := m.files[p]
		if !ok {
			continue
		}
		data := []byte(c)
		if err := fn(p, data[:min(int64(len(data)), maxBytes)], int64(len(data))); err != nil {
			return err
		}
	}
	return nil
}

// Map is the view's map: text no index of the repository on disk could
// render, and the occurrences of the identifier the seeds name in the
// view's files.
func (m *memRepo) Map(ctx context.Context, req work.MapRequest) (work.Map, error) {
	m.ask("map")
	return memMap{m}, nil
}

type memMap struct{ r *memRepo }

const viewMapText = "view-map.go:\n│func OnlyInTheViewMap()\n"

func (mm memMap) Map(ctx context.Context, s repomap.Seeds, budget int) (string, error) {
	return viewMapText, nil
}

func (mm memMap) Context(ctx context.Context, s repomap.Seeds, budget int) (string, []repomap.Occurrence, []repomap.Ranked, error) {
	var occ []repomap.Occurrence
	for p, c := range mm.r.files {
		for i, line := range strings.Split(c, "\n") {
			if strings.Contains(line, "Add") {
				occ = append(occ, repomap.Occurrence{Ident: "Add", Path: p, Line: i + 1})
			}
		}
	}
	return viewMapText, occ, []repomap.Ranked{{Path: "calc.go", Rank: 1}}, nil
}

func (mm memMap) FileDefinitions(p string) ([]repomap.Def, bool) { return nil, false }

// TestPlannerPromptShowsTheViewsMapAndContext: the repository part of the
// planner's prompt — the map, the file list and, without tools, the lines
// around the task's identifiers — comes from the Input's view (here one
// held in memory whose files and map differ from the repository on disk),
// never from the work tree or an index of it.
func TestPlannerPromptShowsTheViewsMapAndContext(t *testing.T) {
	for _, tools := range []bool{true, false} {
		t.Run(fmt.Sprintf("tools=%v", tools), func(t *testing.T) {
			e := newPureEnv(t)
			view := &memRepo{commit: strings.Repeat("c", 40), files: map[string]string{
				"calc.go": "package calc\n\n// Add is only in the view.\nfunc Add(a, b int) int { return a - b }\n",
			}}
			answer := agenttest.PlannerAnswer("Make Add add", []map[string]any{agenttest.FileEntry("calc.go", "update")})
			turn := agenttest.Calls(agenttest.ToolCall(t, "finish", answer))
			if !tools {
				data, err := json.Marshal(answer)
				if err != nil {
					t.Fatal(err)
				}
				turn = llm.Response{Text: string(data)}
			}
			m := &agenttest.ToolModel{T: t, NoTools: !tools, Turn: agenttest.Scripted(turn)}
			m.Use(e.rt)
			in, _ := e.input(lifecycle.Planning, "r1", map[lifecycle.Phase]work.Counter{})
			in.Repo = view
			if res := run(t, planner.Worker{RT: e.rt}, in); res.Output.Round != 1 {
				t.Fatalf("planning: %+v", res.Output)
			}
			reqs := m.Requests()
			if len(reqs) == 0 {
				t.Fatal("no request sent")
			}
			var user string
			for _, msg := range reqs[0].Messages {
				if msg.Role == "user" {
					user += msg.Content
				}
			}
			if !strings.Contains(user, "OnlyInTheViewMap") {
				t.Errorf("the prompt lacks the view's map:\n%s", user)
			}
			for _, disk := range []string{"README.md", "go.mod", "Arithmetic helpers", "Add returns the sum"} {
				if strings.Contains(user, disk) {
					t.Errorf("the prompt shows %q of the repository on disk:\n%s", disk, user)
				}
			}
			if !tools && !strings.Contains(user, "only in the view") {
				t.Errorf("the lines around Add were not read through the view:\n%s", user)
			}
			view.mu.Lock()
			asked := strings.Join(view.asked, "; ")
			view.mu.Unlock()
			want := []string{"files", "map"}
			if !tools {
				want = append(want, "read files calc.go")
			}
			for _, w := range want {
				if !strings.Contains(asked, w) {
					t.Errorf("the view was not asked %q (asked: %s)", w, asked)
				}
			}
		})
	}
}
