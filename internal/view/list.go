package view

import (
	"strings"
	"time"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/nextstep"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/task"
)

// ListEntry is one task in `orch list --json` and MCP's list_tasks.
type ListEntry struct {
	ID        string     `json:"id"`
	Phase     string     `json:"phase,omitempty"`
	Revision  int64      `json:"revision,omitempty"`
	UpdatedAt *time.Time `json:"updated_at,omitempty"`
	Current   bool       `json:"current"`
	Title     string     `json:"title,omitempty" jsonschema:"the plan's title, else the brief's first line"`
	Waits     string     `json:"waits,omitempty" jsonschema:"what moves the task on, in words (waits for your answer to q1, waits for the planner, done, …), as the board's cards say it"`
	Error     string     `json:"error,omitempty"`
	// StateDisagrees is set when state.json disagrees with the
	// transcript's committed state, which Phase and Revision then show.
	StateDisagrees string `json:"state_disagrees,omitempty"`
}

// List is every task of o's project, the current one marked, each with
// its title and what it waits for (the words the board's cards use,
// nextstep.Waits). A task whose state cannot be read has neither.
func List(o *orchestrator.Orchestrator) ([]ListEntry, error) {
	p := o.Project
	tasks, err := p.List()
	if err != nil {
		return nil, err
	}
	cur, _ := p.Current()
	entries := make([]ListEntry, 0, len(tasks))
	for _, t := range tasks {
		e := ListEntry{ID: t.ID, Phase: string(t.Phase), Revision: t.Revision, Current: t.ID == cur, Error: t.Err, StateDisagrees: t.Disagree}
		if !t.UpdatedAt.IsZero() {
			u := t.UpdatedAt
			e.UpdatedAt = &u
		}
		if e.Error == "" {
			e.Title, e.Waits = describe(o, t.ID)
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// describe is task id's title and what it waits for; either is "" when
// it cannot be read.
func describe(o *orchestrator.Orchestrator, id string) (title, waits string) {
	t, err := o.Project.Open(id)
	if err != nil {
		return "", ""
	}
	title = Title(t)
	v, err := o.Status(id)
	if err != nil {
		return title, ""
	}
	waits, _ = nextstep.Waits(nextstep.For(v, nextstep.OpenQuestion(t, v.Phase)), v)
	return title, waits
}

// Title is task t's title: the plan's, else the brief's first line (a
// Markdown heading's marks dropped), else "".
func Title(t *task.Task) string {
	if p := artifact.LoadPlan(t.Dir); p.OK() && strings.TrimSpace(p.Value.Title) != "" {
		return strings.TrimSpace(p.Value.Title)
	}
	b, _, err := artifact.ReadRegular(t.Dir, artifact.BriefFile, 4096)
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return strings.TrimSpace(strings.TrimLeft(line, "# "))
}
