package view

import (
	"context"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/evidence"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/nextstep"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/task"
)

// Status is `orch status --json`: the contract's fields plus run, the
// command that moves the task on ("codegen", "answer q1 TEXT"; "" when
// none), without the leading "orch".
type Status struct {
	orchestrator.StatusView
	Run string `json:"run"`
	// Commit is, in done, orch's commit of the change found in the
	// branch by its trailers ("" when nothing was committed: then
	// Warnings says so).
	Commit string `json:"commit,omitempty"`
}

// StatusOf reads task id's status with its budget warnings and the step
// that moves it on (internal/nextstep). It opens the task and its
// observation cache once: in planning the open question is read from the
// plan the decision loaded through the cache, not parsed again.
func StatusOf(o *orchestrator.Orchestrator, id string) (Status, nextstep.Step, error) {
	t, err := o.Project.Open(id)
	if err != nil {
		return Status{}, nextstep.Step{}, err
	}
	// What is committed: state.json, or the transcript's last durable
	// state when a command was interrupted before replacing state.json.
	committed, pending, err := t.CommittedState()
	if err != nil {
		return Status{}, nextstep.Step{}, err
	}
	c := evidence.OpenCache(o.Project.Dir, t.Dir, t.ID)
	v, err := o.StatusCached(c, t, committed, pending)
	open := ""
	if err == nil && v.Phase == lifecycle.Planning {
		open = nextstep.OpenQuestionOf(c.LoadPlan(t.Dir), v.Phase)
	}
	c.Save()
	if err != nil {
		return Status{}, nextstep.Step{}, err
	}
	v.Warnings = budgetWarnings(o.Project, t)
	s := nextstep.For(v, open)
	st := Status{StatusView: v, Run: s.Args}
	if v.Phase == lifecycle.Done {
		l := evidence.FindLanded(context.Background(), o.Project.Root, id)
		switch {
		case l.Err != nil:
			st.Warnings = append(st.Warnings, "could not look for orch's commit of the change: "+l.Err.Error())
		case l.SHA != "":
			st.Commit = l.SHA
		default:
			if w := nextstep.DoneWithoutCommit(o.Project, id); w != "" {
				st.Warnings = append(st.Warnings, w)
			}
		}
	}
	return st, s, nil
}

// BudgetWarnings lists the budgets at 80 % or more. Status stays useful
// when the configuration or the transcript cannot be read: that is
// reported by the commands that need them.
func BudgetWarnings(p *task.Project, id string) []string {
	t, err := p.Open(id)
	if err != nil {
		return nil
	}
	return budgetWarnings(p, t)
}

func budgetWarnings(p *task.Project, t *task.Task) []string {
	cfg, err := config.Load(p.Dir)
	if err != nil {
		return nil
	}
	evs, err := t.Transcript()
	if err != nil {
		return nil
	}
	return agent.BudgetWarnings(cfg.Budgets, agent.SumCosts(task.ModelCalls(evs)))
}
