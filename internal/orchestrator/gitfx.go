package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/gitx"
	"github.com/orchdev/orch/internal/task"
)

// The crash-safe git effect of `orch accept` and `orch revert` (contract
// section 7):
//
//  1. without the task's lock, the commit is built from objects only
//     (gitx.BuildCommit / BuildRevert: a temporary index, commit-tree);
//  2. under the task's lock: a marker .orch/git-pending/<task> is created
//     (durably), a git_intent event naming the branch, the old and the new
//     commit and the touched paths is appended to the transcript, the
//     branch moves by compare-and-swap (update-ref NEW OLD), the touched
//     paths of the index and work tree are brought to NEW (gitx.SyncPaths,
//     which never overwrites what someone else changed), a git_done event
//     is appended, and the marker removed.
//
// A process killed anywhere in step 2 leaves the marker. The next orch
// command (RecoverGit, called where the CLI finds the project) takes the
// task's lock, reads the open intent and settles it from what the branch
// holds: NEW means committed (the sync is finished), OLD means aborted
// (nothing changed), anything else is decided by ancestry. Effects happen
// only under the lock, so a lock holder never races a live effect.
//
// The git commands of an effect run in process groups of their own, so a
// git outlives an orch killed while it ran and may still move the branch
// or write the index after orch is gone. The effect therefore also holds
// an flock on its marker file, whose descriptor every one of its git
// commands inherits (gitx.Repo.Inherit): the lock is released only when
// orch and every git it started are gone, and settling takes it first.

// openRepo opens the user's repository to settle an interrupted effect.
var openRepo = gitx.Open

// Outcomes of a git effect.
const (
	OutcomeCommitted = event.GitCommitted
	OutcomeAborted   = event.GitAborted
)

// PendingDir is the folder under .orch holding one marker file per task
// whose git effect may be unfinished.
const PendingDir = "git-pending"

func pendingPath(p *task.Project, id string) string {
	return filepath.Join(p.Dir, PendingDir, id)
}

// markPending creates the marker durably (file, then folder fsynced) and
// returns it open and locked (lockPending).
func markPending(ctx context.Context, p *task.Project, id, run string, wait time.Duration) (*os.File, error) {
	dir := filepath.Join(p.Dir, PendingDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("mark pending git effect: %w", err)
	}
	f, err := lockPending(ctx, p, id, true, wait)
	if err != nil {
		return nil, err
	}
	terr := f.Truncate(0)
	_, werr := f.WriteAt([]byte(run+"\n"), 0)
	if err := errors.Join(terr, werr, f.Sync()); err != nil {
		f.Close()
		return nil, fmt.Errorf("mark pending git effect: %w", err)
	}
	if err := errors.Join(syncDir(dir), syncDir(p.Dir)); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// lockPending opens task id's marker (creating it when create is set) and
// takes its flock, the effect's lock, trying until wait has elapsed. The
// lock is held until the file is closed and every git command that
// inherited it has exited. Without create, an absent marker is nil, nil.
// A lock that stays busy is ErrBusy: a git command of an effect is still
// running, possibly on its own after its orch was killed.
func lockPending(ctx context.Context, p *task.Project, id string, create bool, wait time.Duration) (*os.File, error) {
	flag := os.O_RDWR
	if create {
		flag |= os.O_CREATE
	}
	f, err := os.OpenFile(pendingPath(p, id), flag, 0o644)
	if !create && errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("lock pending git effect: %w", err)
	}
	ok, err := task.PollLock(ctx, wait, func() (bool, error) { return tryFlock(f) })
	switch {
	case err != nil:
		f.Close()
		return nil, fmt.Errorf("lock pending git effect of task %s: %w", id, err)
	case !ok:
		f.Close()
		return nil, exit.New(task.ErrBusy, "task %s is busy: a git command of its accept or revert is still running (its orch may be gone); retry when it has finished", id)
	}
	return f, nil
}

// holding is repo whose git commands inherit the effect's lock f (none
// when f is nil).
func holding(repo *gitx.Repo, f *os.File) *gitx.Repo {
	if f == nil {
		return repo
	}
	r := *repo
	r.Inherit = append(slices.Clip(repo.Inherit), f)
	return &r
}

// clearPending removes the marker (absent is fine).
func clearPending(p *task.Project, id string) error {
	err := os.Remove(pendingPath(p, id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("clear pending git effect: %w", err)
	}
	return syncDir(filepath.Join(p.Dir, PendingDir))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// effectLocked performs step 2 for intent in: the caller holds the task's
// lock. It returns the git_done event it logged. An error after the
// intent was logged leaves the marker (and the intent open) for the next
// command to settle.
func effectLocked(ctx context.Context, p *task.Project, t *task.Task, wait time.Duration, repo *gitx.Repo, in event.GitIntent) (event.GitDone, error) {
	held, err := markPending(ctx, p, t.ID, in.Run, wait)
	if err != nil {
		return event.GitDone{}, err
	}
	defer held.Close()
	repo = holding(repo, held)
	if err := t.Append(task.Event{TS: time.Now().UTC(), Payload: in}); err != nil {
		_ = clearPending(p, t.ID)
		return event.GitDone{}, err
	}
	// From here on the intent is logged: finish even when ctx is cancelled.
	ctx = context.WithoutCancel(ctx)
	casErr := repo.UpdateRef(ctx, in.Ref, in.New, in.Old, fmt.Sprintf("orch %s: %s", in.Op, t.ID))
	done, err := settle(ctx, repo, in)
	if err != nil {
		return done, errors.Join(err, casErr)
	}
	if done.Outcome == OutcomeAborted && casErr != nil {
		done.Note = strings.TrimSpace(done.Note + " " + casErr.Error())
	}
	if err := t.Append(task.Event{TS: time.Now().UTC(), Payload: done}); err != nil {
		return done, fmt.Errorf("%w (the repository change is made; the next orch command records it)", err)
	}
	return done, clearPending(p, t.ID)
}

// settle decides an intent's outcome from what its branch holds and, when
// the commit landed, brings the touched paths along.
func settle(ctx context.Context, repo *gitx.Repo, in event.GitIntent) (event.GitDone, error) {
	done := event.GitDone{Op: in.Op, Run: in.Run}
	cur, err := repo.RefValue(ctx, in.Ref)
	if err != nil {
		return done, err
	}
	switch {
	case cur == in.New:
	case cur == in.Old:
		done.Outcome = OutcomeAborted
		done.Note = fmt.Sprintf("%s never moved from %.12s: nothing changed", in.Ref, in.Old)
		return done, nil
	default:
		landed := false
		if cur != "" {
			if landed, err = repo.IsAncestor(ctx, in.New, cur); err != nil {
				return done, err
			}
		}
		if !landed {
			done.Outcome = OutcomeAborted
			done.Note = fmt.Sprintf("%s holds %.12s, neither %.12s (before) nor a descendant of %.12s: the commit never landed, nothing changed", in.Ref, cur, in.Old, in.New)
			return done, nil
		}
		done.Outcome, done.Commit = OutcomeCommitted, in.New
		done.Note = fmt.Sprintf("%s moved on to %.12s since: the index and files were left as they are", in.Ref, cur)
		return done, nil
	}
	done.Outcome, done.Commit = OutcomeCommitted, in.New
	head, err := repo.HeadRef(ctx)
	if err != nil && !errors.Is(err, gitx.ErrDetached) {
		return done, err
	}
	if head != in.Ref {
		done.Note = fmt.Sprintf("HEAD is no longer on %s: the index and files were left as they are", in.Ref)
		return done, nil
	}
	res, err := repo.SyncPaths(ctx, in.Old, in.New, in.Paths)
	if err != nil {
		return done, err
	}
	if len(res.Left) > 0 {
		done.Left = res.Left
		done.Note = "your own version of these files was kept (it differs from the commit; `git diff` shows how): " + strings.Join(res.Left, ", ")
	}
	return done, nil
}

// openIntent returns the last git_intent of the transcript that no later
// git_done closes, or nil.
func openIntent(t *task.Task) (*event.GitIntent, error) {
	evs, err := t.Transcript()
	if err != nil {
		return nil, err
	}
	var open *event.GitIntent
	for _, ev := range evs {
		switch ev.Kind {
		case event.KindGitIntent:
			var in event.GitIntent
			if err := decodeData(ev, &in); err != nil {
				return nil, fmt.Errorf("task %s: transcript line %d: %w", t.ID, ev.Seq, err)
			}
			open = &in
		case event.KindGitDone:
			var d event.GitDone
			if err := decodeData(ev, &d); err != nil {
				return nil, fmt.Errorf("task %s: transcript line %d: %w", t.ID, ev.Seq, err)
			}
			if open != nil && d.Run == open.Run && d.Op == open.Op {
				open = nil
			}
		}
	}
	return open, nil
}

func decodeData(ev task.Event, v any) error {
	raw, err := json.Marshal(ev.Data)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%s event: %w", ev.Kind, err)
	}
	return nil
}

// Settled is one git effect finished or undone by RecoverGit.
type Settled struct {
	Task string
	Done event.GitDone
}

func (s Settled) String() string {
	if s.Done.Outcome == OutcomeCommitted {
		msg := fmt.Sprintf("orch: finished the interrupted %s of task %s: commit %.12s is in place", s.Done.Op, s.Task, s.Done.Commit)
		if s.Done.Note != "" {
			msg += " (" + s.Done.Note + ")"
		}
		return msg
	}
	return fmt.Sprintf("orch: the interrupted %s of task %s never moved the branch: nothing changed (%s)", s.Done.Op, s.Task, s.Done.Note)
}

// RecoverGit settles every git effect a killed `orch accept` or `orch
// revert` left open in project p. With nothing pending it costs one
// directory read. A task whose lock stays busy for wait is skipped (its
// holder is alive; the next command tries again).
func RecoverGit(ctx context.Context, p *task.Project, wait time.Duration) ([]Settled, error) {
	entries, err := os.ReadDir(filepath.Join(p.Dir, PendingDir))
	if errors.Is(err, fs.ErrNotExist) || (err == nil && len(entries) == 0) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Join(p.Dir, PendingDir), err)
	}
	var out []Settled
	var errs []error
	for _, e := range entries {
		id := e.Name()
		if task.ValidID(id) != nil {
			continue
		}
		s, err := recoverTaskGit(ctx, p, id, wait)
		if errors.Is(err, task.ErrBusy) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if s != nil {
			out = append(out, *s)
		}
	}
	return out, errors.Join(errs...)
}

// recoverTaskGit settles task id's open intent, if any, under its lock.
func recoverTaskGit(ctx context.Context, p *task.Project, id string, wait time.Duration) (*Settled, error) {
	t, err := p.Open(id)
	if errors.Is(err, task.ErrNoTask) {
		return nil, clearPending(p, id)
	}
	if err != nil {
		return nil, err
	}
	lock, err := t.Lock(ctx, wait)
	if err != nil {
		return nil, err
	}
	defer lock.Unlock()
	return settleLocked(ctx, p, t, wait)
}

// settleLocked settles t's open intent; the caller holds t's lock. It
// waits at most wait for the effect's own lock (lockPending), held while
// a git command of the interrupted effect still runs.
func settleLocked(ctx context.Context, p *task.Project, t *task.Task, wait time.Duration) (*Settled, error) {
	if _, err := t.Recover(time.Now().UTC()); err != nil {
		return nil, err
	}
	in, err := openIntent(t)
	if err != nil {
		return nil, err
	}
	if in == nil {
		return nil, clearPending(p, t.ID)
	}
	held, err := lockPending(ctx, p, t.ID, false, wait)
	if err != nil {
		return nil, err
	}
	if held != nil {
		defer held.Close()
	}
	repo, err := openRepo(ctx, p.Root)
	if err != nil {
		return nil, err
	}
	done, err := settle(context.WithoutCancel(ctx), holding(repo, held), *in)
	if err != nil {
		return nil, fmt.Errorf("the interrupted %s of task %s (commit %.12s on %s) could not be finished: %w; nothing else is changed, the next orch command tries again", in.Op, t.ID, in.New, in.Ref, err)
	}
	done.Recovered = true
	if err := t.Append(task.Event{TS: time.Now().UTC(), Payload: done}); err != nil {
		return nil, err
	}
	return &Settled{Task: t.ID, Done: done}, clearPending(p, t.ID)
}

// GitEffect carries out the git effect in for task id (landing.GitEffects):
// under the task's lock, an earlier interrupted effect is settled first,
// then in is journaled, the branch moved and the outcome journaled.
func (o *Orchestrator) GitEffect(ctx context.Context, id string, repo *gitx.Repo, in event.GitIntent) (event.GitDone, error) {
	t, err := o.Project.Open(id)
	if err != nil {
		return event.GitDone{}, err
	}
	t.Hooks = o.Hooks
	return gitEffect(ctx, o.Project, t, o.Wait, repo, in)
}

// SettleGit settles task id's interrupted git effect, if any
// (landing.GitEffects).
func (o *Orchestrator) SettleGit(ctx context.Context, id string) error {
	_, err := recoverTaskGit(ctx, o.Project, id, o.Wait)
	return err
}

// gitEffect runs step 2 for in under t's lock, settling first any intent
// an earlier run of the task left open.
func gitEffect(ctx context.Context, p *task.Project, t *task.Task, wait time.Duration, repo *gitx.Repo, in event.GitIntent) (event.GitDone, error) {
	lock, err := t.Lock(ctx, wait)
	if err != nil {
		return event.GitDone{}, err
	}
	defer lock.Unlock()
	if _, err := settleLocked(ctx, p, t, wait); err != nil {
		return event.GitDone{}, err
	}
	return effectLocked(ctx, p, t, wait, repo, in)
}

// Stale is the refusal of an action on task id that named revision seen
// (the task is at now) or evidence whose bytes differ (landing.Engine).
func (o *Orchestrator) Stale(id string, seen, now int64, hashes []string) error {
	t, err := o.Project.Open(id)
	if err != nil {
		return err
	}
	return Stale(t, seen, now, hashes)
}
