package review

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/gitx"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/llm"
	"github.com/orchdev/orch/internal/repomap"
	"github.com/orchdev/orch/internal/work"
)

// CodeAnswerIssue is one finding of a code reviewer, as the model writes it.
type CodeAnswerIssue struct {
	Severity string `json:"severity" enum:"info,minor,major,blocking" desc:"blocking: the change must not go on as it is"`
	Kind     string `json:"kind" enum:"code,plan,test,security,style" desc:"plan: the plan itself is wrong or incomplete, so the code cannot be right (sends the task back to planning)"`
	File     string `json:"file,omitempty" desc:"a path changed by the diff, when the issue is about one file"`
	Line     int    `json:"line,omitempty" desc:"a line number in the new version of file"`
	Message  string `json:"message" desc:"what is wrong and what to do instead"`
}

// CodeAnswer is one code reviewer's structured answer.
type CodeAnswer struct {
	OK      bool              `json:"ok" desc:"true when the change may go on to the tests as it is"`
	Summary string            `json:"summary,omitempty" desc:"one or two sentences"`
	Issues  []CodeAnswerIssue `json:"issues"`
}

// CodePersonaAnswer is a validated answer of one reviewer persona.
type CodePersonaAnswer struct {
	Persona string
	Answer  CodeAnswer
}

// CodeIssue is an issue of review/code-review.json: the contract's
// fields and the reviewer who raised it.
type CodeIssue struct {
	artifact.Issue
	Reviewer string `json:"reviewer"`
}

// CodeVerdict is one reviewer's verdict in review/code-review.json.
type CodeVerdict struct {
	ID       string `json:"id"`
	OK       bool   `json:"ok"`
	Summary  string `json:"summary,omitempty"`
	Issues   int    `json:"issues"`
	Blocking int    `json:"blocking"`
}

// CodeRecord is review/code-review.json as the code reviewers write
// it: the aggregated verdict, every issue, each reviewer's verdict.
type CodeRecord struct {
	OK         bool          `json:"ok"`
	Issues     []CodeIssue   `json:"issues"`
	Reviewers  []CodeVerdict `json:"reviewers"`
	DiffSHA256 string        `json:"diff_sha256,omitempty"`
	Base       string        `json:"base,omitempty"`
}

// CodeResult is what ReviewCode reports.
type CodeResult struct {
	Review CodeRecord
}

// AggregateCode combines the reviewers' answers, in order: the
// issues are all of theirs tagged with the reviewer, and the change is ok
// by the lifecycle's rule (lifecycle.CodeReviewVerdict): every reviewer ok,
// no issue blocking. The decision is made in code, never by a model.
func AggregateCode(answers []CodePersonaAnswer) CodeRecord {
	rec := CodeRecord{Issues: []CodeIssue{}, Reviewers: []CodeVerdict{}}
	var oks []bool
	var issues []artifact.Issue
	for _, a := range answers {
		v := CodeVerdict{ID: a.Persona, OK: a.Answer.OK, Summary: strings.TrimSpace(a.Answer.Summary), Issues: len(a.Answer.Issues)}
		for _, is := range a.Answer.Issues {
			if is.Severity == artifact.SeverityBlocking {
				v.Blocking++
			}
			issue := artifact.Issue{Severity: is.Severity, Kind: is.Kind, File: is.File, Line: is.Line, Message: strings.TrimSpace(is.Message)}
			rec.Issues = append(rec.Issues, CodeIssue{Reviewer: a.Persona, Issue: issue})
			issues = append(issues, issue)
		}
		oks = append(oks, v.OK)
		rec.Reviewers = append(rec.Reviewers, v)
	}
	rec.OK = lifecycle.CodeReviewVerdict(oks, issues)
	return rec
}

// Allowed values of a reviewer's answer.
var (
	codeReviewSeverities = []string{artifact.SeverityInfo, artifact.SeverityMinor, artifact.SeverityMajor, artifact.SeverityBlocking}
	codeReviewKinds      = []string{"code", "plan", "test", "security", "style"}
)

// CheckCodeAnswer validates a reviewer's answer: ok and issues
// present, severities and kinds from their enums, a file (when given) one
// of the diff's paths, a non-negative line and a non-blank message.
func CheckCodeAnswer(raw []byte, diffPaths map[string]bool) (CodeAnswer, error) {
	var shape struct {
		OK     *bool            `json:"ok"`
		Issues *json.RawMessage `json:"issues"`
	}
	var a CodeAnswer
	if err := json.Unmarshal(raw, &shape); err != nil {
		return a, fmt.Errorf("the answer does not match the schema: %w", err)
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return a, fmt.Errorf("the answer does not match the schema: %w", err)
	}
	var p agent.Problems
	if shape.OK == nil {
		p.Add("ok: missing (true or false)")
	}
	if shape.Issues == nil {
		p.Add("issues: missing (an array, empty when there is none)")
	}
	for i, is := range a.Issues {
		if !slices.Contains(codeReviewSeverities, is.Severity) {
			p.Add("issues[%d].severity: expected one of %s, got %q", i, strings.Join(codeReviewSeverities, ", "), is.Severity)
		}
		if !slices.Contains(codeReviewKinds, is.Kind) {
			p.Add("issues[%d].kind: expected one of %s, got %q", i, strings.Join(codeReviewKinds, ", "), is.Kind)
		}
		if is.File != "" && !diffPaths[is.File] {
			p.Add("issues[%d].file: %q is not a path of the diff (leave file empty for an issue about no single changed file)", i, agent.ShortPath(is.File))
		}
		if is.Line < 0 {
			p.Add("issues[%d].line: expected a positive line number, got %d", i, is.Line)
		}
		if strings.TrimSpace(is.Message) == "" {
			p.Add("issues[%d].message is blank", i)
		}
	}
	return a, p.Err()
}

// codePersonaFocus tells each standard persona what to look at.
var codePersonaFocus = map[string]string{
	"correctness":     "Does the code do what the plan says, for every input, including edge cases, errors and concurrency? Would it compile and run?",
	"tests":           "Do tests cover the plan's test plan and acceptance criteria, and would they fail without the change? Are they deterministic?",
	"security":        "Injection, path traversal, unsafe handling of untrusted input, secrets in code or logs, permissions, risky dependencies.",
	"maintainability": "Readability, naming, structure, duplication, error messages, documentation, fit with the repository's conventions.",
}

// codePersonas returns the configured personas, checked.
func codePersonas(rt *agent.Runtime) ([]string, error) {
	ps := rt.Config.Review.CodePersonas
	if len(ps) == 0 {
		ps = config.Default().Review.CodePersonas
	}
	for _, p := range ps {
		if !personaPattern.MatchString(p) {
			return nil, &config.Error{File: filepath.Join(rt.Project.OrchDir(), config.FileName), Key: "review.code_personas",
				Msg: fmt.Sprintf("persona %q: expected letters, digits, '-' or '_' (at most 64)", p)}
		}
	}
	return ps, nil
}

// codeReviewInput is the data of prompts/code_reviewer.md.
type codeReviewInput struct {
	Map      string // the ranked repository map around the change
	Plan     string
	FilePlan string
	Notes    string
	Paths    string
	Diff     string
}

// CodeWorker is the review phase's worker: every persona of
// [review] code_personas reviews the diff and the plan concurrently; the
// verdicts are aggregated in code into review/code-review.json and .md.
type CodeWorker struct {
	RT *agent.Runtime
}

// Phase returns lifecycle.Review.
func (CodeWorker) Phase() lifecycle.Phase { return lifecycle.Review }

// Check refuses unusable personas before the phase is marked running.
func (w CodeWorker) Check(ctx context.Context, in work.Input) error {
	_, err := codePersonas(w.RT)
	return err
}

// Work reviews the change.
func (w CodeWorker) Work(ctx context.Context, in work.Input) (work.Result[CodeResult], error) {
	var res work.Result[CodeResult]
	personas, err := codePersonas(w.RT)
	if err != nil {
		return res, err
	}
	rec, err := codeReviewWork(ctx, w.RT, in, personas)
	res.Value.Review = rec
	if err != nil {
		return res, err
	}
	status := lifecycle.ReviewChangesRequested
	if rec.OK {
		status = lifecycle.ReviewOK
	}
	blocking := 0
	for _, v := range rec.Reviewers {
		blocking += v.Blocking
	}
	res.Output = work.Output{Status: status, Summary: &event.PhaseSummary{
		OK: event.Ref(rec.OK), Issues: event.Ref(len(rec.Issues)), Blocking: event.Ref(blocking), Reviewers: event.Ref(len(rec.Reviewers)),
	}}
	return res, nil
}

// codeReviewWork asks every persona, aggregates and stages the review.
func codeReviewWork(ctx context.Context, rt *agent.Runtime, run work.Input, personas []string) (CodeRecord, error) {
	dir := run.Dir
	d := artifact.LoadDiff(dir)
	switch {
	case !d.Present:
		return CodeRecord{}, exit.New(exit.ErrRefused, "nothing to review: %s is missing (run `orch codegen`)", artifact.DiffFile)
	case d.Err != nil:
		return CodeRecord{}, exit.New(exit.ErrInvalid, "cannot review: %w", d.Err)
	}
	paths := map[string]bool{}
	var list []string
	for _, f := range d.Value.Files {
		for _, p := range []string{f.OldPath, f.NewPath} {
			if p != "" && !paths[p] {
				paths[p] = true
				list = append(list, p)
			}
		}
	}
	budget := rt.Config.Context.MaxContextBytes
	if budget <= 0 {
		budget = agent.DefaultCodeContextBytes
	}
	in := codeReviewInput{Paths: strings.Join(list, "\n")}
	in.Plan, _ = agent.ReadFileHead(dir, artifact.PlanFile, budget/4)
	if fp := artifact.LoadFilePlan(dir, artifact.LoadPlan(dir)); fp.OK() {
		in.FilePlan = agent.RenderFilePlan(fp.Value)
	}
	in.Notes = codegenNotes(dir)
	in.Diff, _ = agent.ReadFileHead(dir, artifact.DiffFile, budget*2/3)

	base := ""
	if cg := artifact.LoadCodegen(dir); cg.OK() {
		base = cg.Value.Base
	}
	// The map of the change's base: through the run's view when the
	// change was made on the run's base, else of the local repository at
	// the older commit (as the reviewers' tools read it).
	var view work.Repo
	if run.Repo != nil && (base == "" || base == run.Repo.Commit()) {
		view = run.Repo
	} else if repo, err := gitx.Open(ctx, rt.Project.RootDir()); err == nil {
		view = work.LocalRepo(repo, base)
	}
	if view != nil {
		if m, err := rt.RepoMap(ctx, view, repomap.Seeds{Plan: in.Plan, Paths: list}); err == nil {
			in.Map = m
		}
	}
	shared, err := rt.Prompt("code_review", in)
	if err != nil {
		return CodeRecord{}, err
	}
	ws, err := changeWorkspace(ctx, rt, run, agent.RoleCodeReviewer+":"+personas[0])
	if err != nil {
		return CodeRecord{}, err
	}
	schema, err := llm.SchemaFor(CodeAnswer{})
	if err != nil {
		return CodeRecord{}, err
	}
	panel := reviewPanel[CodePersonaAnswer]{
		Role: agent.RoleCodeReviewer, Shared: shared, Schema: schema, SchemaName: "code_review",
		Workspace: ws, Finish: "Give your verdict on the change.", TaskID: run.Task,
		Prompt: "code_reviewer",
		Focus: func(persona string) string {
			if focus := codePersonaFocus[persona]; focus != "" {
				return focus
			}
			return "Review the change from the point of view its name, " + persona + ", suggests."
		},
		Validate: func(persona string, raw []byte) (CodePersonaAnswer, error) {
			a, err := CheckCodeAnswer(raw, paths)
			return CodePersonaAnswer{Persona: persona, Answer: a}, err
		},
	}
	answers, err := panel.ask(ctx, rt, rt.For(run), personas)
	if err != nil {
		return CodeRecord{}, fmt.Errorf("code review: %w", err)
	}
	rec := AggregateCode(answers)
	rec.DiffSHA256 = d.SHA256
	if cg := artifact.LoadCodegen(dir); cg.OK() {
		rec.Base = cg.Value.Base
	}
	return rec, stageCodeReview(run.Out, rec)
}

// codegenNotes returns the notes and unplanned paths codegen recorded.
func codegenNotes(taskDir string) string {
	data, ok := agent.ReadFileHead(taskDir, artifact.CodegenFile, 64<<10)
	if !ok {
		return ""
	}
	var rec struct {
		Notes     string   `json:"notes"`
		Unplanned []string `json:"unplanned"`
	}
	if json.Unmarshal([]byte(data), &rec) != nil {
		return ""
	}
	notes := strings.TrimSpace(rec.Notes)
	if len(rec.Unplanned) > 0 {
		notes += fmt.Sprintf("\n(paths outside the file plan: %s)", strings.Join(rec.Unplanned, ", "))
	}
	return strings.TrimSpace(notes)
}

// stageCodeReview writes review/code-review.json and .md.
func stageCodeReview(run work.Stage, rec CodeRecord) error {
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", artifact.CodeReviewFile, err)
	}
	data = append(data, '\n')
	if _, err := artifact.DecodeCodeReview(artifact.CodeReviewFile, data); err != nil {
		return fmt.Errorf("code review built an invalid %s: %w", artifact.CodeReviewFile, err)
	}
	if err := run.Write(artifact.CodeReviewFile, data); err != nil {
		return err
	}
	return run.Write(artifact.CodeReviewMarkdownFile, []byte(CodeMarkdown(rec)))
}

// CodeMarkdown renders the aggregated review for people.
func CodeMarkdown(rec CodeRecord) string {
	var b strings.Builder
	b.WriteString("# Code review\n\n")
	if rec.OK {
		b.WriteString("Verdict: **ok** — every reviewer accepts the change and no issue blocks it.\n\n")
	} else {
		b.WriteString("Verdict: **changes requested**.\n\n")
	}
	b.WriteString("| reviewer | verdict | issues | blocking | summary |\n|---|---|---|---|---|\n")
	for _, v := range rec.Reviewers {
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %s |\n", v.ID, Verdict(v.OK), v.Issues, v.Blocking, reviewCell(v.Summary))
	}
	if len(rec.Issues) == 0 {
		b.WriteString("\nNo issues.\n")
		return b.String()
	}
	b.WriteString("\n## Issues\n\n")
	for _, f := range MergeFindings(rec.Issues) {
		where := ""
		if p := f.Place(); p != "" {
			where = " `" + p + "`"
		}
		fmt.Fprintf(&b, "- **%s** (%s, %s)%s: %s\n", f.Severity, f.Kind, f.By(), where, strings.ReplaceAll(f.Message, "\n", "\n  "))
	}
	return b.String()
}

// Finding is one finding of the code review as people read it: an issue
// that several reviewers raised (the same file, line and text, blanks and
// case aside) once, with the reviewers who raised it and the most severe
// of their severities. review/code-review.json keeps every reviewer's
// issue: the gate counts them.
type Finding struct {
	artifact.Issue
	Reviewers []string
}

// By names who raised the finding: "security", or "security, risk (2
// reviewers)".
func (f Finding) By() string {
	if len(f.Reviewers) == 1 {
		return f.Reviewers[0]
	}
	return fmt.Sprintf("%s (%d reviewers)", strings.Join(f.Reviewers, ", "), len(f.Reviewers))
}

// MergeFindings merges the issues that are the same finding, in the order
// each was first raised.
func MergeFindings(issues []CodeIssue) []Finding {
	var out []Finding
	at := map[string]int{}
	for _, is := range issues {
		key := is.Place() + "\x00" + strings.ToLower(strings.Join(strings.Fields(is.Message), " "))
		i, seen := at[key]
		if !seen {
			at[key] = len(out)
			out = append(out, Finding{Issue: is.Issue, Reviewers: []string{is.Reviewer}})
			continue
		}
		f := &out[i]
		if !slices.Contains(f.Reviewers, is.Reviewer) {
			f.Reviewers = append(f.Reviewers, is.Reviewer)
		}
		if severityRank(is.Severity) > severityRank(f.Severity) {
			f.Severity, f.Kind = is.Severity, is.Kind
		}
	}
	return out
}

// severityRank orders severities, info lowest.
func severityRank(s string) int {
	return slices.Index([]string{artifact.SeverityInfo, artifact.SeverityMinor, artifact.SeverityMajor, artifact.SeverityBlocking}, s)
}

// mdCell makes text safe inside a Markdown table cell.
func reviewCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}
