package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/task"
)

// StagingDir holds the output of phases in progress:
// .staging/<phase>-<run>/ with task-relative paths inside.
const StagingDir = ".staging"

// Run is one run of a phase's work, handed to the PhaseWork function. The
// work writes its artifacts below Staging using task-relative paths
// (e.g. Staging/test/report.json); nothing it writes becomes visible in
// the task folder until the run is committed.
type Run struct {
	Task    *task.Task
	Phase   lifecycle.Phase
	ID      string     // run id, unique per run
	State   task.State // the state after the phase was marked running
	Staging string     // absolute path of the staging folder
	o       *Orchestrator
	// prevStatus is the actor's status before the run, restored when the
	// run fails (a failed run is recorded in last_run, not as a sub-state).
	prevStatus lifecycle.Status
}

// Stage returns the absolute path in the staging folder for a
// task-relative artifact path, creating its parent folders.
func (r *Run) Stage(rel string) (string, error) {
	p := filepath.Join(r.Staging, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", fmt.Errorf("stage %s: %w", rel, err)
	}
	return p, nil
}

// Log appends a non-state event (model_call, budget_exceeded, …) to the
// transcript, taking the task's lock briefly.
func (r *Run) Log(ctx context.Context, p event.Payload) error {
	lock, err := r.Task.Lock(ctx, r.o.Wait)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	return r.Task.Append(task.Event{TS: r.o.now(), Payload: p})
}

// Outcome is what a phase's work reports.
type Outcome struct {
	// Status is the phase actor's status after the run, e.g. "completed".
	Status string
	// Round and Attempt, when not zero, are set on actors.<phase>
	// (planning rounds, codegen attempts).
	Round, Attempt int
	// Summary is recorded in the phase_finished event.
	Summary map[string]any
}

// PhaseWork does a phase's work outside the task's lock.
type PhaseWork func(ctx context.Context, run *Run) (Outcome, error)

// PhaseResult reports a committed run.
type PhaseResult struct {
	Task       string
	Phase      lifecycle.Phase
	Entered    *NextResult // the transition taken into the phase, if any
	Outcome    Outcome
	Archived   string // where the previous attempt's artifacts went
	Revision   int64
	FailedKept string // on failure: where the run's partial output was kept
}

// RunPhase runs phase p's work for task id, following the protocol of
// contract section 5: under the lock, enter the phase if needed (its normal
// transition must hold) and mark it running; without the lock, do the
// work into a staging folder; under the lock again, check that the
// revision did not move, archive the previous attempt's artifacts and move
// the staged ones into place in one logged event.
func (o *Orchestrator) RunPhase(ctx context.Context, id string, p lifecycle.Phase, work PhaseWork) (PhaseResult, error) {
	res := PhaseResult{Task: id, Phase: p}
	run := &Run{Phase: p, ID: o.runID(), o: o}
	err := o.withTask(ctx, id, func(t *task.Task, st task.State) error {
		run.Task = t
		cur := st.Phase
		if cur != p {
			if cur.Terminal() {
				return refused(fmt.Sprintf("orch: task %s is done (terminal): `orch redo %s` re-opens it", t.ID, p))
			}
			snap, err := o.observe(ctx, t, cur)
			if err != nil {
				return err
			}
			d := o.Table.Decide(cur, snap)
			nr, err := o.take(t, st, d, snap, p)
			if err != nil {
				return err
			}
			res.Entered = &nr
			if st, err = t.ReadState(); err != nil {
				return err
			}
		}
		if pid, ok := st.Actor(p).LivePID(); ok {
			return &Error{Kind: ErrRefused, Msg: fmt.Sprintf("orch: %s is already running for task %s (pid %d); wait for it or stop that process", p, t.ID, pid)}
		}
		next := st.Clone()
		next.Revision = st.Revision + 1
		next.UpdatedAt = o.now()
		a := next.Actor(p)
		if a.Status != lifecycle.StatusRunning {
			run.prevStatus = a.Status
		}
		a.Status = lifecycle.StatusRunning
		a.PID = os.Getpid()
		a.Run = run.ID
		a.StartedAt = next.UpdatedAt.Format(time.RFC3339Nano)
		next.Actors[p] = a
		ev := task.NewEvent(event.PhaseStarted{Phase: p, Run: run.ID, PID: os.Getpid()})
		if err := t.Commit(ev, next); err != nil {
			return err
		}
		run.State = next
		return nil
	})
	if err != nil {
		return res, err
	}
	run.Staging = filepath.Join(run.Task.Dir, StagingDir, string(p)+"-"+run.ID)
	cleanStaging(run.Task.Dir, string(p)+"-", run.ID)
	if err := os.MkdirAll(run.Staging, 0o755); err != nil {
		return res, fmt.Errorf("create %s: %w", run.Staging, err)
	}

	out, workErr := work(ctx, run)

	// Commit under the lock, even when ctx was cancelled: the phase must
	// not stay marked running.
	commitCtx := context.WithoutCancel(ctx)
	err = o.withTask(commitCtx, id, func(t *task.Task, st task.State) error {
		if st.Revision != run.State.Revision {
			return refused(fmt.Sprintf("orch: task %s changed while %s ran (revision %d → %d): its output was discarded; run it again", t.ID, p, run.State.Revision, st.Revision))
		}
		staged, err := stagedFiles(run.Staging)
		if err != nil {
			return err
		}
		rel := func(f string) string { return path.Join(StagingDir, string(p)+"-"+run.ID, f) }
		var moves []task.Move
		fin := event.PhaseFinished{Phase: p, Run: run.ID}
		next := st.Clone()
		next.Revision = st.Revision + 1
		next.UpdatedAt = o.now()
		a := next.Actor(p)
		a.ClearRun()
		if out.Round != 0 {
			a.Round = out.Round
		}
		if out.Attempt != 0 {
			a.Attempt = out.Attempt
		}
		if workErr != nil {
			// Keep whatever the run produced for the record, out of the
			// way of the decisions.
			status := lifecycle.RunFailed
			if errors.Is(workErr, context.Canceled) {
				status = lifecycle.RunCancelled
			}
			a.Status = run.prevStatus
			a.LastRun = status
			fin.Status = string(status)
			fin.Error = workErr.Error()
			if len(staged) > 0 {
				n, err := nextHistoryNumber(t.Dir)
				if err != nil {
					return err
				}
				dest := path.Join(HistoryDir, fmt.Sprintf("%d-%s-%s", n, p, status))
				for _, f := range staged {
					moves = append(moves, task.Move{From: rel(f), To: path.Join(dest, f)})
				}
				fin.Kept = dest
				res.FailedKept = dest
			}
		} else {
			status := lifecycle.Status(out.Status)
			if status == "" {
				status = lifecycle.StatusCompleted
			}
			a.Status = status
			a.LastRun = ""
			fin.Status = string(status)
			archive, dest, err := archiveMoves(t.Dir, p, false, p)
			if err != nil {
				return err
			}
			// Only the phase's own artifacts are archived: later phases'
			// artifacts were archived when the task came back here.
			var own []task.Move
			for _, m := range archive {
				// Input to the phase's decision (the accept advisor's
				// advice) stays beside it.
				if a, ok := lifecycle.ArtifactOf(m.From); ok && a.Phase == p && !a.KeptOnRerun {
					own = append(own, m)
				}
			}
			if len(own) > 0 {
				fin.Archived = dest
				res.Archived = dest
			}
			moves = append(moves, own...)
			for _, f := range staged {
				moves = append(moves, task.Move{From: rel(f), To: f})
			}
			fin.Files = make([]string, len(staged))
			copy(fin.Files, staged)
			fin.Summary = out.Summary
		}
		next.Actors[p] = a
		ev := task.NewEvent(fin)
		ev.Moves = moves
		if err := t.Commit(ev, next); err != nil {
			return err
		}
		res.Revision = next.Revision
		return nil
	})
	_ = os.RemoveAll(run.Staging)
	res.Outcome = out
	if workErr != nil {
		if err != nil {
			return res, errors.Join(workErr, err)
		}
		return res, workErr
	}
	return res, err
}

// stagedFiles lists the regular files below dir as slash paths, sorted.
// Symlinks and other special files are refused: staging holds only what
// orch itself wrote.
func stagedFiles(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("staging %s: %s is not a regular file", dir, p)
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	sort.Strings(out)
	return out, err
}

// cleanStaging removes staging folders of earlier, abandoned runs of the
// same phase (their work was never committed).
func cleanStaging(taskDir, prefix, keep string) {
	entries, _ := os.ReadDir(filepath.Join(taskDir, StagingDir))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) && e.Name() != prefix+keep {
			_ = os.RemoveAll(filepath.Join(taskDir, StagingDir, e.Name()))
		}
	}
}

func (o *Orchestrator) runID() string {
	return fmt.Sprintf("%s-%d", o.now().Format("20060102T150405.000"), os.Getpid())
}

// Write stages data as the task-relative artifact rel.
func (r *Run) Write(rel string, data []byte) error {
	p, err := r.Stage(rel)
	if err != nil {
		return err
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		return fmt.Errorf("stage %s: %w", rel, err)
	}
	return nil
}

// WriteJSON stages v, as indented JSON ending in a newline, as the
// task-relative artifact rel.
func (r *Run) WriteJSON(rel string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("stage %s: %w", rel, err)
	}
	return r.Write(rel, append(data, '\n'))
}
