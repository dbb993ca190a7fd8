package task

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/orchdev/orch/internal/lifecycle"
)

// Summary is one line of `orch list`.
type Summary struct {
	ID        string          `json:"id"`
	Phase     lifecycle.Phase `json:"phase,omitempty"`
	Revision  int64           `json:"revision,omitempty"`
	UpdatedAt time.Time       `json:"updated_at"`
	Err       string          `json:"error,omitempty"` // why state.json could not be read; the task is listed anyway
	// Disagree is set when state.json disagrees with the transcript's
	// committed state (a *DisagreeError's message): Phase, Revision and
	// UpdatedAt are then the transcript's.
	Disagree string `json:"state_disagrees,omitempty"`
}

// List summarizes every task folder, sorted by id, reading only each
// task's state.json. Folders being created (.tmp-*) are skipped; a task
// whose state.json is invalid is listed with Err set.
func (p *Project) List() ([]Summary, error) {
	names, err := p.Folders()
	if err != nil {
		return nil, err
	}
	out := make([]Summary, 0, len(names))
	for _, name := range names {
		out = append(out, Summary{ID: name})
	}

	r, err := openDirReader(p.TasksDir())
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	defer r.Close()
	workers := min(len(out), 4*runtime.GOMAXPROCS(0))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 0, 4096)
			for {
				i := int(next.Add(64)) - 64
				if i >= len(out) {
					return
				}
				for j := i; j < min(i+64, len(out)); j++ {
					summarize(r, p.TasksDir(), &out[j], &buf)
				}
			}
		}()
	}
	wg.Wait()
	return out, nil
}

// Folders lists the names of the task folders, sorted, as List lists
// them, without reading them: folders being created (.tmp-*) are left
// out, a folder whose name is not a valid id is not (ValidID says why).
func (p *Project) Folders() ([]string, error) {
	entries, err := os.ReadDir(p.TasksDir())
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), strayPrefix) {
			out = append(out, e.Name())
		}
	}
	slices.Sort(out)
	return out, nil
}

// summarize fills s with the task's committed state (see CommittedState):
// state.json, validated like ReadState, when the transcript's last state
// agrees with it; the transcript's last state when state.json is one step
// behind it (an interrupted commit) or disagrees with it (then Disagree
// says so).
func summarize(r *dirReader, tasksDir string, s *Summary, buf *[]byte) {
	if err := ValidID(s.ID); err != nil {
		s.Err = err.Error()
		return
	}
	t := &Task{ID: s.ID}
	st, p := r.readState(s.ID, buf)
	if p == nil && st.Task != "" && st.Task != s.ID {
		p = &fieldProblem{Field: "$.task", Expected: fmt.Sprintf("%q (the task folder's name)", s.ID), Got: fmt.Sprintf("%q", st.Task)}
	}
	if p != nil {
		s.Err = t.stateErr(StateFile, p).Error()
		return
	}
	s.Phase, s.Revision, s.UpdatedAt = st.Phase, st.Revision, st.UpdatedAt
	t.Dir = filepath.Join(tasksDir, s.ID)
	states, err := t.loggedStates()
	if err != nil || len(states) == 0 {
		return // an unreadable log is for `orch verify` to report
	}
	logged, _, derr := committed(s.ID, st, states, false)
	s.Phase, s.Revision, s.UpdatedAt = logged.Phase, logged.Revision, logged.UpdatedAt
	if derr != nil {
		s.Disagree = derr.Error()
	}
}
