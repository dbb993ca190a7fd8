package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/gitx"
)

// maxAnswerProblems bounds how many problems of one answer are reported back.
const maxAnswerProblems = 10

// answerProblems collects what is wrong with an answer, for the model to fix.
type answerProblems struct{ list []string }

func (p *answerProblems) add(format string, args ...any) {
	if len(p.list) < maxAnswerProblems {
		p.list = append(p.list, fmt.Sprintf(format, args...))
	} else if len(p.list) == maxAnswerProblems {
		p.list = append(p.list, "(more problems left out)")
	}
}

// err returns the problems as one error, or nil.
func (p *answerProblems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	return errors.New(strings.Join(p.list, "; "))
}

// checkAnswerText refuses an answer that is not valid UTF-8 or that escapes
// a lone UTF-16 surrogate: encoding/json would silently turn either into
// U+FFFD and change the content.
func checkAnswerText(raw []byte) error {
	if !utf8.Valid(raw) {
		return errors.New("the answer is not valid UTF-8")
	}
	if esc, bad := artifact.LoneSurrogate(raw); bad {
		return fmt.Errorf("the answer escapes a lone UTF-16 surrogate \\u%s: content must be valid Unicode text", strings.ToUpper(esc[2:]))
	}
	return nil
}

// CheckCodegenAnswer validates a codegen answer without looking at the
// repository: the status, every path (artifact.CheckPath), content size,
// text (UTF-8, no NUL byte: binary content is refused), duplicates, and
// what each status needs. Every problem found is reported.
func CheckCodegenAnswer(raw []byte) (CodegenAnswer, error) {
	var a CodegenAnswer
	if err := checkAnswerText(raw); err != nil {
		return a, err
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return a, fmt.Errorf("the answer does not match the schema: %w", err)
	}
	var p answerProblems
	switch a.Status {
	case artifact.CodegenCompleted, artifact.CodegenPlanUnclear, artifact.CodegenFailed:
	default:
		p.add("status: expected \"completed\", \"plan_unclear\" or \"failed\", got %q", a.Status)
	}
	switch a.Status {
	case artifact.CodegenCompleted:
		if len(a.Files) == 0 && len(a.Deletes) == 0 {
			p.add("status completed needs at least one file in files or one path in deletes")
		}
	case artifact.CodegenPlanUnclear:
		open := 0
		for _, q := range a.Questions {
			if strings.TrimSpace(q.Text) != "" {
				open++
			}
		}
		if open == 0 {
			p.add("status plan_unclear needs at least one question with a non-blank text in questions")
		}
	case artifact.CodegenFailed:
		if strings.TrimSpace(a.Notes) == "" {
			p.add("status failed needs notes saying why")
		}
	}
	if len(a.Files)+len(a.Deletes) > artifact.MaxCodeFiles {
		p.add("%d paths: at most %d are accepted", len(a.Files)+len(a.Deletes), artifact.MaxCodeFiles)
		return a, p.err()
	}
	seen := map[string]string{}   // path → where it was named
	folded := map[string]string{} // lower-cased path → path
	claim := func(where, path string) {
		if err := artifact.CheckPath(path); err != nil {
			p.add("%s: %v", where, err)
			return
		}
		if prev, dup := seen[path]; dup {
			p.add("%s: %q is also named at %s: name each path once", where, path, prev)
			return
		}
		if other, dup := folded[strings.ToLower(path)]; dup {
			p.add("%s: %q differs from %q only in case", where, path, other)
			return
		}
		seen[path], folded[strings.ToLower(path)] = where, path
	}
	for i, f := range a.Files {
		where := fmt.Sprintf("files[%d].path", i)
		claim(where, f.Path)
		switch {
		case len(f.Content) > artifact.MaxCodeFileBytes:
			p.add("files[%d].content (%s): %d bytes, at most %d are accepted", i, strconv.Quote(shortPath(f.Path)), len(f.Content), artifact.MaxCodeFileBytes)
		case strings.IndexByte(f.Content, 0) >= 0:
			p.add("files[%d].content (%s): contains a NUL byte: binary content is not accepted, write text files only", i, strconv.Quote(shortPath(f.Path)))
		case !utf8.ValidString(f.Content):
			p.add("files[%d].content (%s): not valid UTF-8", i, strconv.Quote(shortPath(f.Path)))
		}
	}
	for i, d := range a.Deletes {
		claim(fmt.Sprintf("deletes[%d]", i), d)
	}
	for i, q := range a.Questions {
		if strings.TrimSpace(q.Text) == "" {
			p.add("questions[%d].text is blank", i)
		}
		if strings.TrimSpace(q.ID) == "" {
			a.Questions[i].ID = "q" + strconv.Itoa(i+1)
		}
	}
	return a, p.err()
}

// short cuts a path for a message.
func shortPath(s string) string {
	if len(s) > 120 {
		s, _ = headText(s, 120)
		return s + "…"
	}
	return s
}

// codegenChecker checks an answer against the base commit and computes
// its patch.
type codegenChecker struct {
	repo *gitx.Repo
	base string
}

// check validates raw. problem is the model's to fix; infra is a failure
// of orch or git that no answer can fix.
func (c codegenChecker) check(ctx context.Context, raw []byte) (out codegenOutput, problem, infra error) {
	a, err := CheckCodegenAnswer(raw)
	out.Answer = a
	if err != nil {
		return out, err, nil
	}
	if a.Status != artifact.CodegenCompleted {
		return out, nil, nil
	}
	var p answerProblems
	for i, d := range a.Deletes {
		_, ok, err := c.repo.ShowFile(ctx, c.base, d)
		switch {
		case err != nil && isGitFailure(err):
			return out, nil, err
		case err != nil:
			p.add("deletes[%d]: %q cannot be deleted: %v", i, d, err)
		case !ok:
			p.add("deletes[%d]: %q does not exist at the base commit", i, d)
		}
	}
	if err := p.err(); err != nil {
		return out, err, nil
	}
	files := make(map[string][]byte, len(a.Files))
	for _, f := range a.Files {
		files[f.Path] = []byte(f.Content)
	}
	patch, err := c.repo.DiffFiles(ctx, c.base, files, a.Deletes)
	if err != nil {
		if isGitFailure(err) {
			return out, nil, err
		}
		// The paths are fine but the change is not a plain file edit: a
		// symbolic link, submodule or directory at base, or a file where a
		// folder is needed.
		return out, fmt.Errorf("the change cannot be applied to the base commit: %w", err), nil
	}
	if len(bytes.TrimSpace(patch)) == 0 {
		return out, fmt.Errorf("%w: every file you returned is identical to the base commit; return the changed content", ErrNoChange), nil
	}
	d, err := artifact.ParseDiff(bytes.NewReader(patch))
	if err != nil {
		return out, nil, fmt.Errorf("orch's own diff does not parse: %w", err)
	}
	if len(d.Files) == 0 {
		return out, nil, errors.New("orch's own diff names no file")
	}
	out.Patch = patch
	return out, nil, nil
}

// isGitFailure reports whether err is git failing (or the context ending)
// rather than a refusal of the paths or shape of a change.
func isGitFailure(err error) bool {
	var gerr *gitx.Error
	return errors.As(err, &gerr) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
