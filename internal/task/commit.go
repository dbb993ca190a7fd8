package task

import (
	"fmt"
	"strconv"
	"time"
)

// Commit changes the state through the write-ahead log. The caller must
// hold the task's lock and should have run Recover after taking it.
//
// next.Revision must be the revision of state.json plus one, else ErrStale
// (someone else committed since the caller read the state). An empty
// next.Task is set to the task id; a zero next.UpdatedAt to the event time.
// Commit sets ev.Seq, ev.TS (when zero, to the current time), ev.Prev and
// ev.State, appends the line with one write and fsyncs the log, performs
// ev.Moves (relative to the task folder; parents created, folders
// fsynced), and replaces state.json atomically. Hooks, when set, run after
// the append and after the moves.
//
// Commit returns nil only when all of that is durable. Any I/O error
// (ENOSPC, EIO, EROFS, a short write, a failed fsync, which is never
// retried) is returned. Before the event is durable in the log, the log is
// cut back to where it was and nothing else has changed: the change did not
// happen (should even the cut fail, the line may stay in the log; state.json
// is untouched and the next Recover treats the line as logged only once an
// fsync of the log succeeds). After it, the change is logged and the next Recover completes
// it; until then state.json holds the old state (or, when only the final
// folder fsync failed, already the new one), never a torn file.
func (t *Task) Commit(ev Event, next State) error {
	if err := ev.flatten(); err != nil {
		return fmt.Errorf("commit to task %s: %w", t.ID, err)
	}
	if ev.Kind == "" {
		return fmt.Errorf("commit to task %s: event kind is empty", t.ID)
	}
	if next.Task == "" {
		next.Task = t.ID
	}
	if next.Task != t.ID {
		return fmt.Errorf("commit to task %s: next state names task %q", t.ID, next.Task)
	}
	if err := checkMoves(ev.Moves); err != nil {
		return fmt.Errorf("commit to task %s: %w", t.ID, err)
	}
	cur, err := t.ReadState()
	if err != nil {
		return err
	}
	if next.Revision != cur.Revision+1 {
		return fmt.Errorf("%w: task %s: state.json is at revision %d, the change is for revision %d (expected %d); read the state again and retry",
			ErrStale, t.ID, cur.Revision, next.Revision, cur.Revision+1)
	}
	if ev.TS.IsZero() {
		ev.TS = time.Now().UTC()
	}
	if next.UpdatedAt.IsZero() {
		next.UpdatedAt = ev.TS
	}
	if err := checkNext(next); err != nil {
		return fmt.Errorf("commit to task %s: %w", t.ID, err)
	}

	f, err := t.openLog()
	if err != nil {
		return err
	}
	defer f.Close()
	tl, err := t.readTail(f, 1)
	if err != nil {
		return err
	}
	if tl.torn > 0 {
		return t.tornError(tl)
	}
	if len(tl.states) == 0 || tl.states[0].State.Revision != cur.Revision {
		logRev := "none"
		if len(tl.states) > 0 {
			logRev = strconv.FormatInt(tl.states[0].State.Revision, 10)
		}
		return &StateError{Task: t.ID, File: StateFile, Field: "$.revision",
			Expected: "revision " + logRev + " (the transcript's last state)", Got: strconv.FormatInt(cur.Revision, 10),
			Hint: "call Recover after taking the lock (any orch command does), or " + verifyHint(t.ID)}
	}
	if err := t.checkMovesFeasible(ev.Moves); err != nil {
		return err
	}

	ev.State = &next
	if err := t.appendEvent(f, tl, &ev); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close transcript of task %s: %w (the change to revision %d is logged; the next orch command completes it)", t.ID, err, next.Revision)
	}
	if t.Hooks.AfterAppend != nil {
		t.Hooks.AfterAppend()
	}
	// From here on the change is logged: a failure leaves it to Recover.
	if err := t.applyMoves(ev.Moves); err != nil {
		return fmt.Errorf("%w (the change to revision %d is logged; the next orch command completes it)", err, next.Revision)
	}
	if t.Hooks.AfterMoves != nil {
		t.Hooks.AfterMoves()
	}
	if err := writeState(t.fsys(), t.Dir, next); err != nil {
		return fmt.Errorf("write state of task %s: %w (the change to revision %d is logged; the next orch command completes it)", t.ID, err, next.Revision)
	}
	return nil
}

// checkNext makes sure the state a commit writes would read back as valid.
func checkNext(s State) error {
	data, err := encodeJSON(s)
	if err != nil {
		return fmt.Errorf("encode next state: %w", err)
	}
	if _, p := parseState(data, "$"); p != nil {
		return fmt.Errorf("next state: %s: expected %s, got %s", p.Field, p.Expected, p.Got)
	}
	return nil
}
