package task

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
)

// Summary is one line of `orch list`.
type Summary struct {
	ID        string    `json:"id"`
	Phase     string    `json:"phase,omitempty"`
	Revision  int64     `json:"revision,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
	Err       string    `json:"error,omitempty"` // why state.json could not be read; the task is listed anyway
}

// List summarizes every task folder, sorted by id, reading only each
// task's state.json. Folders being created (.tmp-*) are skipped; a task
// whose state.json is invalid is listed with Err set.
func (p *Project) List() ([]Summary, error) {
	entries, err := os.ReadDir(p.TasksDir())
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	out := make([]Summary, 0, len(entries))
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), strayPrefix) {
			continue
		}
		out = append(out, Summary{ID: e.Name()})
	}
	slices.SortFunc(out, func(a, b Summary) int { return strings.Compare(a.ID, b.ID) })

	workers := min(len(out), 4*runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(out); i += workers {
				p.summarize(&out[i])
			}
		}()
	}
	wg.Wait()
	return out, nil
}

// summarize fills s from the task's state.json.
func (p *Project) summarize(s *Summary) {
	if err := ValidID(s.ID); err != nil {
		s.Err = err.Error()
		return
	}
	t := &Task{ID: s.ID, Dir: filepath.Join(p.TasksDir(), s.ID)}
	st, err := t.ReadState()
	if err != nil {
		s.Err = err.Error()
		return
	}
	s.Phase, s.Revision, s.UpdatedAt = st.Phase, st.Revision, st.UpdatedAt
}
