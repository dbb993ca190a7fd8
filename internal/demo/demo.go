// Package demo runs orch's offline demonstration: a small Go module with a
// missing feature, and one task that travels the whole lifecycle — a
// clarifying question and its answer, a plan review with a suggestion, a
// first codegen whose tests fail, the route back to codegen, a fixed
// second attempt, review, passing tests, and the accept decision committed
// with git — with the script provider (no key, no network) or a real model.
package demo

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/agent/planner"
	"github.com/orchdev/orch/internal/agent/tools"
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/autopilot"
	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/landing"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/sandbox"
	"github.com/orchdev/orch/internal/task"
	"github.com/orchdev/orch/internal/termtext"
	"github.com/orchdev/orch/internal/testphase"
	"github.com/orchdev/orch/internal/worker"
)

//go:embed sample/* script.json
var files embed.FS

// TaskID is the demo task's id.
const TaskID = "0001-add-reverse"

// Brief is the demo task's brief.
const Brief = "Add a Reverse function to textkit that reverses a string, with tests."

// Options configure the demo.
type Options struct {
	// Dir is where the sample repository is created; empty means a new
	// temporary folder.
	Dir string
	// Provider is "script" (offline, the default), "openai" or "anthropic".
	Provider string
	// Sandbox for the test phase: auto, bwrap or none. With auto (or
	// empty) and no working bubblewrap, the demo uses none and says so.
	Sandbox string
	Out     io.Writer
	Getenv  func(string) string
	Environ []string
}

// Result says where the demo left everything.
type Result struct {
	Repo    string
	TaskDir string
	Commit  string
	Phase   lifecycle.Phase
}

// Run creates the sample repository and drives the demo task to done.
func Run(ctx context.Context, opt Options) (Result, error) {
	var res Result
	out := opt.Out
	if out == nil {
		out = io.Discard
	}
	if opt.Provider == "" {
		opt.Provider = "script"
	}
	// The narration quotes what the models wrote: sanitized
	// (docs/terminal.md).
	say := func(format string, args ...any) { fmt.Fprintln(out, termtext.Sanitize(fmt.Sprintf(format, args...))) }
	dir := opt.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "orch-demo-")
		if err != nil {
			return res, err
		}
		dir = filepath.Join(d, "textkit")
	}
	res.Repo = dir
	say("orch demo: a sample Go module in %s", dir)
	p, err := Prepare(ctx, dir, opt.Provider)
	if err != nil {
		return res, err
	}
	cfg, err := config.Load(p.Dir)
	if err != nil {
		return res, err
	}
	getenv := opt.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	// orch test refuses to run suites unsandboxed unless told to; the demo
	// must work everywhere, so without a working bubblewrap it says so and
	// opts out explicitly (the report records sandbox "none").
	mode := opt.Sandbox
	if (mode == "" || mode == sandbox.Auto) && cfg.Test.Sandbox != sandbox.None {
		if _, err := sandbox.Available(); err != nil {
			mode = sandbox.None
			reason := err.Error()
			if se := (*sandbox.Error)(nil); errors.As(err, &se) {
				reason = se.Reason
			}
			hint := "install bubblewrap (apt-get install bubblewrap) to see them sandboxed"
			if !sandbox.Supported {
				hint = "bubblewrap runs on Linux only"
			}
			say("note: bubblewrap does not work here (%s), so the demo runs its tests WITHOUT a sandbox (sandbox \"none\", recorded in the test report); %s\n", reason, hint)
		}
	}
	o := orchestrator.New(p)
	rt := agent.NewRuntime(p, cfg, getenv)
	// The agents' tool calls, as orch's progress lines show them
	// (reviewers call tools concurrently).
	var toolMu sync.Mutex
	rt.OnTool = func(role, name string, args json.RawMessage, refused bool) {
		toolMu.Lock()
		defer toolMu.Unlock()
		line := fmt.Sprintf("  %s: %s", role, tools.Describe(name, args))
		if refused {
			line += " (refused)"
		}
		say("%s", line)
	}
	t, _, err := p.CreateTask(TaskID, Brief, time.Now().UTC())
	if err != nil {
		return res, err
	}
	res.TaskDir = t.Dir
	say("task %s: %q\n", TaskID, Brief)

	test := testphase.Options{Sandbox: mode, Env: opt.Environ}
	workers := worker.Registry(worker.Deps{Orch: o, Config: cfg, Agents: rt, Test: test, Accept: &landing.AcceptOptions{
		Verdict: artifact.VerdictAccepted, Reasons: []string{"reviews passed and the tests pass (demo)"},
		Decider: artifact.Decider{Kind: "human", Name: "demo"}, Test: test,
	}})
	// The demo is the autopilot, narrated: what each step did, from the
	// autopilot's own events and each phase's outcome.
	popt := autopilot.Options{Yes: true, Answers: map[string]string{}, Answer: func(ctx context.Context, id, q, text string) error {
		return planner.Answer(ctx, o, id, q, text)
	}}
	cold := buildCacheCold(p.Root)
	popt.Event = func(e autopilot.Event) {
		switch {
		case e.Event == "next":
			say("→ %s → %s: %s", e.From, e.To, e.Reason)
		case e.Event == "work" && strings.HasPrefix(e.Action, "answer "):
			q := strings.TrimPrefix(e.Action, "answer ")
			say("  you answer %s: %s", q, popt.Answers[q])
		case e.Event == "work" && e.Phase == lifecycle.Test:
			// The standard library is built once per repository's build
			// cache: said before the first test run that builds it, not
			// before every run.
			if cold {
				say("  running the tests in an isolated worktree (the first run builds Go's standard library into orch's cache once)…")
				cold = false
			} else {
				say("  running the tests in an isolated worktree…")
			}
		}
	}
	popt.Worked = func(_ lifecycle.Phase, out worker.Outcome) {
		narrate(say, t.Dir, out, &res)
	}
	if opt.Provider == "script" {
		popt.Answers["q1"] = "Characters (runes): multi-byte text must stay intact."
	}
	for round := 0; ; round++ {
		r, err := autopilot.Run(ctx, o, TaskID, workers, popt)
		if err != nil {
			return res, err
		}
		res.Phase = r.Phase
		if r.Stop == autopilot.StopGate && r.Phase == lifecycle.Planning && round < 3 {
			// A real model asked questions the demo cannot know in
			// advance: answer them as a reasonable person would.
			if plan := artifact.LoadPlan(t.Dir); plan.OK() {
				for _, q := range plan.Value.OpenQuestions() {
					popt.Answers[q.ID] = "Use your judgement: keep the change minimal and idiomatic, and handle multi-byte characters correctly."
				}
				continue
			}
		}
		if r.Stop != autopilot.StopDone {
			return res, fmt.Errorf("orch demo: the task stopped in %s: %s", r.Phase, r.Message)
		}
		break
	}
	for _, n := range rt.Notes {
		say("note: %s", n)
	}
	rep, err := t.Verify()
	if err != nil {
		return res, err
	}
	if !rep.OK {
		return res, errors.New("orch demo: the transcript does not verify")
	}
	say("\ndone: the task is in phase done and its transcript verifies (%d events).", rep.Events)
	say(`
Look around:
  cd %s
  orch status                 # phase done, revision, actors
  orch log                    # every transition with its reason, every model call
  orch verify                 # the hash chain and state.json agree
  git log --stat -1           # the commit, with its Orch-Task, Orch-Plan and Orch-Diff trailers
  ls %s
    planning/   the brief, planning.ai.json, plan.md, plan.files.json, meeting.jsonl
    review/     plan-review.json/.md, code-review.json/.md
    code/       files/, diff.patch, codegen.json
    test/       report.json, logs/
    accept/     decision.json, summary.md
    history/    the first codegen attempt and its failing test report`, dir, t.Dir)
	return res, nil
}

// narrate says what a phase's work did.
func narrate(say func(string, ...any), taskDir string, out worker.Outcome, res *Result) {
	switch {
	case out.Plan != nil:
		r := out.Plan
		say("  planner, round %d: %s", r.Round, r.Status)
		for _, q := range r.Open {
			say("    question %s (blocking): %s", q.ID, q.Text)
		}
	case out.PlanReview != nil:
		r := out.PlanReview
		say("  %d plan reviewers: ok=%v blocked=%v", len(r.Review.Reviewers), r.Review.OK, r.Review.Blocked)
		for _, v := range r.Review.Reviewers {
			for _, s := range v.Suggestions {
				say("    %s suggests: %s", v.ID, s)
			}
		}
	case out.Codegen != nil:
		if cf := artifact.ScanCodeFiles(taskDir); cf.OK() {
			say("  codegen wrote %s and computed code/diff.patch", strings.Join(cf.Value, ", "))
		}
	case out.CodeReview != nil:
		if cr := artifact.LoadCodeReview(taskDir); cr.OK() {
			say("  code reviewers: ok=%v, %d issue(s), %d blocking", cr.Value.OK, len(cr.Value.Issues), len(cr.Value.BlockingIssues()))
		}
	case out.Test != nil:
		rep := out.Test.Report
		say("  tests: %s, overall_pass=%v (%s; sandbox %s)", rep.Status, rep.OverallPass, rep.Summary, rep.Sandbox)
		for _, s := range rep.Suites {
			for _, c := range s.Cases {
				if c.Status == "fail" {
					say("    FAIL %s", c.Name)
				}
			}
		}
	case out.Accept != nil:
		r := out.Accept
		res.Commit = r.Decision.Commit
		say("  you accept: committed %.12s with the trailers Orch-Task, Orch-Plan and Orch-Diff", r.Decision.Commit)
	}
}

// Prepare creates the demo's sample repository in dir (which must be
// empty or absent) with one commit, runs orch init in it and configures
// provider ("script": the demo's offline script). Other front ends' tests
// (orch mcp's) drive the same task through it.
func Prepare(ctx context.Context, dir, provider string) (*task.Project, error) {
	if err := writeSample(ctx, dir); err != nil {
		return nil, err
	}
	p, _, err := task.InitProject(dir)
	if err != nil {
		return nil, err
	}
	if err := writeConfig(p, provider); err != nil {
		return nil, err
	}
	return p, nil
}

// writeSample creates the sample repository with one commit.
func writeSample(ctx context.Context, dir string) error {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("orch demo: %s exists and is not empty: pick another --dir", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	err := fs.WalkDir(files, "sample", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		name := strings.TrimSuffix(strings.TrimPrefix(p, "sample/"), ".txt")
		return os.WriteFile(filepath.Join(dir, name), data, 0o644)
	})
	if err != nil {
		return err
	}
	for _, args := range [][]string{
		{"init", "-q"},
		{"config", "user.name", "orch demo"},
		{"config", "user.email", "demo@orch.invalid"},
		{"add", "-A"},
		{"commit", "-q", "-m", "textkit: Capitalize"},
	} {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return nil
}

// writeConfig writes .orch/config.toml for the provider.
func writeConfig(p *task.Project, provider string) error {
	var cfg string
	switch provider {
	case "script":
		script, err := files.ReadFile("script.json")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(p.Dir, "demo-script.json"), script, 0o644); err != nil {
			return err
		}
		cfg = "[providers.default]\ntype = \"script\"\nscript = \".orch/demo-script.json\"\n"
	case "openai":
		cfg = "[providers.default]\ntype = \"openai\"\napi_key_env = \"OPENAI_API_KEY\"\n"
	case "anthropic":
		cfg = "[providers.default]\ntype = \"anthropic\"\napi_key_env = \"ANTHROPIC_API_KEY\"\n"
	default:
		return fmt.Errorf("orch demo: --provider: expected script, openai or anthropic, got %q", provider)
	}
	return os.WriteFile(filepath.Join(p.Dir, config.FileName), []byte(cfg), 0o644)
}

// buildCacheCold reports whether the repository at root has no build
// cache yet (testphase.BuildCacheDir): its first test run builds Go's
// standard library.
func buildCacheCold(root string) bool {
	dir, err := testphase.BuildCacheDir(root)
	if err != nil {
		return true
	}
	_, err = os.Stat(dir)
	return err != nil
}
