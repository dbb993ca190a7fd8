package advisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/agent/review"
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/clip"
	"github.com/orchdev/orch/internal/durable"
	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/evidence"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/llm"
	"github.com/orchdev/orch/internal/work"
)

// Files of the accept advisor, relative to the task folder.
const (
	File         = artifact.AdviceFile
	MarkdownFile = artifact.AdviceMarkdownFile
)

// Answer is the accept advisor's structured answer.
type Answer struct {
	Recommendation string   `json:"recommendation" enum:"accepted,changes_requested,rejected" desc:"the verdict you recommend to the person deciding"`
	Target         string   `json:"target,omitempty" enum:"codegen,review,planning" desc:"with changes_requested: where the task should go back to"`
	Confidence     string   `json:"confidence" enum:"low,medium,high"`
	Summary        string   `json:"summary" desc:"two or three sentences on the change and the evidence"`
	Reasons        []string `json:"reasons" desc:"why, each reason pointing at the evidence"`
	Risks          []string `json:"risks,omitempty" desc:"what could go wrong if the change is accepted"`
	Checks         []string `json:"checks,omitempty" desc:"what the person should look at before deciding"`
}

// Advice is accept/advice.json: the advisor's recommendation with the
// evidence it was given. It is advice only: the decision is the person's,
// recorded by `orch accept`.
type Advice struct {
	Task     string `json:"task"`
	Advisory string `json:"advisory"`
	Answer
	// Cautions are facts orch itself adds from the evidence, whatever the
	// model says (failing tests, a review that is not ok).
	Cautions   []string         `json:"cautions,omitempty"`
	Evidence   evidence.Summary `json:"evidence"`
	Command    string           `json:"command"`
	Provider   string           `json:"provider,omitempty"`
	Model      string           `json:"model,omitempty"`
	PlanSHA256 string           `json:"plan_sha256,omitempty"`
	DiffSHA256 string           `json:"diff_sha256,omitempty"`
	CreatedAt  time.Time        `json:"created_at"`
}

// advisoryNote is written into every advice.
const advisoryNote = "orch never decides: this is a recommendation; the decision is yours, recorded with `orch accept`"

// adviceVerdicts and the rest are the allowed values of an answer.
var (
	adviceVerdicts    = []string{artifact.VerdictAccepted, artifact.VerdictChangesRequested, artifact.VerdictRejected}
	adviceTargets     = []string{"codegen", "review", "planning"}
	adviceConfidences = []string{"low", "medium", "high"}
)

// CheckAnswer validates the advisor's answer.
func CheckAnswer(raw []byte) (Answer, error) {
	var a Answer
	if err := json.Unmarshal(raw, &a); err != nil {
		return a, fmt.Errorf("the answer does not match the schema: %w", err)
	}
	var p agent.Problems
	if !slices.Contains(adviceVerdicts, a.Recommendation) {
		p.Add("recommendation: expected one of %s, got %q", strings.Join(adviceVerdicts, ", "), a.Recommendation)
	}
	switch {
	case a.Recommendation == artifact.VerdictChangesRequested && !slices.Contains(adviceTargets, a.Target):
		p.Add("target: changes_requested needs one of %s, got %q", strings.Join(adviceTargets, ", "), a.Target)
	case a.Recommendation != artifact.VerdictChangesRequested && a.Target != "":
		p.Add("target: only with changes_requested, got %q with %q", a.Target, a.Recommendation)
	}
	if !slices.Contains(adviceConfidences, a.Confidence) {
		p.Add("confidence: expected one of %s, got %q", strings.Join(adviceConfidences, ", "), a.Confidence)
	}
	if strings.TrimSpace(a.Summary) == "" {
		p.Add("summary is blank")
	}
	nonBlank := 0
	for _, r := range a.Reasons {
		if strings.TrimSpace(r) != "" {
			nonBlank++
		}
	}
	if nonBlank == 0 {
		p.Add("reasons: give at least one non-blank reason")
	}
	return a, p.Err()
}

// adviceInput is the data of prompts/accept_advisor.md.
type adviceInput struct {
	Task     string
	Evidence string
	Plan     string
	Review   string
	Tests    string
	Diff     string
}

// Advise asks the accept advisor to summarise the evidence of task id (in
// accept) and recommend a verdict. It writes accept/advice.json and
// accept/advice.md atomically under the task's lock, logs the model call
// and an advice event, and never decides: the task stays in accept.
func Advise(ctx context.Context, rt *agent.Runtime, tasks work.Tasks, id string) (Advice, error) {
	var adv Advice
	var t taskView
	var spent work.Spent
	if err := tasks.Edit(ctx, id, func(l work.Locked) error {
		t = taskView{ID: l.ID(), Dir: l.Dir(), Phase: l.Phase(), Revision: l.Revision()}
		var err error
		spent, err = l.Spent()
		return err
	}); err != nil {
		return adv, err
	}
	if t.Phase != lifecycle.Accept {
		return adv, exit.New(exit.ErrRefused, "task %s is in %s: the accept advisor works in accept (after the tests)", t.ID, t.Phase)
	}
	ev := evidence.Gather(t.Dir)
	in := buildAdviceInput(rt, t, ev)
	req, err := adviceRequest(rt, in)
	if err != nil {
		return adv, err
	}
	p, _, model, err := rt.Provider(agent.RoleAcceptAdvisor)
	if err != nil {
		return adv, err
	}
	if req.Model == "" {
		req.Model = model
	}
	// The advice's budget: the task's spend as committed when it started.
	budget := work.Input{Task: t.ID, Phase: lifecycle.Accept, Spent: spent}
	defer rt.Forget(budget)
	logged := &adviceProvider{inner: p, rt: rt, tasks: tasks, id: t.ID, budget: budget}
	ans, resps, err := llm.CompleteJSON(ctx, logged, req, CheckAnswer, llm.DefaultJSONAttempts)
	if err != nil {
		var ie *llm.InvalidResponseError
		if errors.As(err, &ie) {
			return adv, fmt.Errorf("accept advisor: %w; its last answer began: %s", err, agent.ShortPath(strings.TrimSpace(ie.Raw)))
		}
		return adv, fmt.Errorf("accept advisor: %w", err)
	}
	adv = Advice{Task: t.ID, Advisory: advisoryNote, Answer: ans, Evidence: ev, CreatedAt: rt.Now().UTC().Truncate(time.Second)}
	last := resps[len(resps)-1]
	adv.Provider, adv.Model = last.Provider, last.Model
	adv.PlanSHA256 = ev.PlanSHA256
	if d := artifact.LoadDiff(t.Dir); d.OK() {
		adv.DiffSHA256 = d.SHA256
	}
	adv.Cautions = adviceCautions(ev, ans)
	adv.Command = acceptCommand(t.ID, ans)
	return adv, commitAdvice(ctx, tasks, t, adv)
}

// taskView is what the advisor reads of its task when it starts.
type taskView struct {
	ID, Dir  string
	Phase    lifecycle.Phase
	Revision int64
}

// buildAdviceInput renders the evidence for the prompt, within the
// configured budget.
func buildAdviceInput(rt *agent.Runtime, t taskView, ev evidence.Summary) adviceInput {
	budget := rt.Config.Context.MaxContextBytes
	if budget <= 0 {
		budget = agent.DefaultCodeContextBytes
	}
	in := adviceInput{Task: t.ID}
	evJSON, _ := json.MarshalIndent(ev, "", "  ")
	in.Evidence = string(evJSON)
	in.Plan, _ = agent.ReadFileHead(t.Dir, artifact.PlanFile, budget/4)
	if md, ok := agent.ReadFileHead(t.Dir, artifact.CodeReviewMarkdownFile, budget/8); ok {
		in.Review = md
	} else if cr := artifact.LoadCodeReview(t.Dir); cr.OK() {
		in.Review = review.CodeMarkdown(review.CodeRecord{OK: cr.Value.OK, Issues: issuesOf(cr.Value)})
	}
	var f agent.Failures
	if tr := artifact.LoadTestReport(t.Dir); tr.OK() {
		agent.ReadTestFailures(&f, t.Dir, tr.Value)
		f.TestFrom = "."
		if len(f.Suites) > 0 || f.TestError != "" {
			in.Tests = agent.RenderFailures(f)
		}
	}
	in.Tests = clip.Head(in.Tests, budget/8)
	in.Diff, _ = agent.ReadFileHead(t.Dir, artifact.DiffFile, budget/2)
	return in
}

// issuesOf tags a contract review's issues with no reviewer.
func issuesOf(r artifact.CodeReview) []review.CodeIssue {
	out := make([]review.CodeIssue, len(r.Issues))
	for i, is := range r.Issues {
		out[i] = review.CodeIssue{Issue: is}
	}
	return out
}

// adviceRequest renders the advisor's prompt into a request.
func adviceRequest(rt *agent.Runtime, in adviceInput) (llm.Request, error) {
	system, err := rt.Prompt("system", nil)
	if err != nil {
		return llm.Request{}, err
	}
	user, err := rt.Prompt("accept_advisor", in)
	if err != nil {
		return llm.Request{}, err
	}
	schema, err := llm.SchemaFor(Answer{})
	if err != nil {
		return llm.Request{}, err
	}
	req := llm.Request{
		Role:       agent.RoleAcceptAdvisor,
		Messages:   []llm.Message{{Role: llm.RoleSystem, Content: system}, {Role: llm.RoleUser, Content: user}},
		Schema:     schema,
		SchemaName: "advice",
		// Every role keeps a stable prefix and a prompt cache key.
		CacheKey: agent.PromptCacheKey(in.Task, agent.RoleAcceptAdvisor),
	}
	if rt.OnToken != nil {
		req.OnToken = func(tok string) { rt.OnToken(agent.RoleAcceptAdvisor, tok) }
	}
	return req, nil
}

// adviceCautions are the facts a person must not miss, derived in code.
func adviceCautions(ev evidence.Summary, a Answer) []string {
	var out []string
	if !ev.Complete {
		out = append(out, fmt.Sprintf("the tests are %s: accepting needs `orch accept --allow-incomplete`, which the decision records", ev.Tests))
	}
	if !strings.HasPrefix(ev.CodeReview, "ok") {
		out = append(out, "the code review is "+ev.CodeReview)
	}
	if ev.PlanReview != "ok" {
		out = append(out, "the plan review is "+ev.PlanReview)
	}
	if a.Recommendation == artifact.VerdictAccepted && len(out) > 0 {
		out = append(out, "the advisor recommends accepting despite the above")
	}
	return out
}

// acceptCommand is the command that would record the recommendation.
func acceptCommand(id string, a Answer) string {
	reason := "see accept/advice.md"
	for _, r := range a.Reasons {
		if r = strings.TrimSpace(r); r != "" {
			reason = r
			break
		}
	}
	reason = clip.Head(strings.ReplaceAll(reason, "\n", " "), 200)
	cmd := fmt.Sprintf("orch accept --task %s --verdict %s", id, a.Recommendation)
	if a.Target != "" {
		cmd += " --to " + a.Target
	}
	return cmd + " --reason " + shellQuote(reason)
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// commitAdvice writes the advice files and the advice event under the
// task's lock, refusing when the task moved while the advisor worked.
func commitAdvice(ctx context.Context, tasks work.Tasks, t taskView, adv Advice) error {
	data, err := json.MarshalIndent(adv, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", File, err)
	}
	data = append(data, '\n')
	return tasks.Edit(ctx, t.ID, func(l work.Locked) error {
		if l.Phase() != lifecycle.Accept || l.Revision() != t.Revision {
			return exit.New(exit.ErrRefused, "task %s changed while the advisor worked (now %s, revision %d → %d): the advice was discarded; run `orch advise` again", t.ID, l.Phase(), t.Revision, l.Revision())
		}
		dir := filepath.Join(l.Dir(), "accept")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("create %s: %w", dir, err)
		}
		durable.RemoveTemps(dir, "advice.")
		if err := durable.WriteFile(filepath.Join(l.Dir(), filepath.FromSlash(File)), data, 0o644); err != nil {
			return err
		}
		if err := durable.WriteFile(filepath.Join(l.Dir(), filepath.FromSlash(MarkdownFile)), []byte(Markdown(adv)), 0o644); err != nil {
			return err
		}
		return l.Append(event.Advice{
			Recommendation: adv.Recommendation, Target: adv.Target, Confidence: adv.Confidence,
			Files: []string{File, MarkdownFile}, Cautions: len(adv.Cautions),
		})
	})
}

// Markdown renders the advice for people.
func Markdown(a Advice) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Advice for task %s\n\n", a.Task)
	fmt.Fprintf(&b, "> %s\n\n", a.Advisory)
	verdict := a.Recommendation
	if a.Target != "" {
		verdict += " (back to " + a.Target + ")"
	}
	fmt.Fprintf(&b, "Recommendation: **%s**, confidence %s.\n\n%s\n", verdict, a.Confidence, strings.TrimSpace(a.Summary))
	list := func(title string, items []string) {
		if len(items) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n## %s\n\n", title)
		for _, it := range items {
			if it = strings.TrimSpace(it); it != "" {
				fmt.Fprintf(&b, "- %s\n", strings.ReplaceAll(it, "\n", "\n  "))
			}
		}
	}
	list("Reasons", a.Reasons)
	list("Risks", a.Risks)
	list("Check before deciding", a.Checks)
	list("Cautions (from the evidence)", a.Cautions)
	e := a.Evidence
	fmt.Fprintf(&b, "\n## Evidence\n\n- plan: %s\n- plan review: %s\n- code review: %s\n- tests: %s (%s)\n- change: %d file(s), +%d −%d\n",
		orDash(e.PlanTitle), e.PlanReview, e.CodeReview, e.Tests, e.TestSummary, len(e.Files), e.DiffAdded, e.DiffRemoved)
	fmt.Fprintf(&b, "\nTo record this recommendation as your decision:\n\n    %s\n", a.Command)
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// adviceProvider logs each call of the advisor as a model_call event (the
// advisor works outside a phase run, so the runtime's Call cannot).
type adviceProvider struct {
	inner llm.Provider
	rt    *agent.Runtime
	tasks work.Tasks
	id    string
	// budget is the advice's ledger key and committed spend.
	budget work.Input
}

func (p *adviceProvider) Name() string { return p.inner.Name() }

func (p *adviceProvider) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	p.rt.Limits(&req)
	booked, berr := p.rt.Reserve(p.budget, req.Model, req)
	if berr != nil {
		p.append(ctx, agent.BudgetEvent(lifecycle.Accept, req.Role, berr))
		return llm.Response{}, berr
	}
	resp, err := p.inner.Complete(ctx, req)
	p.rt.Settle(p.budget, booked, resp)
	p.append(ctx, p.rt.ModelCallEvent(lifecycle.Accept, p.inner.Name(), req, resp, err, false))
	return resp, err
}

// append logs an event under the task's lock.
func (p *adviceProvider) append(ctx context.Context, payload event.Payload) {
	_ = p.tasks.Edit(context.WithoutCancel(ctx), p.id, func(l work.Locked) error { return l.Append(payload) })
}
