package task

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"time"

	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/lifecycle"
)

// CreateTask creates .orch/tasks/<id> in phase planning and makes it the
// current task. ErrExists when the task is already there.
//
// The folder is built as tasks/.tmp-<id>-<random>/ — planning/brief.md,
// state.json (revision 1, actors.planning {status: draft, round: 0}) and
// transcript.jsonl with one "created" event carrying that state and the
// brief's sha256 — all fsynced, then renamed to tasks/<id> and tasks/ is
// fsynced, so a crash leaves either no task or a complete one (plus a
// stray .tmp- folder that List ignores and CleanStrays removes).
//
// An I/O error (ENOSPC, EIO, EROFS, a short write, a failed fsync, which is
// never retried) before the folder is in place leaves no task; one in the
// fsync of tasks/ after the rename undoes the rename. Only a failure to
// replace .orch/current leaves the task created (complete and valid) and
// returns an error saying so.
func (p *Project) CreateTask(id, brief string, now time.Time) (*Task, State, error) {
	if err := ValidID(id); err != nil {
		return nil, State{}, err
	}
	fl, err := p.lockProject()
	if err != nil {
		return nil, State{}, err
	}
	defer fl.Unlock()

	final := filepath.Join(p.TasksDir(), id)
	if ok, err := exists(final); err != nil {
		return nil, State{}, err
	} else if ok {
		return nil, State{}, fmt.Errorf("%w: task %s (%s); pick another id or open it with --task %s", ErrExists, id, final, id)
	}
	fsys := p.fsys()
	tmp, err := fsys.MkdirTemp(p.TasksDir(), strayPrefix+id+"-")
	if err != nil {
		return nil, State{}, fmt.Errorf("create task %s: %w", id, err)
	}
	st, err := buildTask(fsys, tmp, id, brief, now)
	if err != nil {
		fsys.RemoveAll(tmp) // what is left is a stray that CleanStrays removes
		return nil, State{}, fmt.Errorf("create task %s: %w", id, err)
	}
	if err := fsys.Rename(tmp, final); err != nil {
		fsys.RemoveAll(tmp)
		return nil, State{}, fmt.Errorf("create task %s: %w", id, err)
	}
	if err := syncDir(fsys, p.TasksDir()); err != nil {
		// The new name may not be durable. Undo it, so that the failure
		// leaves no task behind; tasks/ is not fsynced again.
		if uerr := fsys.Rename(final, tmp); uerr != nil {
			return nil, State{}, fmt.Errorf("create task %s: %w; undoing the creation failed too (%v): %s is complete but may not survive a crash",
				id, err, uerr, final)
		}
		fsys.RemoveAll(tmp)
		return nil, State{}, fmt.Errorf("create task %s: %w", id, err)
	}
	if err := p.setCurrentLocked(id); err != nil {
		return nil, State{}, fmt.Errorf("task %s was created but could not be made the current task: %w; pass --task %s", id, err, id)
	}
	return &Task{ID: id, Dir: final, fs: p.fs}, st, nil
}

// buildTask writes the initial files of a task into dir.
func buildTask(fsys fileSystem, dir, id, brief string, now time.Time) (State, error) {
	if err := fsys.Chmod(dir, 0o755); err != nil {
		return State{}, fmt.Errorf("chmod %s: %w", dir, err)
	}
	body := []byte(brief)
	if len(body) > 0 && body[len(body)-1] != '\n' {
		body = append(body, '\n')
	}
	if err := mkdirAllSync(fsys, dir, filepath.Dir(BriefFile)); err != nil {
		return State{}, err
	}
	if err := writeFileSync(fsys, filepath.Join(dir, BriefFile), body, 0o644); err != nil {
		return State{}, err
	}
	if err := syncDir(fsys, filepath.Join(dir, filepath.Dir(BriefFile))); err != nil {
		return State{}, err
	}
	planning := Actor{Status: lifecycle.PlanDraft}
	if err := planning.Set("round", 0); err != nil {
		return State{}, err
	}
	st := State{
		Phase:     lifecycle.Planning,
		Actors:    Actors{lifecycle.Planning: planning},
		Revision:  1,
		Task:      id,
		CreatedAt: now,
		UpdatedAt: now,
	}
	sum := sha256.Sum256(body)
	ev := Event{Seq: 1, TS: now, Payload: event.Created{BriefSHA256: hex.EncodeToString(sum[:])}, State: &st}
	line, err := ev.MarshalJSON()
	if err != nil {
		return State{}, fmt.Errorf("encode created event: %w", err)
	}
	if err := writeFileSync(fsys, filepath.Join(dir, TranscriptFile), append(line, '\n'), 0o644); err != nil {
		return State{}, err
	}
	state, err := encodeJSON(st)
	if err != nil {
		return State{}, fmt.Errorf("encode state: %w", err)
	}
	if err := writeFileSync(fsys, filepath.Join(dir, StateFile), append(state, '\n'), 0o644); err != nil {
		return State{}, err
	}
	return st, syncDir(fsys, dir)
}
