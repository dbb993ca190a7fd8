package task

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/orchdev/orch/internal/event"
)

// Recovery tells what Recover repaired.
type Recovery struct {
	RemovedTemp   []string // stray temporary files removed from the task folder
	TornBytes     int64    // bytes of an incomplete last transcript line cut off
	RolledForward bool     // state.json was rolled forward from the transcript
	Revision      int64    // the revision it was rolled forward to
}

// Repaired reports whether Recover changed anything.
func (r Recovery) Repaired() bool {
	return len(r.RemovedTemp) > 0 || r.TornBytes > 0 || r.RolledForward
}

// Recover repairs what a crash can leave behind; the caller must hold the
// task's lock and runs it right after taking it. It first decides, then
// acts:
//
//  1. stray temporary files (state.json.tmp-*) in the task folder are
//     removed;
//  2. an incomplete last transcript line (bytes after the last '\n') is
//     cut off;
//  3. the log is fsynced when it was cut or when state.json is to be rolled
//     forward: a line whose own fsync failed is rolled forward only once it
//     is durable;
//  4. when the transcript's last state is one revision ahead of state.json
//     (a crash, or an I/O error, between the append and the state write),
//     that event's moves are completed (every folder on their way fsynced,
//     even when a move was already done) and its state is written;
//  5. when anything was repaired, a "recovered" event (without state) says
//     what.
//
// state.json ahead of the log, behind it by more than one revision, or
// different from the log's state at the same revision was changed outside
// orch: Recover returns a *StateError and changes nothing. A missing or
// invalid state.json is never recreated: it is a *StateError too.
//
// An I/O error in any step is returned at once (a failed fsync is never
// retried); what was done before it stays done and is consistent, so
// Recover can simply run again: state.json is the old or the rolled-forward
// state, never a torn file.
func (t *Task) Recover(now time.Time) (Recovery, error) {
	var rec Recovery
	temps, err := t.strayTemps()
	if err != nil {
		return rec, err
	}
	f, err := t.openLog()
	if err != nil {
		return rec, err
	}
	defer f.Close()
	tl, err := t.readTail(f, 2)
	if err != nil {
		return rec, err
	}
	cur, err := t.ReadState()
	if err != nil {
		return rec, err
	}
	roll, err := t.decideRollForward(cur, tl.states)
	if err != nil {
		return rec, err
	}

	fsys := t.fsys()
	for _, name := range temps {
		if err := fsys.Remove(filepath.Join(t.Dir, name)); err != nil && !os.IsNotExist(err) {
			return rec, fmt.Errorf("recover task %s: %w", t.ID, err)
		}
		rec.RemovedTemp = append(rec.RemovedTemp, name)
	}
	if len(temps) > 0 {
		if err := syncDir(fsys, t.Dir); err != nil {
			return rec, fmt.Errorf("recover task %s: %w", t.ID, err)
		}
	}
	if tl.torn > 0 {
		if err := f.Truncate(tl.end); err != nil {
			return rec, fmt.Errorf("recover task %s: truncate transcript: %w", t.ID, err)
		}
		rec.TornBytes = tl.torn
		tl.torn = 0
	}
	if rec.TornBytes > 0 || roll != nil {
		// One fsync makes the cut durable and the event to roll forward
		// to: state.json must never get ahead of what the disk has logged.
		if err := f.Sync(); err != nil {
			return rec, fmt.Errorf("recover task %s: fsync transcript: %w", t.ID, err)
		}
	}
	if roll != nil {
		if err := t.applyMoves(roll.Moves); err != nil {
			return rec, fmt.Errorf("recover task %s: %w", t.ID, err)
		}
		if err := writeState(fsys, t.Dir, *roll.State); err != nil {
			return rec, fmt.Errorf("recover task %s: write state: %w", t.ID, err)
		}
		rec.RolledForward, rec.Revision = true, roll.State.Revision
	}
	if !rec.Repaired() {
		return rec, nil
	}
	p := event.Recovered{RemovedTemp: rec.RemovedTemp, TornBytes: rec.TornBytes}
	if rec.RolledForward {
		p.RolledForwardTo = rec.Revision
	}
	if err := t.appendEvent(f, tl, &Event{TS: now, Payload: p}); err != nil {
		return rec, err
	}
	if err := f.Close(); err != nil {
		return rec, fmt.Errorf("recover task %s: close transcript (the repair is logged): %w", t.ID, err)
	}
	return rec, nil
}

// strayTemps lists the temporary files of atomic writes in the task folder.
func (t *Task) strayTemps() ([]string, error) {
	entries, err := os.ReadDir(t.Dir)
	if err != nil {
		return nil, fmt.Errorf("recover task %s: %w", t.ID, err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasPrefix(e.Name(), StateFile+".tmp") {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// decideRollForward compares state.json with the transcript's last states
// (newest first) and returns the event to roll forward to, if any.
func (t *Task) decideRollForward(cur State, states []Event) (*Event, error) {
	outside := "state.json was changed outside orch; restore it from the transcript (`orch log --task " + t.ID + "`) or " + verifyHint(t.ID)
	if len(states) == 0 {
		return nil, &StateError{Task: t.ID, File: TranscriptFile, Field: "$", Expected: "a \"created\" event carrying the first state",
			Got: "no event with a state", Hint: verifyHint(t.ID)}
	}
	last := states[0].State
	rev := strconv.FormatInt
	switch {
	case cur.Revision > last.Revision:
		return nil, &StateError{Task: t.ID, File: StateFile, Field: "$.revision",
			Expected: "at most " + rev(last.Revision, 10) + " (the transcript's last state)", Got: rev(cur.Revision, 10), Hint: outside}
	case cur.Revision == last.Revision:
		return nil, t.compareLogged(cur, *last, outside)
	case cur.Revision == last.Revision-1:
		if len(states) < 2 {
			return nil, &StateError{Task: t.ID, File: TranscriptFile, Field: "$",
				Expected: "an event with the state at revision " + rev(cur.Revision, 10), Got: "none", Hint: verifyHint(t.ID)}
		}
		if err := t.compareLogged(cur, *states[1].State, outside); err != nil {
			return nil, err
		}
		return &states[0], nil
	default:
		return nil, &StateError{Task: t.ID, File: StateFile, Field: "$.revision",
			Expected: rev(last.Revision-1, 10) + " or " + rev(last.Revision, 10) + " (the transcript's last state)", Got: rev(cur.Revision, 10), Hint: outside}
	}
}

// compareLogged returns a *StateError when state.json differs from the
// state the transcript recorded for the same revision.
func (t *Task) compareLogged(cur, logged State, hint string) error {
	same, field, err := sameState(cur, logged)
	if err != nil {
		return fmt.Errorf("task %s: %w", t.ID, err)
	}
	if same {
		return nil
	}
	return &StateError{Task: t.ID, File: StateFile, Field: field,
		Expected: "the transcript's state at revision " + strconv.FormatInt(logged.Revision, 10),
		Got:      "different content", Hint: hint}
}
