package view

import (
	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/task"
)

// TaskCost is one task's model calls in `orch cost --json --all`.
type TaskCost struct {
	Task string `json:"task"`
	agent.CostSummary
}

// Cost is what `orch cost --json` prints: one object. With all, Tasks
// holds every task and Total their sum; otherwise Task, Phases and Total
// describe the one task.
type Cost struct {
	PricesAsOf string            `json:"prices_as_of"`
	Task       string            `json:"task,omitempty"`
	Phases     []agent.PhaseCost `json:"phases,omitempty"`
	Tasks      []TaskCost        `json:"tasks,omitempty"`
	Total      agent.CostLine    `json:"total"`
	// Budgets compares the task's spend with the limits of [budgets].
	Budgets []agent.BudgetUse `json:"budgets,omitempty"`
}

// CostOf sums the model calls of task id, or of every task when all is
// set (id is then ignored).
func CostOf(p *task.Project, id string, all bool) (Cost, error) {
	out := Cost{PricesAsOf: agent.PriceTableDate}
	if all {
		list, err := p.List()
		if err != nil {
			return out, err
		}
		out.Tasks = []TaskCost{}
		for _, s := range list {
			sum, err := sumTask(p, s.ID)
			if err != nil {
				return out, err
			}
			out.Tasks = append(out.Tasks, TaskCost{Task: s.ID, CostSummary: sum})
			out.Total.Add(sum.Total)
		}
		return out, nil
	}
	sum, err := sumTask(p, id)
	if err != nil {
		return out, err
	}
	out.Task, out.Phases, out.Total = id, sum.Phases, sum.Total
	cfg, err := config.Load(p.Dir)
	if err != nil {
		return out, err
	}
	out.Budgets = agent.BudgetUses(cfg.Budgets, sum)
	return out, nil
}

// sumTask sums one task's transcript.
func sumTask(p *task.Project, id string) (agent.CostSummary, error) {
	t, err := p.Open(id)
	if err != nil {
		return agent.CostSummary{}, err
	}
	evs, err := t.Transcript()
	if err != nil {
		return agent.CostSummary{}, err
	}
	return agent.SumCosts(task.ModelCalls(evs)), nil
}
