package codegen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/agent/tools"
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/evidence"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/gitx"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/llm"
	"github.com/orchdev/orch/internal/visibility"
	"github.com/orchdev/orch/internal/work"
)

// Answer is the codegen model's single structured answer, where
// tool calling is not spoken. It is untrusted: CheckAnswer and the
// workspace validate it before anything is staged.
type Answer struct {
	Status    string     `json:"status" enum:"completed,plan_unclear,failed" desc:"completed: edits, files and deletes hold the change; plan_unclear: the plan is too unclear to implement, ask in questions; failed: you cannot do it, say why in notes"`
	Edits     []Edit     `json:"edits" desc:"changes to existing files, applied in order: old_string (copied exactly from the file) is replaced by new_string"`
	Files     []File     `json:"files" desc:"new files, or files rewritten entirely, with their complete content; never repeat a whole file to change part of it"`
	Deletes   []string   `json:"deletes" desc:"repository paths of files to delete"`
	Questions []Question `json:"questions,omitempty" desc:"with plan_unclear: what the plan must answer"`
	Notes     string     `json:"notes,omitempty" desc:"anything the reviewers should know"`
}

// Edit replaces OldString with NewString in Path (every occurrence
// with ReplaceAll; otherwise it must occur exactly once).
type Edit struct {
	Path       string `json:"path" desc:"repository-relative path with /"`
	OldString  string `json:"old_string" desc:"the exact text to replace, whitespace and indentation included, long enough to occur once"`
	NewString  string `json:"new_string" desc:"the replacement text"`
	ReplaceAll bool   `json:"replace_all,omitempty" desc:"replace every occurrence instead of exactly one"`
}

// File is one whole file of a codegen answer.
type File struct {
	Path    string `json:"path" desc:"repository-relative path with /"`
	Content string `json:"content" desc:"the complete content of the file"`
}

// Finish is the arguments of codegen's finish tool: the edits are
// already in the workspace.
type Finish struct {
	Status    string     `json:"status" enum:"completed,plan_unclear,failed" desc:"completed: your edits hold the change; plan_unclear: the plan is too unclear to implement (or needs a file outside the file plan), ask in questions; failed: you cannot do it, say why in notes"`
	Questions []Question `json:"questions,omitempty" desc:"with plan_unclear: what the plan must answer"`
	Notes     string     `json:"notes,omitempty" desc:"anything the reviewers should know"`
}

// Question is a question codegen asks about the plan.
type Question struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// Record is code/codegen.json as the codegen agent writes it: the
// contract's fields (status, base, questions) and what was done.
type Record struct {
	Status    string     `json:"status"`
	Base      string     `json:"base"`
	Questions []Question `json:"questions,omitempty"`
	Notes     string     `json:"notes,omitempty"`
	// Attempt counts codegen results of this task, this one included.
	Attempt int `json:"attempt"`
	// Files are the paths written under code/files; Deletes the deleted ones.
	Files   []string `json:"files"`
	Deletes []string `json:"deletes"`
	// Unplanned are written or deleted paths outside the file plan: the
	// scope mismatch `orch next` routes back to planning.
	Unplanned []string `json:"unplanned,omitempty"`
	// Untouched are planned paths the change leaves alone.
	Untouched []string `json:"untouched,omitempty"`
	// DiffStat counts the lines code/diff.patch adds and removes per file.
	DiffStat []FileStat `json:"diffstat,omitempty"`
	// FixFrom names the history folders whose failures the model was shown.
	FixFrom []string `json:"fix_from,omitempty"`
}

// Result is what Run reports.
type Result struct {
	Record Record
}

// codegenOutput is a validated result: the status and signals, and the
// change (the changed files' full content, the deleted paths, the patch
// orch computed with git).
type codegenOutput struct {
	Status    string
	Questions []Question
	Notes     string
	Files     map[string][]byte
	Deletes   []string
	Patch     []byte
}

// Worker is the codegen phase's worker: the model writes the full content
// of the planned files against the base commit (the repository's HEAD
// when the run started); orch validates every path and content, stages
// code/files/, computes code/diff.patch with git and records
// code/codegen.json. On a re-run after a regression the prompt carries the
// previous attempt's failures.
type Worker struct {
	RT *agent.Runtime
	// Tests runs the suites for the run_tests tool (the registry gives it
	// the test phase's runner); nil, or [tools] max_test_runs = 0, leaves
	// the tool out.
	Tests work.TestRunner
}

// Phase returns lifecycle.Codegen.
func (Worker) Phase() lifecycle.Phase { return lifecycle.Codegen }

// Check refuses to call a model without a valid, reviewed plan.
func (Worker) Check(ctx context.Context, in work.Input) error { return checkPlanForCodegen(in.Dir) }

// Work runs the model.
func (w Worker) Work(ctx context.Context, in work.Input) (work.Result[Result], error) {
	return runPhase(ctx, in, func(ctx context.Context, repo *gitx.Repo) (Record, error) {
		return codegenWork(ctx, w.RT, w.Tests, repo, in)
	})
}

// Submitter is the codegen phase's worker for an answer (the shape of
// Answer) written by someone else than orch's codegen model, such as an
// MCP host's agent: no model is called, and the answer goes through
// exactly the checks, staging and records of the model's single answer
// (one code path, finishAnswer). The task must be in codegen with no
// codegen run live; an answer that fails the checks is refused with the
// message the model would have been re-prompted with, before the run
// starts, so that nothing is written.
type Submitter struct {
	RT     *agent.Runtime
	Answer []byte
}

// Phase returns lifecycle.Codegen.
func (Submitter) Phase() lifecycle.Phase { return lifecycle.Codegen }

// Check refuses a task not in codegen, a missing or unreviewed plan and
// an answer that fails the checks against the current HEAD, so that a
// refused answer writes nothing; the run checks it again against the base
// it records.
func (w Submitter) Check(ctx context.Context, in work.Input) error {
	if in.Current != lifecycle.Codegen {
		return exit.New(exit.ErrRefused, "task %s is in %s, not codegen: code is submitted in codegen; `orch status` says what moves the task on", in.Task, in.Current)
	}
	if pid, ok := in.Running[lifecycle.Codegen]; ok {
		return exit.New(exit.ErrRefused, "codegen is already running for task %s (pid %d); wait for it or stop that process", in.Task, pid)
	}
	if err := checkPlanForCodegen(in.Dir); err != nil {
		return err
	}
	repo, err := gitx.Open(ctx, in.Root)
	if err != nil {
		return err
	}
	if _, problem, infra := checkSubmitted(ctx, w.RT, repo, in.Dir, w.Answer); infra != nil {
		return fmt.Errorf("codegen: checking the answer: %w", infra)
	} else if problem != nil {
		return exit.New(exit.ErrInvalid, "the submitted code is refused (nothing written): %w", problem)
	}
	return nil
}

// Work stages the submitted answer.
func (w Submitter) Work(ctx context.Context, in work.Input) (work.Result[Result], error) {
	return runPhase(ctx, in, func(ctx context.Context, repo *gitx.Repo) (Record, error) {
		s, err := startCodegen(ctx, w.RT, repo, in)
		if err != nil {
			return s.rec, err
		}
		out, problem, infra := s.checker.check(ctx, w.Answer)
		if infra != nil {
			return s.rec, fmt.Errorf("codegen: checking the answer: %w", infra)
		}
		if problem != nil {
			return s.rec, fmt.Errorf("codegen: the submitted code: %w", problem)
		}
		return s.finish(in.Out, out)
	})
}

// checkSubmitted checks a submitted answer against the task's file plan
// and the repository's HEAD.
func checkSubmitted(ctx context.Context, rt *agent.Runtime, repo *gitx.Repo, taskDir string, answer []byte) (codegenOutput, error, error) {
	plan := artifact.LoadPlan(taskDir)
	fp := artifact.LoadFilePlan(taskDir, plan)
	base, err := repo.Head(ctx)
	if err != nil {
		return codegenOutput{}, nil, fmt.Errorf("the base commit is the repository's HEAD: %w", err)
	}
	policy, err := rt.Policy()
	if err != nil {
		return codegenOutput{}, nil, err
	}
	return codegenChecker{repo: repo, base: base, plan: fp.Value, policy: policy}.check(ctx, answer)
}

// runPhase runs work (Worker: the model; Submitter: a submitted answer)
// and reports its record as the phase's output.
func runPhase(ctx context.Context, in work.Input, fn func(context.Context, *gitx.Repo) (Record, error)) (work.Result[Result], error) {
	var res work.Result[Result]
	repo, err := gitx.Open(ctx, in.Root)
	if err != nil {
		return res, err
	}
	rec, err := fn(ctx, repo)
	res.Value.Record = rec
	if err != nil {
		return res, err
	}
	res.Output = work.Output{Status: lifecycle.Status(rec.Status), Attempt: rec.Attempt, Summary: &event.PhaseSummary{
		Status: rec.Status, Base: rec.Base, Files: event.Ref(len(rec.Files)), Deletes: event.Ref(len(rec.Deletes)),
		Unplanned: rec.Unplanned, Attempt: event.Ref(rec.Attempt),
	}}
	return res, nil
}

// checkPlanForCodegen refuses to call a model without a valid plan and a
// non-empty file plan.
func checkPlanForCodegen(taskDir string) error {
	plan := artifact.LoadPlan(taskDir)
	switch {
	case !plan.Present:
		return exit.New(exit.ErrRefused, "codegen needs a plan: %s is missing", artifact.PlanFile)
	case plan.Err != nil:
		return exit.New(exit.ErrInvalid, "codegen needs a valid plan: %w", plan.Err)
	}
	fp := artifact.LoadFilePlan(taskDir, plan)
	switch {
	case fp.Err != nil:
		return exit.New(exit.ErrInvalid, "codegen needs a valid file plan: %w", fp.Err)
	case !fp.Present || len(fp.Value.Files) == 0:
		return exit.New(exit.ErrRefused, "codegen needs a file plan: %s is missing and %s has no file_plan; `orch next` routes the task to plan_review", artifact.FilePlanFile, artifact.PlanFile)
	}
	// Codegen works from exactly the plan plan_review → codegen recorded
	// (README, "Evidence is bound to the change"): an edited plan goes back to review first.
	gates, err := evidence.ReadGates(taskDir)
	if err != nil {
		return err
	}
	ev := lifecycle.Evidence{Gates: gates, Now: map[string]string{lifecycle.HashPlan: plan.SHA256}}
	if err := ev.Changed(lifecycle.HashPlan); err != nil {
		return exit.New(exit.ErrRefused, "codegen works from the reviewed plan: %w; `orch next` takes the task back to plan_review", err)
	}
	return nil
}

// codegenStart is what a codegen run knows before the change is made:
// the record so far (base, attempt), the file plan, the policy, the
// checker of a single answer and the scratch folder.
type codegenStart struct {
	rec     Record
	fp      artifact.FilePlan
	policy  visibility.Policy
	checker codegenChecker
	scratch string
}

// startCodegen reads the reviewed plan and the base of run.
func startCodegen(ctx context.Context, rt *agent.Runtime, repo *gitx.Repo, run work.Input) (codegenStart, error) {
	var s codegenStart
	dir := run.Dir
	plan := artifact.LoadPlan(dir)
	fp := artifact.LoadFilePlan(dir, plan)
	if !plan.OK() || !fp.OK() || len(fp.Value.Files) == 0 {
		if err := checkPlanForCodegen(dir); err != nil {
			return s, err
		}
		return s, fmt.Errorf("codegen: the plan changed while codegen started; run it again")
	}
	s.fp = fp.Value
	base := run.Base
	if run.BaseErr != nil {
		return s, fmt.Errorf("codegen: the base commit is the repository's HEAD: %w", run.BaseErr)
	}
	s.rec.Base = base
	s.rec.Attempt = previousAttempts(dir) + 1
	var err error
	if s.policy, err = rt.Policy(); err != nil {
		return s, err
	}
	s.checker = codegenChecker{repo: repo, base: base, plan: s.fp, policy: s.policy}
	s.scratch = filepath.Join(run.Out.Dir, scratchDir)
	return s, nil
}

// finish is everything after the answer (the model's or a submitted
// one): the scratch folder removed, the record completed, code/files,
// code/diff.patch and code/codegen.json staged.
func (s *codegenStart) finish(run work.Stage, out codegenOutput) (Record, error) {
	if err := os.RemoveAll(s.scratch); err != nil {
		return s.rec, fmt.Errorf("codegen: remove the scratch folder: %w", err)
	}
	fillRecord(&s.rec, out, s.fp)
	if err := stageCodegen(run, s.rec, out); err != nil {
		return s.rec, err
	}
	return s.rec, nil
}

// codegenWork is the phase's work: prompt, model turns, validation,
// staging. With tool calling the model edits a workspace (kept inside the
// file plan, mirrored in a scratch folder of the staging area) and may run
// the tests; without, its single answer carries edits, files and deletes,
// applied to the same kind of workspace.
func codegenWork(ctx context.Context, rt *agent.Runtime, tests work.TestRunner, repo *gitx.Repo, run work.Input) (Record, error) {
	s, err := startCodegen(ctx, rt, repo, run)
	if err != nil {
		return s.rec, err
	}
	defer os.RemoveAll(s.scratch)
	useTools := rt.ToolsFor(agent.RoleCodegen)
	out, err := codegenAsk(ctx, rt, tests, repo, run, &s, useTools)
	if useTools && agent.IsToolsRefused(err) {
		// The server refused tool calling (remembered by now): one
		// answer, with the planned files in the prompt.
		out, err = codegenAsk(ctx, rt, tests, repo, run, &s, false)
	}
	if err != nil {
		return s.rec, err
	}
	// The model's answer is in: the rest is shared with Submit.
	return s.finish(run.Out, out)
}

// codegenAsk builds codegen's prompt and asks the model: in a tool loop
// when useTools, else for one answer carrying edits, files and deletes.
func codegenAsk(ctx context.Context, rt *agent.Runtime, runner work.TestRunner, repo *gitx.Repo, run work.Input, s *codegenStart, useTools bool) (codegenOutput, error) {
	base, scratch := s.rec.Base, s.scratch
	in, err := buildCodegenInput(ctx, rt, repo, run.Dir, base, s.fp, !useTools)
	if err != nil {
		return codegenOutput{}, err
	}
	s.rec.FixFrom = in.FixFrom
	tests := testRunner(rt, runner, repo, run.Task, base, filepath.Join(scratch, "tests"))
	req, err := codegenRequest(rt, run.Task, in, useTools, tests != nil)
	if err != nil {
		return codegenOutput{}, err
	}
	if !useTools {
		return askChecked(ctx, "checking the answer", func(ctx context.Context, validate func([]byte) (codegenOutput, error)) (codegenOutput, error) {
			return agent.JSON(ctx, rt.For(run), req, validate)
		}, s.checker.check)
	}
	ws, err := tools.NewWritable(repo, base, s.policy, tools.Options{Plan: s.fp, Scratch: filepath.Join(scratch, "files"), Tests: tests, MaxTestRuns: rt.Config.Tools.MaxTestRuns})
	if err != nil {
		return codegenOutput{}, fmt.Errorf("codegen: %w", err)
	}
	defer ws.Close()
	rt.WithOutline(ctx, ws, work.LocalRepo(repo, base))
	return askChecked(ctx, "checking the result", func(ctx context.Context, validate func([]byte) (codegenOutput, error)) (codegenOutput, error) {
		return agent.Loop(ctx, rt.For(run), req, ws, "End the run with your result; your edits so far are the change.", validate)
	}, func(ctx context.Context, raw []byte) (codegenOutput, error, error) {
		return finishCodegen(ctx, ws, raw)
	})
}

// askChecked asks the model through ask, validating each answer with check.
// check tells a problem with the answer, which is the model's to fix (it is
// prompted again), from a failure of the checking itself, such as git
// failing (infra): that is not the model's fault and stops the asking at
// once, reported as what failed.
func askChecked(ctx context.Context, what string,
	ask func(ctx context.Context, validate func([]byte) (codegenOutput, error)) (codegenOutput, error),
	check func(ctx context.Context, raw []byte) (out codegenOutput, problem, infra error),
) (codegenOutput, error) {
	vctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var infra error
	out, err := ask(vctx, func(raw []byte) (codegenOutput, error) {
		o, problem, ierr := check(vctx, raw)
		if ierr != nil {
			infra = ierr
			cancel(ierr)
			return o, ierr
		}
		return o, problem
	})
	if infra != nil {
		return out, fmt.Errorf("codegen: %s: %w", what, infra)
	}
	if err != nil {
		return out, fmt.Errorf("codegen: %w", err)
	}
	return out, nil
}

// scratchDir is the staging sub-folder holding codegen's working copy
// (edited files, test logs); it is removed before the run ends.
const scratchDir = ".scratch"

// codegenRequest renders the prompt into a model request: the system
// rules, the task data (plan, file plan, failures, repository; marked as
// the prefix worth caching), then the role's instructions.
func codegenRequest(rt *agent.Runtime, taskID string, in codegenInput, useTools, tests bool) (llm.Request, error) {
	system, err := rt.Prompt("system", nil)
	if err != nil {
		return llm.Request{}, err
	}
	data, err := rt.Prompt("codegen", in)
	if err != nil {
		return llm.Request{}, err
	}
	task, err := rt.Prompt("codegen_task", struct{ Tools, Tests, Fix bool }{useTools, tests, in.Failures != ""})
	if err != nil {
		return llm.Request{}, err
	}
	var schema json.RawMessage
	if useTools {
		schema, err = llm.SchemaFor(Finish{})
	} else {
		schema, err = llm.SchemaFor(Answer{})
	}
	if err != nil {
		return llm.Request{}, err
	}
	return llm.Request{
		Role: agent.RoleCodegen,
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: system},
			{Role: llm.RoleUser, Content: data, CacheBreakpoint: true},
			{Role: llm.RoleUser, Content: task},
		},
		Schema:     schema,
		SchemaName: "codegen",
		CacheKey:   agent.PromptCacheKey(taskID, agent.RoleCodegen),
	}, nil
}

// fillRecord completes the record from a validated result.
func fillRecord(rec *Record, out codegenOutput, fp artifact.FilePlan) {
	rec.Status = out.Status
	rec.Questions = out.Questions
	rec.Notes = strings.TrimSpace(out.Notes)
	rec.Files, rec.Deletes = []string{}, []string{}
	if out.Status != artifact.CodegenCompleted {
		return
	}
	planned := fp.Paths()
	touched := map[string]bool{}
	for p := range out.Files {
		rec.Files = append(rec.Files, p)
		touched[p] = true
	}
	rec.Deletes = append(rec.Deletes, out.Deletes...)
	for _, p := range out.Deletes {
		touched[p] = true
	}
	sort.Strings(rec.Files)
	sort.Strings(rec.Deletes)
	for p := range touched {
		if _, ok := planned[p]; !ok {
			rec.Unplanned = append(rec.Unplanned, p)
		}
	}
	sort.Strings(rec.Unplanned)
	for _, f := range fp.Files {
		if !touched[f.Path] {
			rec.Untouched = append(rec.Untouched, f.Path)
		}
	}
	rec.DiffStat = DiffStat(out.Patch)
}

// stageCodegen writes code/files/, code/diff.patch and code/codegen.json
// into the run's staging folder.
func stageCodegen(run work.Stage, rec Record, out codegenOutput) error {
	if rec.Status == artifact.CodegenCompleted {
		if err := os.MkdirAll(run.Dir, 0o755); err != nil {
			return fmt.Errorf("stage code: %w", err)
		}
		root, err := os.OpenRoot(run.Dir)
		if err != nil {
			return fmt.Errorf("stage code: %w", err)
		}
		defer root.Close()
		for _, p := range rec.Files {
			rel := path.Join(artifact.CodeFilesDir, p)
			if err := root.MkdirAll(path.Dir(rel), 0o755); err != nil {
				return fmt.Errorf("stage %s: %w", rel, err)
			}
			if err := root.WriteFile(rel, out.Files[p], 0o644); err != nil {
				return fmt.Errorf("stage %s: %w", rel, err)
			}
		}
		if len(out.Patch) > 0 {
			if err := run.Write(artifact.DiffFile, out.Patch); err != nil {
				return err
			}
		}
	}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", artifact.CodegenFile, err)
	}
	data = append(data, '\n')
	// What is staged must be exactly what `orch next` accepts.
	if _, err := artifact.DecodeCodegen(artifact.CodegenFile, data); err != nil {
		return fmt.Errorf("codegen built an invalid %s: %w", artifact.CodegenFile, err)
	}
	return run.Write(artifact.CodegenFile, data)
}

// previousAttempts counts the codegen results of the task: the one in
// code/ (which this run replaces) and those archived in history/.
func previousAttempts(taskDir string) int {
	n := 0
	if fi, err := os.Lstat(filepath.Join(taskDir, filepath.FromSlash(artifact.CodegenFile))); err == nil && fi.Mode().IsRegular() {
		n++
	}
	for _, h := range agent.HistoryFolders(taskDir) {
		if h.Failed {
			continue
		}
		if fi, err := os.Lstat(h.Join(taskDir, artifact.CodegenFile)); err == nil && fi.Mode().IsRegular() {
			n++
		}
	}
	return n
}

// ErrNoChange is matched by the codegen check of an answer whose files
// change nothing.
var ErrNoChange = errors.New("the change is empty")
