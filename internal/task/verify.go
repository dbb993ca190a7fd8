package task

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/orchdev/orch/internal/event"
)

// maxProblems caps the problems Verify lists; the rest are counted.
const maxProblems = 50

// VerifyReport is the result of Verify.
type VerifyReport struct {
	Events   int       `json:"events"` // complete transcript lines
	OK       bool      `json:"ok"`
	Problems []Problem `json:"problems,omitempty"` // in file order; the first is the first damage
	// Pending is set when state.json is one step behind the log's last
	// state-carrying event and equal to the state before it: a commit
	// interrupted between the append and the rename. It is durable, not
	// damage: the next orch command rolls state.json forward.
	Pending *Pending `json:"pending,omitempty"`
	// Torn is set when the log ends with an incomplete line: an append
	// interrupted before it was durable, which nothing acted on. Not
	// damage either: the next orch command cuts it off.
	Torn *Torn `json:"torn,omitempty"`
}

// Torn describes an incomplete last line of the transcript.
type Torn struct {
	Line  int   `json:"line"`  // its line number
	Bytes int64 `json:"bytes"` // bytes without a final newline
}

// String says what happened and what comes next.
func (t Torn) String() string {
	return fmt.Sprintf("line %d is an incomplete write (%d bytes without a final newline), an append interrupted before it was durable; the next orch command cuts it off", t.Line, t.Bytes)
}

// Problem is one finding of Verify. For a transcript line (Line ≥ 1) Msg
// says what is wrong with it ("prev hash mismatch: line 6 was edited, …");
// for the rest (Line 0) Msg starts with the file it is about
// ("state.json: …"). String renders either as one line.
type Problem struct {
	Line int    `json:"line"` // transcript line, from 1; 0 for state.json or the files as a whole
	Msg  string `json:"msg"`
}

// String is "line 7: <msg>" for a line, Msg alone otherwise.
func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("line %d: %s", p.Line, p.Msg)
	}
	return p.Msg
}

// verifier accumulates problems.
type verifier struct {
	rep     VerifyReport
	dropped int
}

func (v *verifier) add(line int, format string, args ...any) {
	if len(v.rep.Problems) >= maxProblems {
		v.dropped++
		return
	}
	v.rep.Problems = append(v.rep.Problems, Problem{Line: line, Msg: fmt.Sprintf(format, args...)})
}

// Verify checks the task read-only: every transcript line is a JSON object
// with seq, ts, kind and prev; seq runs 1, 2, …; prev is the sha256 hex of
// the previous line ("" for line 1); line 1 is a "created" event; the
// states carried by events have revisions 1, 2, … in order; and state.json
// equals the last carried state (phase, revision, actors). An error is
// returned only when the files cannot be read at all.
//
// The chain only protects lines that have a successor: an edit of the last
// line is caught only when it changes the state that state.json mirrors.
func (t *Task) Verify() (VerifyReport, error) {
	v := &verifier{}
	var last, prev *Event
	f, err := openRegular(filepath.Join(t.Dir, TranscriptFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		v.add(0, "%s: missing: the task has no event log", TranscriptFile)
	case err != nil:
		return v.rep, fmt.Errorf("verify task %s: %w", t.ID, err)
	default:
		defer f.Close()
		if last, prev, err = v.chain(f); err != nil {
			return v.rep, fmt.Errorf("verify task %s: %w", t.ID, err)
		}
		if v.rep.Events == 0 {
			v.add(0, "%s: no complete event: expected a %q event first", TranscriptFile, event.KindCreated)
		}
	}
	v.checkState(t, last, prev)
	if v.dropped > 0 {
		v.rep.Problems = append(v.rep.Problems, Problem{Msg: fmt.Sprintf("(%d more problems not listed)", v.dropped)})
	}
	v.rep.OK = len(v.rep.Problems) == 0
	return v.rep, nil
}

// chain walks the transcript and returns the last two state-carrying
// events (last, and the one before it).
func (v *verifier) chain(f *os.File) (last, before *Event, err error) {
	var (
		prevLine []byte
		prevSeq  int64 // seq of the previous line; -1 when it was unreadable
		lastRev  int64
	)
	err = eachLine(f, func(n int, line []byte, complete bool) error {
		defer func() { prevLine = line }()
		if !complete {
			// An append interrupted before it was durable (the line was
			// never acted on): not damage; the next command cuts it off.
			v.rep.Torn = &Torn{Line: n, Bytes: int64(len(line))}
			return nil
		}
		v.rep.Events++
		ev, ok := v.line(n, line)
		if !ok {
			prevSeq = -1
			return nil
		}
		switch {
		case n == 1 && ev.Seq != 1:
			v.add(n, "seq is %d, expected 1", ev.Seq)
		case n > 1 && prevSeq >= 0 && ev.Seq != prevSeq+1:
			v.add(n, "seq is %d, expected %d: a line before it was removed or inserted, or a seq was edited", ev.Seq, prevSeq+1)
		}
		want := ""
		if n > 1 {
			want = hashLine(prevLine)
		}
		if ev.Prev != want {
			if n == 1 {
				v.add(n, "prev is %q, expected \"\" for the first line", ev.Prev)
			} else {
				v.add(n, "prev hash mismatch: line %d was edited, or lines before line %d were removed or inserted", n-1, n)
			}
		}
		prevSeq = ev.Seq
		if n == 1 && (ev.Kind != event.KindCreated || ev.State == nil) {
			v.add(n, "the first event must be %q and carry the first state, got kind %q", event.KindCreated, ev.Kind)
		}
		if ev.State != nil {
			if ev.State.Revision != lastRev+1 {
				v.add(n, "state revision is %d, expected %d: revisions grow by one with every state change", ev.State.Revision, lastRev+1)
			}
			lastRev = ev.State.Revision
			before, last = last, &ev
			if err := checkMoves(ev.Moves); err != nil {
				v.add(n, "%v", err)
			}
		} else if len(ev.Moves) > 0 {
			v.add(n, "moves without a state")
		}
		return nil
	})
	return last, before, err
}

// line checks the shape of one line and decodes it.
func (v *verifier) line(n int, line []byte) (Event, bool) {
	var obj map[string]json.RawMessage
	if jsonKind(line) != "object" || json.Unmarshal(line, &obj) != nil {
		var err error
		if !json.Valid(line) {
			var x any
			err = json.Unmarshal(line, &x)
			v.add(n, "not valid JSON (%v): the line was damaged", err)
		} else {
			v.add(n, "expected a JSON object, got %s", describe(line))
		}
		return Event{}, false
	}
	for _, f := range []struct{ key, kind, what string }{
		{"seq", "number", "an integer"},
		{"ts", "string", "an RFC 3339 time string"},
		{"kind", "string", "a non-empty string"},
		{"prev", "string", "a sha256 hex string"},
	} {
		raw, ok := obj[f.key]
		if !ok {
			v.add(n, "%q is missing, expected %s", f.key, f.what)
			return Event{}, false
		}
		if jsonKind(raw) != f.kind {
			v.add(n, "%q is %s, expected %s", f.key, describe(raw), f.what)
			return Event{}, false
		}
	}
	var ev Event
	if err := json.Unmarshal(line, &ev); err != nil {
		v.add(n, "%v", err)
		return Event{}, false
	}
	if ev.Kind == "" {
		v.add(n, "\"kind\" is empty, expected a non-empty string")
		return Event{}, false
	}
	return ev, true
}

// checkState compares state.json with the last state of the transcript.
// One step behind it, and equal to the state before it, is a commit
// interrupted between the append and the rename: durable, not damage.
func (v *verifier) checkState(t *Task, lastEv, prevEv *Event) {
	cur, err := t.ReadState()
	if err != nil {
		var se *StateError
		if errors.As(err, &se) {
			v.add(0, "%s: %s: expected %s, got %s", se.File, se.Field, se.Expected, se.Got)
		} else {
			v.add(0, "%s: %v", StateFile, err)
		}
		return
	}
	if lastEv == nil {
		return // the transcript problems already say so
	}
	last := lastEv.State
	rev := strconv.FormatInt
	switch {
	case cur.Revision == last.Revision-1:
		if prevEv == nil {
			v.add(0, "%s: revision %d is one behind the transcript's last state (%d), and no event records the state at revision %d",
				StateFile, cur.Revision, last.Revision, cur.Revision)
			return
		}
		same, field, err := sameState(cur, *prevEv.State)
		switch {
		case err != nil:
			v.add(0, "%s: %v", StateFile, err)
		case !same:
			v.add(0, "%s: %s differs from the transcript's state at revision %d, and the transcript's last state (revision %d) is one ahead: state.json was changed outside orch",
				StateFile, field, cur.Revision, last.Revision)
		default:
			v.rep.Pending = &Pending{Seq: lastEv.Seq, Kind: lastEv.Kind, Revision: last.Revision, Behind: cur.Revision, Moves: len(lastEv.Moves)}
		}
	case cur.Revision != last.Revision:
		v.add(0, "%s: revision %d does not match the transcript's last state (revision %s): state.json was changed outside orch",
			StateFile, cur.Revision, rev(last.Revision, 10))
	default:
		same, field, err := sameState(cur, *last)
		if err != nil {
			v.add(0, "%s: %v", StateFile, err)
		} else if !same {
			v.add(0, "%s: %s differs from the transcript's state at revision %d: state.json was changed outside orch",
				StateFile, field, last.Revision)
		}
	}
}
