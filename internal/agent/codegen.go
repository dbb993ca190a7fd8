package agent

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

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/gitx"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/llm"
	"github.com/orchdev/orch/internal/orchestrator"
)

// CodegenAnswer is the codegen model's structured answer. It is untrusted:
// checkCodegenAnswer validates it before anything is staged.
type CodegenAnswer struct {
	Status    string            `json:"status" enum:"completed,plan_unclear,failed" desc:"completed: files and deletes hold the change; plan_unclear: the plan is too unclear to implement, ask in questions; failed: you cannot do it, say why in notes"`
	Files     []CodegenFile     `json:"files" desc:"every file you create or change, with its complete new content (not a diff)"`
	Deletes   []string          `json:"deletes" desc:"repository paths of files to delete"`
	Questions []CodegenQuestion `json:"questions,omitempty" desc:"with plan_unclear: what the plan must answer"`
	Notes     string            `json:"notes,omitempty" desc:"anything the reviewers should know, e.g. why a file outside the file plan was needed"`
}

// CodegenFile is one file of a codegen answer.
type CodegenFile struct {
	Path    string `json:"path" desc:"repository-relative path with /"`
	Content string `json:"content" desc:"the complete content of the file"`
}

// CodegenQuestion is a question codegen asks about the plan.
type CodegenQuestion struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// CodegenRecord is code/codegen.json as the codegen agent writes it: the
// contract's fields (status, base, questions) and what was done.
type CodegenRecord struct {
	Status    string            `json:"status"`
	Base      string            `json:"base"`
	Questions []CodegenQuestion `json:"questions,omitempty"`
	Notes     string            `json:"notes,omitempty"`
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

// CodegenResult is what Codegen reports.
type CodegenResult struct {
	Phase  orchestrator.PhaseResult
	Record CodegenRecord
}

// codegenOutput is a validated answer with the patch orch computed for it.
type codegenOutput struct {
	Answer CodegenAnswer
	Patch  []byte
}

// Codegen runs the codegen phase of task id: the model writes the full
// content of the planned files against the repository's HEAD (the base);
// orch validates every path and content, stages code/files/, computes
// code/diff.patch with git and records code/codegen.json. On a re-run after
// a regression the prompt carries the previous attempt's failures.
func Codegen(ctx context.Context, rt *Runtime, o *orchestrator.Orchestrator, id string) (CodegenResult, error) {
	var res CodegenResult
	t, err := o.Project.Open(id)
	if err != nil {
		return res, err
	}
	if err := checkPlanForCodegen(t.Dir); err != nil {
		return res, err
	}
	repo, err := gitx.Open(ctx, o.Project.Root)
	if err != nil {
		return res, err
	}
	pr, err := o.RunPhase(ctx, id, lifecycle.Codegen, func(ctx context.Context, run *orchestrator.Run) (orchestrator.Outcome, error) {
		rec, err := codegenWork(ctx, rt, repo, run)
		res.Record = rec
		if err != nil {
			return orchestrator.Outcome{}, err
		}
		return orchestrator.Outcome{Status: rec.Status, Attempt: rec.Attempt, Summary: map[string]any{
			"status": rec.Status, "base": rec.Base, "files": len(rec.Files), "deletes": len(rec.Deletes),
			"unplanned": rec.Unplanned, "attempt": rec.Attempt,
		}}, nil
	})
	res.Phase = pr
	return res, err
}

// checkPlanForCodegen refuses to call a model without a valid plan and a
// non-empty file plan.
func checkPlanForCodegen(taskDir string) error {
	plan := artifact.LoadPlan(taskDir)
	switch {
	case !plan.Present:
		return &orchestrator.Error{Kind: orchestrator.ErrRefused, Msg: fmt.Sprintf("orch: codegen needs a plan: %s is missing", artifact.PlanFile)}
	case plan.Err != nil:
		return &orchestrator.Error{Kind: orchestrator.ErrInvalid, Msg: "orch: codegen needs a valid plan: " + plan.Err.Error(), Err: plan.Err}
	}
	fp := artifact.LoadFilePlan(taskDir, plan)
	switch {
	case fp.Err != nil:
		return &orchestrator.Error{Kind: orchestrator.ErrInvalid, Msg: "orch: codegen needs a valid file plan: " + fp.Err.Error(), Err: fp.Err}
	case !fp.Present || len(fp.Value.Files) == 0:
		return &orchestrator.Error{Kind: orchestrator.ErrRefused, Msg: fmt.Sprintf("orch: codegen needs a file plan: %s is missing and %s has no file_plan; `orch next` routes the task to plan_review", artifact.FilePlanFile, artifact.PlanFile)}
	}
	return nil
}

// codegenWork is the phase's work: prompt, model call, validation, staging.
func codegenWork(ctx context.Context, rt *Runtime, repo *gitx.Repo, run *orchestrator.Run) (CodegenRecord, error) {
	var rec CodegenRecord
	dir := run.Task.Dir
	plan := artifact.LoadPlan(dir)
	fp := artifact.LoadFilePlan(dir, plan)
	if !plan.OK() || !fp.OK() || len(fp.Value.Files) == 0 {
		if err := checkPlanForCodegen(dir); err != nil {
			return rec, err
		}
		return rec, fmt.Errorf("codegen: the plan changed while codegen started; run it again")
	}
	base, err := repo.Head(ctx)
	if err != nil {
		return rec, fmt.Errorf("codegen: the base commit is the repository's HEAD: %w", err)
	}
	rec.Base = base
	rec.Attempt = previousAttempts(dir) + 1

	in, err := buildCodegenInput(ctx, rt, repo, dir, base, fp.Value)
	if err != nil {
		return rec, err
	}
	rec.FixFrom = in.FixFrom
	req, err := codegenRequest(rt, in)
	if err != nil {
		return rec, err
	}

	// A failure of git itself while checking an answer is not the model's
	// fault: it stops the re-prompting at once and is returned as it is.
	vctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var infra error
	check := codegenChecker{repo: repo, base: base}
	out, err := JSON(vctx, rt.For(run), req, func(raw []byte) (codegenOutput, error) {
		out, problem, ierr := check.check(vctx, raw)
		if ierr != nil {
			infra = ierr
			cancel(ierr)
			return out, ierr
		}
		return out, problem
	})
	if infra != nil {
		return rec, fmt.Errorf("codegen: checking the answer: %w", infra)
	}
	if err != nil {
		return rec, fmt.Errorf("codegen: %w", err)
	}
	fillRecord(&rec, out, fp.Value)
	if err := stageCodegen(run, rec, out); err != nil {
		return rec, err
	}
	return rec, nil
}

// codegenRequest renders the prompt into a model request.
func codegenRequest(rt *Runtime, in codegenInput) (llm.Request, error) {
	system, err := rt.Prompt("system", nil)
	if err != nil {
		return llm.Request{}, err
	}
	user, err := rt.Prompt("codegen", in)
	if err != nil {
		return llm.Request{}, err
	}
	schema, err := llm.SchemaFor(CodegenAnswer{})
	if err != nil {
		return llm.Request{}, err
	}
	return llm.Request{
		Role:       RoleCodegen,
		Messages:   []llm.Message{{Role: llm.RoleSystem, Content: system}, {Role: llm.RoleUser, Content: user}},
		Schema:     schema,
		SchemaName: "codegen",
		MaxTokens:  rt.Config.Context.MaxOutputTokens,
	}, nil
}

// fillRecord completes the record from a validated answer.
func fillRecord(rec *CodegenRecord, out codegenOutput, fp artifact.FilePlan) {
	a := out.Answer
	rec.Status = a.Status
	rec.Questions = a.Questions
	rec.Notes = strings.TrimSpace(a.Notes)
	rec.Files, rec.Deletes = []string{}, []string{}
	if a.Status != artifact.CodegenCompleted {
		return
	}
	planned := fp.Paths()
	touched := map[string]bool{}
	for _, f := range a.Files {
		rec.Files = append(rec.Files, f.Path)
		touched[f.Path] = true
	}
	rec.Deletes = append(rec.Deletes, a.Deletes...)
	for _, p := range a.Deletes {
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
func stageCodegen(run *orchestrator.Run, rec CodegenRecord, out codegenOutput) error {
	if rec.Status == artifact.CodegenCompleted {
		if err := os.MkdirAll(run.Staging, 0o755); err != nil {
			return fmt.Errorf("stage code: %w", err)
		}
		root, err := os.OpenRoot(run.Staging)
		if err != nil {
			return fmt.Errorf("stage code: %w", err)
		}
		defer root.Close()
		for _, f := range out.Answer.Files {
			rel := path.Join(artifact.CodeFilesDir, f.Path)
			if err := root.MkdirAll(path.Dir(rel), 0o755); err != nil {
				return fmt.Errorf("stage %s: %w", rel, err)
			}
			if err := root.WriteFile(rel, []byte(f.Content), 0o644); err != nil {
				return fmt.Errorf("stage %s: %w", rel, err)
			}
		}
		if len(out.Patch) > 0 {
			p, err := run.Stage(artifact.DiffFile)
			if err != nil {
				return err
			}
			if err := os.WriteFile(p, out.Patch, 0o644); err != nil {
				return fmt.Errorf("stage %s: %w", artifact.DiffFile, err)
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
	p, err := run.Stage(artifact.CodegenFile)
	if err != nil {
		return err
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		return fmt.Errorf("stage %s: %w", artifact.CodegenFile, err)
	}
	return nil
}

// previousAttempts counts the codegen results of the task: the one in
// code/ (which this run replaces) and those archived in history/.
func previousAttempts(taskDir string) int {
	n := 0
	if fi, err := os.Lstat(filepath.Join(taskDir, filepath.FromSlash(artifact.CodegenFile))); err == nil && fi.Mode().IsRegular() {
		n++
	}
	for _, h := range historyFolders(taskDir) {
		if h.failed {
			continue
		}
		if fi, err := os.Lstat(h.join(taskDir, artifact.CodegenFile)); err == nil && fi.Mode().IsRegular() {
			n++
		}
	}
	return n
}

// ErrNoChange is matched by the codegen check of an answer whose files
// change nothing.
var ErrNoChange = errors.New("the change is empty")
