package task

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

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

// CommittedState returns the task's state as the transcript committed it.
// That is state.json, except when state.json is exactly one revision behind
// the last state-carrying event of the log (complete lines only): then the
// change is durable although state.json was not replaced yet, and the state
// that event carries is returned with a non-nil Pending. It only reads and
// needs no lock; readers (`orch status`, `list`, `log`, `verify`) use it so
// that they report what is committed.
//
// A state.json that cannot be read is the *StateError of ReadState. Any
// other disagreement between state.json and the log (state.json ahead,
// further behind) is not an interrupted commit: state.json is returned as
// it is, and `orch verify` reports the damage.
func (t *Task) CommittedState() (State, *Pending, error) {
	cur, err := t.ReadState()
	if err != nil {
		return State{}, nil, err
	}
	last, err := t.lastLoggedStateAt(cur.Revision + 1)
	if err != nil || last == nil {
		// An unreadable log is for the commands that need it (and
		// `orch verify`) to report; state.json stands.
		return cur, nil, nil
	}
	st := *last.State
	if st.Task == "" {
		st.Task = cur.Task
	}
	return st, &Pending{Seq: last.Seq, Kind: last.Kind, Revision: st.Revision, Behind: cur.Revision, Moves: len(last.Moves)}, nil
}

// lastLoggedStateAt returns the last complete state-carrying event of the
// transcript when it carries revision rev, else nil (also when there is no
// log). It opens the log read only. The last complete line is usually that
// event, and its bytes are only parsed when they mention the revision.
func (t *Task) lastLoggedStateAt(rev int64) (*Event, error) {
	f, err := os.Open(filepath.Join(t.Dir, TranscriptFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open transcript of task %s: %w", t.ID, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat transcript of task %s: %w", t.ID, err)
	}
	end, err := findEnd(f, fi.Size())
	if err != nil {
		return nil, err
	}
	want := []byte(`"revision":` + strconv.FormatInt(rev, 10))
	r := newRevLines(f, end)
	for {
		line, _, ok, err := r.next()
		if err != nil || !ok {
			return nil, err
		}
		if !bytes.Contains(line, []byte(`"state":{`)) {
			continue // a line without a state (model_call, …); lines are compact JSON
		}
		if !bytes.Contains(line, want) {
			return nil, nil
		}
		var ev Event
		if err := json.Unmarshal(line, &ev); err != nil || ev.State == nil || ev.State.Revision != rev {
			return nil, nil
		}
		return &ev, nil
	}
}
