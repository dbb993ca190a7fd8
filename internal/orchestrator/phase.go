package orchestrator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/gitx"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/task"
	"github.com/orchdev/orch/internal/work"
)

// StagingDir holds the output of phases in progress:
// .staging/<phase>-<run>/ with task-relative paths inside.
const StagingDir = ".staging"

// run is one run of a phase's work: the work writes its artifacts below
// staging using task-relative paths (e.g. staging/test/report.json);
// nothing it writes becomes visible in the task folder until the run is
// committed. Its records are kept for the commit and journaled beside the
// stage, so that a run killed before its commit is still recorded.
type run struct {
	task    *task.Task
	phase   lifecycle.Phase
	id      string     // run id, unique per run
	state   task.State // the state after the phase was marked running
	spent   work.Spent // the task's spend once earlier runs' records were salvaged
	staging string     // absolute path of the staging folder
	o       *Orchestrator
	// prevStatus is the actor's status before the run, restored when the
	// run fails (a failed run is recorded in last_run, not as a sub-state).
	prevStatus lifecycle.Status

	mu      sync.Mutex
	records []event.Payload
}

// Record keeps p for the run's commit, numbered within the run when it is
// an event.RunRecord, and journals it (journalFile). A record that cannot
// be journaled is still kept: it never fails the work.
func (r *run) Record(p event.Payload) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if k, ok := p.(event.RunRecord); ok {
		p = k.Keyed(r.id, len(r.records)+1)
	}
	r.records = append(r.records, p)
	_ = journal(journalFile(r.task.Dir, r.phase, r.id), p)
}

// kept returns the records so far.
func (r *run) kept() []event.Payload {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.records)
}

// journalFile is where run's records are journaled:
// .staging/<phase>-<run>.records.jsonl, beside its staging folder.
func journalFile(taskDir string, p lifecycle.Phase, run string) string {
	return filepath.Join(taskDir, StagingDir, string(p)+"-"+run+journalSuffix)
}

const journalSuffix = ".records.jsonl"

// journalLine is one line of a records journal.
type journalLine struct {
	Kind event.Kind      `json:"kind"`
	Data json.RawMessage `json:"data"`
}

// journal appends p to the journal file and syncs it.
func journal(file string, p event.Payload) error {
	data, err := json.Marshal(p)
	if err != nil {
		return err
	}
	line, err := json.Marshal(journalLine{Kind: p.Kind(), Data: data})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	_, werr := f.Write(append(line, '\n'))
	serr := f.Sync()
	return errors.Join(werr, serr, f.Close())
}

// readJournal reads a records journal; a torn last line (a kill in the
// middle of a write) is left out.
func readJournal(file string) ([]event.Payload, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var out []event.Payload
	for _, line := range bytes.Split(data, []byte("\n")) {
		var l journalLine
		if len(bytes.TrimSpace(line)) == 0 || json.Unmarshal(line, &l) != nil {
			continue
		}
		p, err := event.Decode(l.Kind, l.Data)
		if err != nil {
			return out, fmt.Errorf("%s: %w", file, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// writeRecords appends to t's transcript the records of runs that are not
// there yet: a record keyed by its run and number is written once, however
// often its run is committed or salvaged. Called under t's lock.
func (o *Orchestrator) writeRecords(t *task.Task, records []event.Payload) error {
	if len(records) == 0 {
		return nil
	}
	type key struct {
		kind event.Kind
		run  string
		n    int
	}
	have := map[key]bool{}
	events, err := t.Transcript()
	if err != nil {
		return err
	}
	for _, ev := range events {
		if ev.Kind != event.KindModelCall && ev.Kind != event.KindBudgetExceeded {
			continue
		}
		p, err := ev.Decode()
		if err != nil {
			continue // an unreadable record keys nothing
		}
		if k, ok := p.(event.RunRecord); ok {
			if run, n := k.Key(); run != "" {
				have[key{ev.Kind, run, n}] = true
			}
		}
	}
	for _, p := range records {
		if k, ok := p.(event.RunRecord); ok {
			run, n := k.Key()
			if have[key{p.Kind(), run, n}] {
				continue
			}
		}
		if err := t.Append(task.Event{TS: o.now(), Payload: p}); err != nil {
			return err
		}
	}
	return nil
}

// salvage writes the journaled records of phase p's earlier runs that
// died before their commit (their process is gone: the phase is not
// running) and removes their journals. Called under t's lock.
func (o *Orchestrator) salvage(t *task.Task, p lifecycle.Phase, keep string) error {
	entries, err := os.ReadDir(filepath.Join(t.Dir, StagingDir))
	if err != nil {
		return nil
	}
	prefix := string(p) + "-"
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, prefix) || !strings.HasSuffix(name, journalSuffix) || name == prefix+keep+journalSuffix || !e.Type().IsRegular() {
			continue
		}
		file := filepath.Join(t.Dir, StagingDir, name)
		records, err := readJournal(file)
		if err != nil {
			return err
		}
		if err := o.writeRecords(t, records); err != nil {
			return err
		}
		if err := os.Remove(file); err != nil {
			return err
		}
	}
	return nil
}

// Outcome is what a phase's work reports (work.Output).
type Outcome = work.Output

// Func does a phase's work outside the task's lock.
type Func func(ctx context.Context, in work.Input) (Outcome, error)

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

// Run runs worker w for task id: w's Check on the committed task, then its
// Work through RunPhase. It returns the committed run and w's typed result.
func Run[R any](ctx context.Context, o *Orchestrator, id string, w work.Worker[R]) (PhaseResult, work.Result[R], error) {
	var res work.Result[R]
	p := w.Phase()
	in, err := o.Input(ctx, id, p)
	if err != nil {
		return PhaseResult{Task: id, Phase: p}, res, err
	}
	if err := w.Check(ctx, in); err != nil {
		return PhaseResult{Task: id, Phase: p}, res, err
	}
	pr, err := o.RunPhase(ctx, id, p, func(ctx context.Context, in work.Input) (Outcome, error) {
		r, err := w.Work(ctx, in)
		res = r
		return r.Output, err
	})
	return pr, res, err
}

// Input returns the input of phase p's work on task id as committed, with
// no run: what a worker's Check is given.
func (o *Orchestrator) Input(ctx context.Context, id string, p lifecycle.Phase) (work.Input, error) {
	t, err := o.Project.Open(id)
	if err != nil {
		return work.Input{}, err
	}
	st, err := t.ReadState()
	if err != nil {
		return work.Input{}, err
	}
	spent, err := spentOf(t)
	if err != nil {
		return work.Input{}, err
	}
	return o.input(ctx, t, p, st, spent), nil
}

// spentOf sums the model calls recorded in t's transcript (work.Spent).
func spentOf(t *task.Task) (work.Spent, error) {
	events, err := t.Transcript()
	if err != nil {
		return work.Spent{}, err
	}
	return work.SpentBy(task.ModelCalls(events)), nil
}

// input builds the input of phase p's work on t in state st, with the
// task's spend as committed.
func (o *Orchestrator) input(ctx context.Context, t *task.Task, p lifecycle.Phase, st task.State, spent work.Spent) work.Input {
	in := work.Input{Task: t.ID, Phase: p, Revision: st.Revision, Dir: t.Dir, Root: o.Project.Root, Now: o.now(), Counters: map[lifecycle.Phase]work.Counter{}, Spent: spent}
	in.Current, in.Running = st.Phase, map[lifecycle.Phase]int{}
	for ph, a := range st.Actors {
		in.Counters[ph] = work.Counter{Round: a.Round, Attempt: a.Attempt}
		if pid, ok := a.LivePID(); ok {
			in.Running[ph] = pid
		}
	}
	in.Base, in.Repo, in.BaseErr = head(ctx, o.Project.Root)
	return in
}

// head reads the repository's HEAD commit and returns the read-only view
// of the repository at it.
func head(ctx context.Context, root string) (string, work.Repo, error) {
	repo, err := gitx.Open(ctx, root)
	if err != nil {
		return "", nil, err
	}
	base, err := repo.Head(ctx)
	if err != nil {
		return "", nil, err
	}
	return base, work.LocalRepo(repo, base), nil
}

// RunPhase runs phase p's work for task id, following the protocol of
// README, "On-disk guarantees": under the lock, enter the phase if needed (its normal
// transition must hold) and mark it running; without the lock, do the
// work into a staging folder; under the lock again, check that the
// revision did not move, archive the previous attempt's artifacts and move
// the staged ones into place in one logged event.
func (o *Orchestrator) RunPhase(ctx context.Context, id string, p lifecycle.Phase, fn Func) (PhaseResult, error) {
	res := PhaseResult{Task: id, Phase: p}
	run := &run{phase: p, id: o.runID(), o: o}
	err := o.withTask(ctx, id, func(t *task.Task, st task.State) error {
		run.task = t
		cur := st.Phase
		if cur != p {
			if cur.Terminal() {
				return exit.New(exit.ErrRefused, "task %s is done (terminal): `orch redo %s` re-opens it", t.ID, p)
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
			return exit.New(exit.ErrRefused, "%s is already running for task %s (pid %d); wait for it or stop that process", p, t.ID, pid)
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
		a.Run = run.id
		a.StartedAt = next.UpdatedAt.Format(time.RFC3339Nano)
		next.Actors[p] = a
		// The records of an earlier run of p killed before its commit.
		if err := o.salvage(t, p, run.id); err != nil {
			return err
		}
		// The budget spent, those salvaged records included.
		spent, err := spentOf(t)
		if err != nil {
			return err
		}
		run.spent = spent
		ev := task.NewEvent(event.PhaseStarted{Phase: p, Run: run.id, PID: os.Getpid()})
		if err := t.Commit(ev, next); err != nil {
			return err
		}
		run.state = next
		return nil
	})
	if err != nil {
		return res, err
	}
	run.staging = filepath.Join(run.task.Dir, StagingDir, string(p)+"-"+run.id)
	cleanStaging(run.task.Dir, string(p)+"-", run.id)
	if err := os.MkdirAll(run.staging, 0o755); err != nil {
		return res, fmt.Errorf("create %s: %w", run.staging, err)
	}

	in := o.input(ctx, run.task, p, run.state, run.spent)
	in.Run, in.Out, in.Records = run.id, work.Stage{Dir: run.staging}, run
	out, workErr := fn(ctx, in)

	// Commit under the lock, even when ctx was cancelled: the phase must
	// not stay marked running.
	commitCtx := context.WithoutCancel(ctx)
	recorded := false
	err = o.withTask(commitCtx, id, func(t *task.Task, st task.State) error {
		// The run's records first, whatever becomes of its output (its
		// calls were made): a kill before the commit leaves the journal,
		// whose records the next run of p finds written.
		if err := o.writeRecords(t, run.kept()); err != nil {
			return err
		}
		recorded = true
		if st.Revision != run.state.Revision {
			return exit.New(exit.ErrRefused, "task %s changed while %s ran (revision %d → %d): its output was discarded; run it again", t.ID, p, run.state.Revision, st.Revision)
		}
		staged, err := stagedFiles(run.staging)
		if err != nil {
			return err
		}
		rel := func(f string) string { return path.Join(StagingDir, string(p)+"-"+run.id, f) }
		var moves []task.Move
		fin := event.PhaseFinished{Phase: p, Run: run.id}
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
			status := out.Status
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
	_ = os.RemoveAll(run.staging)
	if recorded {
		_ = os.Remove(journalFile(run.task.Dir, p, run.id))
	}
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
		if strings.HasPrefix(e.Name(), prefix) && e.Name() != prefix+keep && e.Name() != prefix+keep+journalSuffix {
			_ = os.RemoveAll(filepath.Join(taskDir, StagingDir, e.Name()))
		}
	}
}

func (o *Orchestrator) runID() string {
	return fmt.Sprintf("%s-%d", o.now().Format("20060102T150405.000"), os.Getpid())
}
