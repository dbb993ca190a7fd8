package view

import (
	"time"

	"github.com/orchdev/orch/internal/task"
)

// ListEntry is one task in `orch list --json`.
type ListEntry struct {
	ID        string     `json:"id"`
	Phase     string     `json:"phase,omitempty"`
	Revision  int64      `json:"revision,omitempty"`
	UpdatedAt *time.Time `json:"updated_at,omitempty"`
	Current   bool       `json:"current"`
	Error     string     `json:"error,omitempty"`
	// StateDisagrees is set when state.json disagrees with the
	// transcript's committed state, which Phase and Revision then show.
	StateDisagrees string `json:"state_disagrees,omitempty"`
}

// List is every task of project p, the current one marked.
func List(p *task.Project) ([]ListEntry, error) {
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
		entries = append(entries, e)
	}
	return entries, nil
}
