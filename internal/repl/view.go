package repl

import (
	"errors"
	"path/filepath"
	"sort"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/task"
	"github.com/orchdev/orch/internal/termtext"
)

// view is what the session knows of the project before a line: read fresh
// from disk every time (the CLI in another terminal may have moved the
// task), never cached.
type view struct {
	project *task.Project // nil when no .orch was found
	task    string        // the current task; "" when none
	dir     string        // the current task's folder
	phase   string        // "" when state.json cannot be read
	// status is actors.<phase>.status, except that a run whose process
	// is gone (killed) is "interrupted", not "running".
	status string
	open   []artifact.Question
	// problem says why there is no task or no phase, for the banner.
	problem string
}

// observe reads the project found from dir, its current task, that task's
// phase and, in planning, the plan's open blocking questions.
func observe(dir string) view {
	var v view
	p, err := task.FindProject(dir)
	if err != nil {
		v.problem = "no orch project here: run `orch init` at the top of your git repository"
		return v
	}
	v.project = p
	id, err := p.Current()
	if err != nil {
		if !errors.Is(err, task.ErrNoCurrent) {
			v.problem = err.Error()
		}
		return v
	}
	t, err := p.Open(id)
	if err != nil {
		v.problem = "the current task " + id + " cannot be opened: " + err.Error()
		return v
	}
	v.task, v.dir = t.ID, t.Dir
	st, err := t.ReadState()
	if err != nil {
		v.problem = err.Error()
		return v
	}
	v.phase = string(st.Phase)
	a := st.Actor(st.Phase)
	v.status = string(a.Status)
	if a.Interrupted() {
		v.status = "interrupted"
	}
	if v.phase == "planning" {
		if plan := artifact.LoadPlan(t.Dir); plan.OK() {
			v.open = plan.Value.OpenQuestions()
		}
	}
	return v
}

// context is the part of the view a line's meaning depends on.
func (v view) context() lineContext {
	c := lineContext{Project: v.project != nil, Task: v.task, Phase: v.phase}
	if len(v.open) > 0 {
		c.Open = v.open[0].ID
	}
	return c
}

// artifactPath is the path of a task-relative artifact of the current task.
func (v view) artifactPath(rel string) string {
	return filepath.Join(v.dir, filepath.FromSlash(rel))
}

// taskIDs lists the project's task ids, for completion.
func taskIDs(dir string) []string {
	p, err := task.FindProject(dir)
	if err != nil {
		return nil
	}
	list, err := p.List()
	if err != nil {
		return nil
	}
	ids := make([]string, 0, len(list))
	for _, s := range list {
		// A name that would print as something else is never offered
		// (docs/terminal.md): completion writes it to the terminal.
		if termtext.Line(s.ID) == s.ID {
			ids = append(ids, s.ID)
		}
	}
	sort.Strings(ids)
	return ids
}

// questionIDs lists the open question ids of the current task.
func questionIDs(dir string) []string {
	v := observe(dir)
	ids := make([]string, 0, len(v.open))
	for _, q := range v.open {
		if termtext.Line(q.ID) == q.ID {
			ids = append(ids, q.ID)
		}
	}
	return ids
}
