package task

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"reflect"

	"github.com/orchdev/orch/internal/event"
)

// Pending is a state change the transcript holds that state.json does not
// show yet: the command that made it was interrupted (or is still running)
// between appending the event and replacing state.json. The next mutating
// command rolls state.json forward to it (Recover).
type Pending struct {
	Seq      int64      `json:"seq"`      // the event's line
	Kind     event.Kind `json:"kind"`     // the event's kind
	Revision int64      `json:"revision"` // the revision it commits
	Behind   int64      `json:"behind"`   // state.json's revision, one less
	Moves    int        `json:"moves"`    // archive moves the event carries (possibly not done yet)
}

// String says what happened and what comes next.
func (p Pending) String() string {
	return fmt.Sprintf("state.json (revision %d) is one step behind the transcript's last durable event (seq %d, %s, revision %d): an interrupted commit; the next orch command rolls it forward",
		p.Behind, p.Seq, p.Kind, p.Revision)
}

// CommittedState returns the task's state as the transcript committed it:
// the state the log's last complete state-carrying event records. That is
// state.json when the two agree. When state.json is exactly one revision
// behind that event and equal to the state before it, the change is
// durable although state.json was not replaced yet: the event's state is
// returned with a non-nil Pending. It only reads and needs no lock;
// readers (`orch status`, `list`, `log`, the board, `orch mcp`) use it so
// that they report what is committed.
//
// Any other disagreement (state.json ahead, further behind, or different
// at the same revision: a phase set by hand) is not an interrupted commit:
// the transcript's state is returned with a *DisagreeError (exit 4) naming
// both phases, so that a reader never shows state.json's as true. A
// state.json that cannot be read is the *StateError of ReadState. An
// unreadable log is for the commands that need it (and `orch verify`) to
// report: state.json is returned as it is.
func (t *Task) CommittedState() (State, *Pending, error) {
	cur, err := t.ReadState()
	if err != nil {
		return State{}, nil, err
	}
	states, err := t.loggedStates()
	if err != nil || len(states) == 0 {
		return cur, nil, nil
	}
	st, pending, derr := committed(t.ID, cur, states, true)
	if derr != nil {
		return st, nil, derr
	}
	return st, pending, nil
}

// committed decides, from state.json (cur) and the log's last two
// state-carrying events (newest first), the committed state. States are
// compared by phase and revision, and by actors too when actors is set
// (`orch list` reads state.json's phase and revision only).
func committed(id string, cur State, states []Event, actors bool) (State, *Pending, *DisagreeError) {
	last := *states[0].State
	if last.Task == "" {
		last.Task = cur.Task
	}
	switch {
	case cur.Revision == last.Revision:
		if same, field := sameAs(cur, last, actors); !same {
			return last, nil, &DisagreeError{Task: id, Field: field, StateJSON: cur, Logged: last, Seq: states[0].Seq}
		}
		return cur, nil, nil
	case cur.Revision == last.Revision-1 && len(states) > 1:
		if same, field := sameAs(cur, *states[1].State, actors); !same {
			return last, nil, &DisagreeError{Task: id, Field: field, StateJSON: cur, Logged: last, Seq: states[0].Seq}
		}
		return last, &Pending{Seq: states[0].Seq, Kind: states[0].Kind, Revision: last.Revision, Behind: cur.Revision, Moves: len(states[0].Moves)}, nil
	}
	return last, nil, &DisagreeError{Task: id, Field: "$.revision", StateJSON: cur, Logged: last, Seq: states[0].Seq}
}

// sameAs compares two states by phase and revision, and by actors when
// actors is set; it names the first field that differs.
func sameAs(a, b State, actors bool) (bool, string) {
	if !actors {
		a.Actors, b.Actors = nil, nil
	}
	if a.Phase == b.Phase && a.Revision == b.Revision && reflect.DeepEqual(a.Actors, b.Actors) {
		// Equal values encode alike: no need to encode them (readers
		// decide this on every refresh).
		return true, ""
	}
	same, field, err := sameState(a, b)
	return same || err != nil, field
}

// DisagreeError says state.json disagrees with the state the transcript
// committed, in a way no interrupted command explains: it was changed
// outside orch (a phase set by hand). Readers report the transcript's
// state and this error; it wraps ErrInvalidState (exit 4).
type DisagreeError struct {
	Task      string
	Field     string // the first field that differs: "$.phase", "$.revision", "$.actors"
	StateJSON State  // what state.json says
	Logged    State  // what the transcript committed
	Seq       int64  // the transcript line of the logged state
}

func (e *DisagreeError) Error() string {
	return fmt.Sprintf("task %s: %s says phase %s (revision %d) but the transcript committed phase %s (revision %d, seq %d); %s differs: state.json was changed outside orch and is not the task's state; "+
		"restore it from the transcript (`orch log --task %s`) and check with `orch verify --task %s`",
		e.Task, StateFile, e.StateJSON.Phase, e.StateJSON.Revision, e.Logged.Phase, e.Logged.Revision, e.Seq, e.Field, e.Task, e.Task)
}

// Unwrap returns ErrInvalidState: the exit code is 4.
func (e *DisagreeError) Unwrap() error { return ErrInvalidState }

// loggedStates returns the log's last two complete state-carrying events,
// newest first (fewer when the log holds fewer; none when there is no
// log). It opens the log read only.
func (t *Task) loggedStates() ([]Event, error) {
	f, err := openRegular(filepath.Join(t.Dir, TranscriptFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open transcript of task %s: %w", t.ID, err)
	}
	defer f.Close()
	tl, err := t.readTail(f, 2)
	if err != nil {
		return nil, err
	}
	return tl.states, nil
}
