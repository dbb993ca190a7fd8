package board

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/evidence"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/fileid"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/task"
)

// costTails keeps, per task, the model calls read from its transcript so
// far and where that reading stopped: the transcript is append-only, so a
// refresh of the board reads only its tail (docs/board.md, "Cards"). A
// transcript that is not the one read before (another file, shorter, or
// whose last line read is not where it was) is read again whole.
type costTails struct {
	mu sync.Mutex
	m  map[string]*costTail
}

type costTail struct {
	// id is the transcript's identity before it was read and since the
	// file system's time then (idOK false: none): while the identity is
	// unchanged and older than since, nothing is read (the cards' cache,
	// cardcache.go).
	id    fileid.ID
	since int64
	idOK  bool
	sum   agent.CostSummary

	file   os.FileInfo
	offset int64  // bytes read, up to the end of the last complete line
	last   []byte // that line, with its '\n'
	calls  []event.ModelCall
	// entered is the last event that entered a phase (creation,
	// transition, override, redo): the phase and since when.
	entered Span
	// lines is the number of lines read; gates the gate events among
	// them and gateErr the first such line that did not decode
	// (evidence.GateEventOf): the gates' records the card's decision
	// folds (evidence.Cache.UseRecords).
	lines   int
	gates   []lifecycle.GateEvent
	gateErr error
}

// tailRead is what a card takes of its transcript: the model calls' sum,
// the phase entered last, the gate events, and the file system's time at
// which the reading of them began (0 when it cannot be kept).
type tailRead struct {
	sum     agent.CostSummary
	entered Span
	gates   []lifecycle.GateEvent
	gateErr error
	since   int64
}

// of returns the cost summary of task t's model calls and the phase it
// last entered, with when (phaseSpans' last span).
func (ct *costTails) of(t *task.Task) (agent.CostSummary, Span, error) {
	return ct.ofCached(t, committed{})
}

// ofCached is of, answered without reading the transcript when its
// identity (cm.log, taken before cm.since) is the one read last time and
// the transcript is older than that reading.
func (ct *costTails) ofCached(t *task.Task, cm committed) (agent.CostSummary, Span, error) {
	r, err := ct.read(t, cm)
	return r.sum, r.entered, err
}

// read is ofCached with the gate events and the time the reading began.
// What the cards' cache file gave the committed state with (cm.disk) is
// taken as well.
func (ct *costTails) read(t *task.Task, cm committed) (tailRead, error) {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	if ct.m == nil {
		ct.m = map[string]*costTail{}
	}
	if prev := ct.m[t.ID]; prev != nil && prev.idOK && cm.logOK && holds(prev.id, cm.log, prev.since) {
		return prev.result(prev.since), nil
	}
	if d := cm.disk; d != nil && cm.logOK && holds(d.Log, cm.log, d.Since) {
		// Kept without the file's place: a change reads it whole again.
		c := &costTail{id: d.Log, since: d.Since, idOK: true, sum: d.Cost, entered: d.Entered, gates: d.Gates}
		ct.m[t.ID] = c
		return c.result(d.Since), nil
	}
	p := filepath.Join(t.Dir, task.TranscriptFile)
	f, err := os.Open(p)
	if err != nil {
		delete(ct.m, t.ID)
		return tailRead{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		delete(ct.m, t.ID)
		return tailRead{}, errors.Join(err, exit.New(exit.ErrInvalid, "%s is not a regular file", task.TranscriptFile))
	}
	prev := ct.m[t.ID]
	if prev == nil || !prev.continues(f, fi) {
		prev = &costTail{}
	}
	next, err := prev.read(f, fi.Size())
	if err != nil {
		delete(ct.m, t.ID)
		return tailRead{}, err
	}
	next.file = fi
	next.id, next.since, next.idOK = cm.log, cm.since, cm.logOK
	next.sum = agent.SumCosts(next.calls)
	ct.m[t.ID] = next
	if !cm.logOK {
		return next.result(0), nil
	}
	return next.result(cm.since), nil
}

func (c *costTail) result(since int64) tailRead {
	return tailRead{sum: c.sum, entered: c.entered, gates: c.gates, gateErr: c.gateErr, since: since}
}

// continues reports whether f is the file read before, grown or not, with
// the last line read still where it was.
func (c *costTail) continues(f *os.File, fi os.FileInfo) bool {
	if c.file == nil || !os.SameFile(c.file, fi) || fi.Size() < c.offset {
		return false
	}
	if len(c.last) == 0 {
		return c.offset == 0
	}
	b := make([]byte, len(c.last))
	_, err := f.ReadAt(b, c.offset-int64(len(c.last)))
	return err == nil && bytes.Equal(b, c.last)
}

// read reads the complete lines after c's offset of f (size bytes long
// when it was opened) and returns c with them added.
func (c *costTail) read(f *os.File, size int64) (*costTail, error) {
	out := &costTail{offset: c.offset, last: c.last, calls: c.calls[:len(c.calls):len(c.calls)], entered: c.entered,
		lines: c.lines, gates: c.gates[:len(c.gates):len(c.gates)], gateErr: c.gateErr}
	if _, err := f.Seek(c.offset, io.SeekStart); err != nil {
		return nil, err
	}
	// A buffer as large as what was appended (bufio's smallest is 16
	// bytes), at most 64 KiB.
	br := bufio.NewReaderSize(f, int(min(max(size-c.offset, 0)+1, 64<<10)))
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			out.offset += int64(len(line))
			out.last = line
			out.lines++
			if out.gateErr == nil {
				if e, ok, gerr := evidence.GateEventOf(line, out.lines); gerr != nil {
					out.gateErr = gerr
				} else if ok {
					out.gates = append(out.gates, e)
				}
			}
			switch {
			case bytes.Contains(line, []byte(`"kind":"model_call"`)):
				var ev task.Event
				if err := json.Unmarshal(line, &ev); err == nil && ev.Kind == event.KindModelCall {
					out.calls = append(out.calls, task.ModelCalls([]task.Event{ev})...)
				}
			case entersPhase(line):
				var ev task.Event
				if err := json.Unmarshal(line, &ev); err == nil {
					if sp := phaseSpans([]task.Event{ev}); len(sp) == 1 {
						out.entered = sp[0]
					}
				}
			}
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// entersPhase reports whether a (compact JSON) transcript line may be an
// event that enters a phase (phaseSpans decides).
func entersPhase(line []byte) bool {
	for _, k := range []string{`"kind":"created"`, `"kind":"transition"`, `"kind":"override"`, `"kind":"redo"`} {
		if bytes.Contains(line, []byte(k)) {
			return true
		}
	}
	return false
}
