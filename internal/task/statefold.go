package task

import (
	"bytes"
	"encoding/json"
)

// StateFold is what CommittedState reads of a transcript, folded line by
// line from its start for a reader that keeps it and reads only what is
// appended (the board, docs/board.md "Cards"). CommittedState reads the
// log backwards from its last complete line: that line must be an event,
// and the lines before it that hold `"state"` are decoded until two
// state-carrying events are found; a line among them that is not an event
// ends the search, and state.json is then reported as it is. The fold
// keeps exactly what that search could still reach as lines are
// appended — the last line, and the last state-carrying events back to
// the second one or to a damaged line after it — so that Committed
// decides as CommittedState does on the same lines.
//
// The decision depends only on the lines from Start on: a reader that
// finds those bytes (and the '\n' before them) unchanged may fold the
// lines appended since; otherwise it must fold the file again from its
// start. A StateFold is not safe for concurrent use; a copy of one folds
// on independently of it.
type StateFold struct {
	lines int64
	// last is the last line folded; raw holds its bytes while it is
	// not decoded (a line without `"state"` is decoded only if it stays
	// the last one).
	last foldLine
	raw  []byte
	// recent are the lines holding `"state"` that the search counts,
	// oldest first: state-carrying events, and damaged lines. reaches is
	// true when they end the search (two events, or a damaged line
	// after the second newest): older lines can no longer matter.
	recent  []foldLine
	reaches bool
}

// foldLine is one line of the fold: where it starts, whether it holds
// `"state"` (cand), and, once decoded, its event or why it is not one.
type foldLine struct {
	off     int64
	cand    bool
	decoded bool
	ev      Event
	err     error
}

// stateKey marks the lines CommittedState's search decodes (readTail).
var stateKey = []byte(`"state"`)

// Add folds the next complete line, without its '\n', which starts at
// byte off of the transcript. The line's bytes are not kept after Add
// returns except in the fold's own copy.
func (f *StateFold) Add(line []byte, off int64) {
	f.add(line, off, nil, nil)
}

// AddDecoded is Add for a line the caller already decoded into ev (with
// json.Unmarshal; err its error), so that it is not decoded twice.
func (f *StateFold) AddDecoded(line []byte, off int64, ev Event, err error) {
	f.add(line, off, &ev, err)
}

func (f *StateFold) add(line []byte, off int64, ev *Event, err error) {
	f.lines++
	l := foldLine{off: off, cand: bytes.Contains(line, stateKey)}
	if ev != nil {
		l.decoded, l.ev, l.err = true, *ev, err
	}
	f.raw = nil
	switch {
	case l.cand:
		if !l.decoded {
			l.decoded = true
			l.err = json.Unmarshal(line, &l.ev)
		}
		if l.err != nil || l.ev.State != nil {
			// A new array: a copy of the fold keeps its own.
			f.recent = append(f.recent[:len(f.recent):len(f.recent)], l)
			f.trim()
		}
	case !l.decoded:
		f.raw = bytes.Clone(line)
	}
	f.last = l
}

// trim drops the lines older than those the search stops at.
func (f *StateFold) trim() {
	states := 0
	for i := len(f.recent) - 1; i >= 0; i-- {
		if f.recent[i].err == nil {
			states++
		}
		if f.recent[i].err != nil || states == 2 {
			if i > 0 {
				f.recent = append(f.recent[:0:0], f.recent[i:]...)
			}
			f.reaches = true
			return
		}
	}
}

// settle decodes the last line if it was not.
func (f *StateFold) settle() {
	if f.lines == 0 || f.last.decoded {
		return
	}
	f.last.decoded = true
	f.last.err = json.Unmarshal(f.raw, &f.last.ev)
	f.raw = nil
}

// Start is the offset of the first line the fold's decision depends on:
// 0 while the search could still reach the transcript's first line.
func (f *StateFold) Start() int64 {
	if !f.reaches {
		return 0
	}
	return f.recent[0].off
}

// Lines is the number of lines folded.
func (f *StateFold) Lines() int64 { return f.lines }

// Committed is CommittedState for a task whose state.json reads cur (as
// ReadState returned it without error) and whose transcript's complete
// lines are the ones folded.
func (f *StateFold) Committed(id string, cur State) (State, *Pending, error) {
	f.settle()
	if f.lines == 0 || f.last.err != nil {
		return cur, nil, nil
	}
	var states []Event
	if !f.last.cand && f.last.ev.State != nil {
		// Not found by the search's filter, but the last line is
		// always decoded.
		states = append(states, f.last.ev)
	}
	for i := len(f.recent) - 1; i >= 0 && len(states) < 2; i-- {
		if f.recent[i].err != nil {
			return cur, nil, nil
		}
		states = append(states, f.recent[i].ev)
	}
	if len(states) == 0 {
		return cur, nil, nil
	}
	st, pending, derr := committed(id, cur, states, true)
	if st.Actors != nil {
		st = st.Clone() // the fold's events are not shared
	}
	if derr != nil {
		return st, nil, derr
	}
	return st, pending, nil
}
