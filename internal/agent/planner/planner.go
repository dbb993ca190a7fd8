package planner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/clip"
	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/llm"
	"github.com/orchdev/orch/internal/repomap"
	"github.com/orchdev/orch/internal/work"
)

// Result reports one planning round.
type Result struct {
	// Round is actors.planning.round after the round.
	Round int
	// Status is the planning sub-state orch decided (see lifecycle.PlanningStatus).
	Status string
	// Plan is planning.ai.json as written.
	Plan artifact.Plan
	// Open lists the open blocking questions.
	Open []artifact.Question
	// Restored lists question ids whose answer the model dropped or changed
	// and orch put back; Dropped those the model tried to answer itself.
	Restored, Dropped []string
	// Provider and Model served the planner.
	Provider, Model string
}

// Worker is the planning phase's worker: one planning round. The model
// is given the brief, the repository context, the current plan with the
// person's answers, reviewers' feedback on it and the minutes so far, and
// returns the whole plan; orch validates it (re-prompting on errors),
// forces id and brief, keeps every answer a person gave, and stages
// planning.ai.json, plan.md, plan.files.json and meeting.jsonl. The
// sub-state is decided in code.
type Worker struct {
	RT *agent.Runtime
}

// Phase returns lifecycle.Planning.
func (Worker) Phase() lifecycle.Phase { return lifecycle.Planning }

// Check reports a provider that cannot be built (no key, bad
// configuration) before the phase is marked running.
func (w Worker) Check(ctx context.Context, in work.Input) error {
	_, _, _, err := w.RT.Provider(agent.RolePlanner)
	return err
}

// Work runs one planning round.
func (w Worker) Work(ctx context.Context, in work.Input) (work.Result[Result], error) {
	var res work.Result[Result]
	p, cfg, model, err := w.RT.Provider(agent.RolePlanner)
	if err != nil {
		return res, err
	}
	res.Value.Provider = p.Name()
	res.Value.Model = planFirstSet(model, cfg.Model)
	res.Output, err = planRound(ctx, w.RT, in, &res.Value)
	return res, err
}

// planRound is the work of one round, run without the task's lock.
func planRound(ctx context.Context, rt *agent.Runtime, run work.Input, res *Result) (work.Output, error) {
	in, err := readPlanningInputs(run.Dir)
	if err != nil {
		return work.Output{}, err
	}
	round := run.Round(lifecycle.Planning) + 1
	ws, err := agent.ReadOnlyWorkspace(ctx, rt, run, agent.RolePlanner)
	if err != nil {
		return work.Output{}, err
	}
	view, err := agent.RunView(run)
	if err != nil {
		return work.Output{}, err
	}
	req, err := plannerRequest(ctx, rt, view, run.Task, round, in, ws == nil)
	if err != nil {
		return work.Output{}, err
	}
	built, err := agent.Ask(ctx, rt.For(run), req, ws, "Give the complete plan.", func(raw []byte) (builtPlan, error) {
		return buildPlan(raw, run.Task, in.Brief, in.Known, run.Root)
	})
	if err != nil {
		return work.Output{}, agent.Wrap(fmt.Sprintf("planning round %d", round), err)
	}
	if err := stagePlan(run.Out, built); err != nil {
		return work.Output{}, err
	}

	// Decide the sub-state from the staged files exactly as `orch next`
	// will read them once they are in place.
	plan := artifact.LoadPlan(run.Out.Dir)
	fp := artifact.LoadFilePlan(run.Out.Dir, plan)
	if !plan.OK() {
		return work.Output{}, fmt.Errorf("planning round %d: the staged plan does not read back: %v", round, plan.Err)
	}
	status := lifecycle.PlanningStatus(lifecycle.Snapshot{Plan: plan, FilePlan: fp})
	open := plan.Value.OpenQuestions()

	line := roundLine(round, string(status), rt.Now(), res.Provider, res.Model, built)
	if err := stageMeeting(run.Out, in.Meeting, line); err != nil {
		return work.Output{}, err
	}

	res.Round, res.Status, res.Plan, res.Open = round, string(status), plan.Value, open
	res.Restored, res.Dropped = built.Restored, built.Dropped
	return work.Output{
		Status: status,
		Round:  round,
		Summary: &event.PhaseSummary{
			Round: event.Ref(round), Status: string(status), OpenQuestions: planNonNil(QuestionIDs(open)),
			Files: event.Ref(len(plan.Value.FilePlan)), RestoredAnswers: planNonNil(built.Restored),
		},
	}, nil
}

// planningInputs is what a round reads from the task folder.
type planningInputs struct {
	Brief string
	// PlanData is the current planning.ai.json (nil when absent); Plan its
	// decoding.
	PlanData []byte
	Plan     artifact.Loaded[artifact.Plan]
	// FilePlanData is plan.files.json when a person wrote one that differs
	// from the plan's file_plan.
	FilePlanData []byte
	Meeting      []byte
	Entries      []meetingEntry
	Known        []knownAnswer
	// Feedback is the latest plan review of the current plan, rendered.
	Feedback string
}

func readPlanningInputs(taskDir string) (planningInputs, error) {
	var in planningInputs
	brief, err := os.ReadFile(filepath.Join(taskDir, filepath.FromSlash(artifact.BriefFile)))
	if err != nil {
		return in, exit.New(exit.ErrInvalid, "cannot read the brief %s: %w", artifact.BriefFile, err)
	}
	in.Brief = strings.TrimSpace(string(brief))
	if in.Brief == "" {
		return in, exit.New(exit.ErrInvalid, "the brief %s is empty: write what the change should do", artifact.BriefFile)
	}
	in.Plan = artifact.LoadPlan(taskDir)
	if in.Plan.Present {
		data, err := os.ReadFile(filepath.Join(taskDir, filepath.FromSlash(artifact.PlanFile)))
		if err != nil {
			return in, fmt.Errorf("read %s: %w", artifact.PlanFile, err)
		}
		in.PlanData = data
	}
	if fp := artifact.LoadFilePlan(taskDir, in.Plan); fp.Present && !fp.Value.Inferred {
		data, err := os.ReadFile(filepath.Join(taskDir, filepath.FromSlash(artifact.FilePlanFile)))
		if err == nil && !sameFiles(fp, in.Plan) {
			in.FilePlanData = data
		}
	}
	meeting, err := os.ReadFile(filepath.Join(taskDir, filepath.FromSlash(artifact.MeetingFile)))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return in, fmt.Errorf("read %s: %w", artifact.MeetingFile, err)
	}
	in.Meeting = meeting
	in.Entries = parseMeeting(meeting)
	in.Known = knownAnswers(in.Plan, in.Entries)
	in.Feedback = planReviewFeedback(taskDir, in.Plan)
	return in, nil
}

// sameFiles reports whether plan.files.json says what the plan's file_plan
// says.
func sameFiles(fp artifact.Loaded[artifact.FilePlan], plan artifact.Loaded[artifact.Plan]) bool {
	if !fp.OK() || !plan.OK() || len(fp.Value.Files) != len(plan.Value.FilePlan) {
		return false
	}
	for i, f := range fp.Value.Files {
		if f != plan.Value.FilePlan[i] {
			return false
		}
	}
	return true
}

// knownAnswers returns the answers a person gave: those in the current
// plan (the source of truth), then answers recorded by `orch answer` for
// questions the plan no longer has (a plan replaced or broken by hand).
func knownAnswers(plan artifact.Loaded[artifact.Plan], entries []meetingEntry) []knownAnswer {
	var out []knownAnswer
	inPlan := map[string]bool{}
	if plan.OK() {
		for _, q := range plan.Value.Questions {
			inPlan[q.ID] = true
			if q.Answer != nil && strings.TrimSpace(*q.Answer) != "" {
				out = append(out, knownAnswer{ID: q.ID, Text: q.Text, Blocking: q.Blocking, Answer: *q.Answer})
			}
		}
	}
	for _, k := range meetingAnswers(entries) {
		if !inPlan[k.ID] {
			out = append(out, k)
		}
	}
	return out
}

// plannerPromptData is what prompts/planner.md is rendered with.
type plannerPromptData struct {
	Task    string
	Round   int
	HasPlan bool
}

// plannerRequest builds the model request of a round: the system rules,
// everything read from the task and the repository as data (each part
// delimited; the prefix worth caching), then the planner's instructions.
// The repository part is the ranked map; with withFiles (the planner has
// no tools) also the lines around the identifiers the brief names.
func plannerRequest(ctx context.Context, rt *agent.Runtime, view work.Repo, id string, round int, in planningInputs, withFiles bool) (llm.Request, error) {
	system, err := rt.Prompt("system", nil)
	if err != nil {
		return llm.Request{}, err
	}
	role, err := rt.Prompt("planner", plannerPromptData{Task: id, Round: round, HasPlan: in.PlanData != nil})
	if err != nil {
		return llm.Request{}, err
	}
	schema, err := llm.SchemaFor(planDraft{})
	if err != nil {
		return llm.Request{}, err
	}

	var b strings.Builder
	fmt.Fprintf(&b, "Task %s, planning round %d. Everything below is data for you to plan from.\n\n", id, round)
	b.WriteString("## Brief (the person's request)\n\n")
	b.WriteString(agent.DataBlock("brief", in.Brief))
	if in.PlanData != nil {
		b.WriteString("\n## Current plan (planning/planning.ai.json, with the person's answers)\n\n")
		if in.Plan.Err != nil {
			fmt.Fprintf(&b, "The file is not valid: %v\n\n", in.Plan.Err)
		}
		b.WriteString(agent.DataBlock("current-plan", clip.Bytes(string(in.PlanData), 256<<10)))
	}
	if in.FilePlanData != nil {
		b.WriteString("\n## File plan edited by a person (planning/plan.files.json); it differs from the plan's file_plan\n\n")
		b.WriteString(agent.DataBlock("file-plan", clip.Bytes(string(in.FilePlanData), 64<<10)))
	}
	if len(in.Known) > 0 {
		b.WriteString("\n## The person's answers (orch keeps them in the plan; do not answer questions yourself)\n\n")
		var lines strings.Builder
		for _, k := range in.Known {
			fmt.Fprintf(&lines, "%s: %s\n  answer: %s\n", k.ID, k.Text, k.Answer)
		}
		b.WriteString(agent.DataBlock("answers", lines.String()))
	}
	if in.Feedback != "" {
		b.WriteString("\n## Plan reviewers' verdicts on the current plan (address the issues)\n\n")
		b.WriteString(agent.DataBlock("plan-review", in.Feedback))
	}
	if len(in.Entries) > 0 {
		b.WriteString("\n## Planning minutes so far (planning/meeting.jsonl)\n\n")
		b.WriteString(agent.DataBlock("meeting", renderMeeting(in.Entries, maxMeetingPrompt)))
	}

	var priority []string
	if in.Plan.OK() {
		for _, f := range in.Plan.Value.FilePlan {
			priority = append(priority, f.Path)
		}
	}
	var kw strings.Builder
	kw.WriteString(in.Brief)
	for _, k := range in.Known {
		kw.WriteString("\n" + k.Answer)
	}
	policy, err := rt.Policy()
	if err != nil {
		return llm.Request{}, err
	}
	rc, err := agent.ViewFileList(ctx, view, policy, agent.ContextBudget(rt.Config, b.Len()+len(system)+len(role)))
	if err != nil {
		return llm.Request{}, fmt.Errorf("gather repository context: %w", err)
	}
	// The map, and without tools the lines around the task's
	// identifiers: never whole files (README, "What a model sees").
	seeds := repomap.Seeds{Brief: kw.String(), Paths: priority}
	if in.PlanData != nil {
		seeds.Plan = string(in.PlanData)
	}
	rt.WithTaskContext(ctx, &rc, view, seeds, withFiles)
	b.WriteString("\n## Repository\n\n")
	b.WriteString(agent.DataBlock("repository", rc.Render()))

	return llm.Request{
		Role: agent.RolePlanner,
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: system},
			{Role: llm.RoleUser, Content: b.String(), CacheBreakpoint: true},
			{Role: llm.RoleUser, Content: role},
		},
		CacheKey:   agent.PromptCacheKey(id, agent.RolePlanner),
		Schema:     schema,
		SchemaName: "plan",
	}, nil
}

// stagePlan writes planning.ai.json, plan.md and plan.files.json into the
// run's staging folder.
func stagePlan(run work.Stage, built builtPlan) error {
	if err := run.Write(artifact.PlanFile, built.Data); err != nil {
		return err
	}
	if err := run.Write(artifact.PlanMarkdownFile, []byte(RenderMarkdown(built.Plan))); err != nil {
		return err
	}
	files := built.Plan.FilePlan
	if files == nil {
		files = []artifact.FileEntry{}
	}
	return run.WriteJSON(artifact.FilePlanFile, artifact.FilePlan{Files: files})
}

// stageMeeting stages the minutes: the lines so far and this round's.
func stageMeeting(run work.Stage, prev []byte, line meetingLine) error {
	data, err := line.encode()
	if err != nil {
		return err
	}
	if len(prev) > 0 && prev[len(prev)-1] != '\n' {
		prev = append(prev, '\n')
	}
	return run.Write(artifact.MeetingFile, append(append([]byte(nil), prev...), data...))
}
