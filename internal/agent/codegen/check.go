package codegen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/agent/tools"
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/gitx"
	"github.com/orchdev/orch/internal/patch"
	"github.com/orchdev/orch/internal/safepath"
	"github.com/orchdev/orch/internal/strictjson"
	"github.com/orchdev/orch/internal/visibility"
)

// checkAnswerText refuses an answer that is not valid UTF-8 or that escapes
// a lone UTF-16 surrogate: encoding/json would silently turn either into
// U+FFFD and change the content.
func checkAnswerText(raw []byte) error {
	if !utf8.Valid(raw) {
		return errors.New("the answer is not valid UTF-8")
	}
	if esc, bad := strictjson.LoneSurrogate(raw); bad {
		return fmt.Errorf("the answer escapes a lone UTF-16 surrogate \\u%s: content must be valid Unicode text", strings.ToUpper(esc[2:]))
	}
	return nil
}

// CheckAnswer validates a codegen answer without looking at the
// repository: the status, every path (harmless forms such as "./a" made
// plain, then artifact.CheckPath), content size, text (UTF-8, no NUL byte:
// binary content is refused), duplicates, and what each status needs.
// Every problem found is reported.
func CheckAnswer(raw []byte) (Answer, error) {
	var a Answer
	if err := checkAnswerText(raw); err != nil {
		return a, err
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return a, fmt.Errorf("the answer does not match the schema: %w", err)
	}
	var p agent.Problems
	checkStatus(&p, a.Status, a.Questions, a.Notes)
	if a.Status == artifact.CodegenCompleted && len(a.Edits)+len(a.Files)+len(a.Deletes) == 0 {
		p.Add("status completed needs at least one entry in edits, files or deletes")
	}
	if len(a.Files)+len(a.Deletes) > artifact.MaxCodeFiles || len(a.Edits) > artifact.MaxCodeFiles {
		p.Add("%d paths: at most %d are accepted", len(a.Edits)+len(a.Files)+len(a.Deletes), artifact.MaxCodeFiles)
		return a, p.Err()
	}
	seen := map[string]string{}   // path → where it was named
	folded := map[string]string{} // safepath.FoldCase of a path → path
	claim := func(where string, path *string, again bool) {
		*path = tools.NormalizePath(*path)
		if err := artifact.CheckPath(*path); err != nil {
			p.Add("%s: %v", where, err)
			return
		}
		if prev, dup := seen[*path]; dup && !(again && strings.HasPrefix(prev, "edits[")) {
			p.Add("%s: %q is also named at %s: name each path once (several edits of one file are fine)", where, *path, prev)
			return
		}
		if other, dup := folded[safepath.FoldCase(*path)]; dup && other != *path {
			p.Add("%s: %q differs from %q only in case", where, *path, other)
			return
		}
		if _, dup := seen[*path]; !dup {
			seen[*path], folded[safepath.FoldCase(*path)] = where, *path
		}
	}
	for i := range a.Edits {
		e := &a.Edits[i]
		claim(fmt.Sprintf("edits[%d].path", i), &e.Path, true)
		switch {
		case e.OldString == "":
			p.Add("edits[%d].old_string is empty: to create or rewrite a whole file put it in files", i)
		case e.OldString == e.NewString:
			p.Add("edits[%d]: old_string and new_string are the same", i)
		}
		if strings.IndexByte(e.NewString, 0) >= 0 {
			p.Add("edits[%d].new_string (%s): contains a NUL byte: binary content is not accepted", i, strconv.Quote(agent.ShortPath(e.Path)))
		}
	}
	for i := range a.Files {
		f := &a.Files[i]
		claim(fmt.Sprintf("files[%d].path", i), &f.Path, false)
		switch {
		case len(f.Content) > artifact.MaxCodeFileBytes:
			p.Add("files[%d].content (%s): %d bytes, at most %d are accepted", i, strconv.Quote(agent.ShortPath(f.Path)), len(f.Content), artifact.MaxCodeFileBytes)
		case strings.IndexByte(f.Content, 0) >= 0:
			p.Add("files[%d].content (%s): contains a NUL byte: binary content is not accepted, write text files only", i, strconv.Quote(agent.ShortPath(f.Path)))
		case !utf8.ValidString(f.Content):
			p.Add("files[%d].content (%s): not valid UTF-8", i, strconv.Quote(agent.ShortPath(f.Path)))
		}
	}
	for i := range a.Deletes {
		claim(fmt.Sprintf("deletes[%d]", i), &a.Deletes[i], false)
	}
	normalizeQuestions(&p, a.Questions)
	return a, p.Err()
}

// checkStatus checks the status and what it needs besides the change.
func checkStatus(p *agent.Problems, status string, questions []Question, notes string) {
	switch status {
	case artifact.CodegenCompleted:
	case artifact.CodegenPlanUnclear:
		open := 0
		for _, q := range questions {
			if strings.TrimSpace(q.Text) != "" {
				open++
			}
		}
		if open == 0 {
			p.Add("status plan_unclear needs at least one question with a non-blank text in questions")
		}
	case artifact.CodegenFailed:
		if strings.TrimSpace(notes) == "" {
			p.Add("status failed needs notes saying why")
		}
	default:
		p.Add("status: expected \"completed\", \"plan_unclear\" or \"failed\", got %q", status)
	}
}

// normalizeQuestions refuses blank questions and numbers those without id.
func normalizeQuestions(p *agent.Problems, qs []Question) {
	for i, q := range qs {
		if strings.TrimSpace(q.Text) == "" {
			p.Add("questions[%d].text is blank", i)
		}
		if strings.TrimSpace(q.ID) == "" {
			qs[i].ID = "q" + strconv.Itoa(i+1)
		}
	}
}

// CheckFinish validates the arguments of codegen's finish tool.
func CheckFinish(raw []byte) (Finish, error) {
	var a Finish
	if err := checkAnswerText(raw); err != nil {
		return a, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return a, fmt.Errorf("the arguments do not match finish's parameters {status, notes?, questions?} (the change is made with the edit tools, not here): %w", err)
	}
	var p agent.Problems
	checkStatus(&p, a.Status, a.Questions, a.Notes)
	normalizeQuestions(&p, a.Questions)
	return a, p.Err()
}

// codegenChecker checks a single answer against the base commit and the
// file plan, and computes its patch.
type codegenChecker struct {
	repo   *gitx.Repo
	base   string
	plan   artifact.FilePlan
	policy visibility.Policy
}

// check validates raw. problem is the model's to fix; infra is a failure
// of orch or git that no answer can fix.
func (c codegenChecker) check(ctx context.Context, raw []byte) (out codegenOutput, problem, infra error) {
	a, err := CheckAnswer(raw)
	out.Status, out.Questions, out.Notes = a.Status, a.Questions, a.Notes
	if err != nil {
		return out, err, nil
	}
	if a.Status != artifact.CodegenCompleted {
		return out, nil, nil
	}
	// The answer is applied to a fresh workspace: the same checks as the
	// tools (file plan, intents, exact matches), in memory.
	ws, err := tools.NewWritable(c.repo, c.base, c.policy, tools.Options{Plan: c.plan})
	if err != nil {
		return out, nil, err
	}
	var p agent.Problems
	apply := func(where, result string, isErr bool, err error) error {
		if err != nil {
			return err
		}
		if isErr {
			p.Add("%s: %s", where, result)
		}
		return nil
	}
	for i, f := range a.Files {
		res, isErr, err := ws.Call(ctx, tools.WriteFile, mustArgs(map[string]any{"path": f.Path, "content": f.Content}))
		if err := apply(fmt.Sprintf("files[%d]", i), res, isErr, err); err != nil {
			return out, nil, err
		}
	}
	for i, e := range a.Edits {
		res, isErr, err := ws.Call(ctx, tools.EditFile, mustArgs(map[string]any{"path": e.Path, "old_string": e.OldString, "new_string": e.NewString, "replace_all": e.ReplaceAll}))
		if err := apply(fmt.Sprintf("edits[%d]", i), res, isErr, err); err != nil {
			return out, nil, err
		}
	}
	for i, d := range a.Deletes {
		res, isErr, err := ws.Call(ctx, tools.DeleteFile, mustArgs(map[string]any{"path": d}))
		if err := apply(fmt.Sprintf("deletes[%d]", i), res, isErr, err); err != nil {
			return out, nil, err
		}
	}
	if err := p.Err(); err != nil {
		return out, err, nil
	}
	return changeOf(ctx, ws, out)
}

// finishCodegen validates codegen's finish call against the workspace.
func finishCodegen(ctx context.Context, ws *tools.Workspace, raw []byte) (out codegenOutput, problem, infra error) {
	a, err := CheckFinish(raw)
	out.Status, out.Questions, out.Notes = a.Status, a.Questions, a.Notes
	if err != nil {
		return out, err, nil
	}
	if a.Status != artifact.CodegenCompleted {
		return out, nil, nil
	}
	if len(ws.Touched()) == 0 {
		return out, fmt.Errorf("%w: you have not changed any file; make the change with the edit tools before finishing with status completed", ErrNoChange), nil
	}
	return changeOf(ctx, ws, out)
}

// changeOf completes out with the workspace's change: the patch git
// computes against the base and the files it touches.
func changeOf(ctx context.Context, ws *tools.Workspace, out codegenOutput) (codegenOutput, error, error) {
	files, deletes := ws.Edits()
	diff, err := ws.Patch(ctx)
	if err != nil {
		if isGitFailure(err) {
			return out, nil, err
		}
		// The paths are fine but the change is not a plain file edit: a
		// symbolic link, submodule or directory at base, or a file where a
		// folder is needed.
		return out, fmt.Errorf("the change cannot be applied to the base commit: %w", err), nil
	}
	if len(bytes.TrimSpace(diff)) == 0 {
		return out, fmt.Errorf("%w: every file you changed is identical to the base commit", ErrNoChange), nil
	}
	d, err := patch.Parse(bytes.NewReader(diff))
	if err != nil {
		return out, nil, fmt.Errorf("orch's own diff does not parse: %w", err)
	}
	if len(d.Files) == 0 {
		return out, nil, errors.New("orch's own diff names no file")
	}
	// Only what the patch changes is staged: a file edited back to its
	// base content is no part of the change.
	inPatch := map[string]bool{}
	for _, f := range d.Files {
		inPatch[f.NewPath], inPatch[f.OldPath] = true, true
	}
	out.Files = map[string][]byte{}
	for p, c := range files {
		if inPatch[p] {
			out.Files[p] = c
		}
	}
	for _, p := range deletes {
		if inPatch[p] {
			out.Deletes = append(out.Deletes, p)
		}
	}
	out.Patch = diff
	return out, nil, nil
}

// mustArgs encodes tool arguments built by orch.
func mustArgs(v map[string]any) json.RawMessage {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return data
}

// isGitFailure reports whether err is git failing (or the context ending)
// rather than a refusal of the paths or shape of a change.
func isGitFailure(err error) bool {
	var gerr *gitx.Error
	return errors.As(err, &gerr) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
