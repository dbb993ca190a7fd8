package board

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"sync"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/evidence"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/fileid"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/task"
)

// costTails keeps, per task, what the card read of its transcript so
// far and where that reading stopped: the transcript is append-only, so a
// refresh of the board reads only its tail (docs/board.md, "Cards"). A
// transcript that is not the one read before (another file, shorter, or
// whose bytes the reading depends on are not the ones it read) is read
// again whole.
type costTails struct {
	mu sync.Mutex
	m  map[string]*costTail
	// buf is where the bytes a reading depends on are read back to be
	// compared (costTail.continues).
	buf []byte
}

// maxRegion bounds the bytes of a transcript a tail entry keeps to check
// them: the lines its committed state depends on (task.StateFold's
// Start) to the end of the last one read.
var maxRegion int64 = 256 << 10 // a variable for tests

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
	// costs sums the model calls read (agent.SumCosts, one at a time).
	costs agent.CostSum
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
	// fold is what the committed state is decided from (folded false:
	// the entry was not read from the file's start, as one taken from
	// the cards' cache file). region holds the transcript's bytes from
	// regionAt (the '\n' before the fold's Start) to offset, the bytes
	// the fold depends on; regionOK is false when there were more than
	// maxRegion of them: then only the last line is checked before
	// reading on, and the committed state is read again
	// (task.Task.CommittedState).
	fold     task.StateFold
	folded   bool
	region   []byte
	regionAt int64
	regionOK bool
}

// tailRead is what a card takes of its transcript: the model calls' sum,
// the phase entered last, the gate events, and the file system's time at
// which the reading of them began (0 when it cannot be kept); folded
// says whether fold, a copy of the entry's, holds every line read.
type tailRead struct {
	sum     agent.CostSummary
	entered Span
	gates   []lifecycle.GateEvent
	gateErr error
	since   int64
	fold    task.StateFold
	folded  bool
}

// of returns the cost summary of task t's model calls and the phase it
// last entered, with when (phaseSpans' last span).
func (ct *costTails) of(t *task.Task) (agent.CostSummary, Span, error) {
	r, err := ct.read(t, committed{}, false)
	return r.sum, r.entered, err
}

// read reads task t's transcript's tail, or takes it from the entry kept
// when its identity (cm.log, taken before cm.since) is the one read last
// time and the transcript is older than that reading. What the cards'
// cache file gave the committed state with (cm.disk) is taken as well,
// unless fold is set: then the lines are read, so that the committed
// state can be decided from them (tailRead.folded, unless the bytes it
// depends on were too many to keep).
func (ct *costTails) read(t *task.Task, cm committed, fold bool) (tailRead, error) {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	if ct.m == nil {
		ct.m = map[string]*costTail{}
	}
	prev := ct.m[t.ID]
	if prev != nil && prev.idOK && cm.logOK && holds(prev.id, cm.log, prev.since) && (prev.folded || !fold) {
		return prev.result(prev.since), nil
	}
	if d := cm.disk; d != nil && !fold && cm.logOK && holds(d.Log, cm.log, d.Since) {
		// Kept without the file's place: a change reads it whole again.
		c := &costTail{id: d.Log, since: d.Since, idOK: true, sum: d.Cost, entered: d.Entered, gates: d.Gates}
		ct.m[t.ID] = c
		return c.result(d.Since), nil
	}
	f, err := t.OpenTranscript()
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
	next, err := prev.next(f, fi, &ct.buf)
	if err != nil {
		delete(ct.m, t.ID)
		return tailRead{}, err
	}
	next.file = fi
	next.id, next.since, next.idOK = cm.log, cm.since, cm.logOK
	next.sum = next.costs.Summary()
	ct.m[t.ID] = next
	if !cm.logOK {
		return next.result(0), nil
	}
	return next.result(cm.since), nil
}

func (c *costTail) result(since int64) tailRead {
	r := tailRead{sum: c.sum, entered: c.entered, gates: c.gates, gateErr: c.gateErr, since: since}
	if c.folded && c.regionOK {
		r.fold, r.folded = c.fold, true
	}
	return r
}

// maxPread bounds what a reading takes in one read: the bytes it checks
// and those appended since. A larger tail is read as a stream.
var maxPread int64 = 1 << 20 // a variable for tests

// next is c with the complete lines of f appended since it was read, or
// f read whole when f is not the file c read, grown or not, with the
// bytes c depends on unchanged (c nil: read whole). Those bytes are the
// region the committed state was decided from when it was kept, else the
// last line read. buf is scratch space for the reading. c is not to be
// used after: the two share their sums and the arrays they append to.
func (c *costTail) next(f *os.File, fi os.FileInfo, buf *[]byte) (*costTail, error) {
	size := fi.Size()
	if c == nil || c.file == nil || !os.SameFile(c.file, fi) || size < c.offset || c.offset == 0 {
		return (&costTail{regionOK: true, folded: true}).append(f, 0, size, nil, buf)
	}
	want, at := c.last, c.offset-int64(len(c.last))
	if c.folded && c.regionOK {
		want, at = c.region, c.regionAt
	}
	return c.append(f, at, size, want, buf)
}

// append reads f from byte at (c's offset less len(want)) to size, checks
// that it starts with want, and returns c with the complete lines after
// want added; when it does not start with want, f is read whole.
func (c *costTail) append(f *os.File, at, size int64, want []byte, buf *[]byte) (*costTail, error) {
	out := *c
	if size-at > maxPread {
		if len(want) > 0 {
			b := make([]byte, len(want))
			if _, err := f.ReadAt(b, at); err != nil || !bytes.Equal(b, want) {
				return (&costTail{regionOK: true, folded: true}).append(f, 0, size, nil, buf)
			}
		}
		return out.stream(f, size)
	}
	if int64(cap(*buf)) < size-at {
		*buf = make([]byte, size-at)
	}
	b := (*buf)[:size-at]
	n, err := f.ReadAt(b, at)
	if err != nil && err != io.EOF {
		return nil, err
	}
	b = b[:n]
	if len(b) < len(want) || !bytes.Equal(b[:len(want)], want) {
		return (&costTail{regionOK: true, folded: true}).append(f, 0, size, nil, buf)
	}
	for rest := b[len(want):]; ; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break
		}
		out.add(rest[:i+1])
		rest = rest[i+1:]
	}
	// The last line is kept, not the buffer it was read into.
	out.last = bytes.Clone(out.last)
	return &out, nil
}

// stream reads the complete lines after c's offset of f (size bytes long
// when it was opened) and returns c with them added.
func (c costTail) stream(f *os.File, size int64) (*costTail, error) {
	if _, err := f.Seek(c.offset, io.SeekStart); err != nil {
		return nil, err
	}
	// A buffer as large as what was appended (bufio's smallest is 16
	// bytes), at most 64 KiB.
	br := bufio.NewReaderSize(f, int(min(max(size-c.offset, 0)+1, 64<<10)))
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			c.add(line)
		}
		if err == io.EOF {
			return &c, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// add folds one complete line (with its '\n') into c.
func (c *costTail) add(line []byte) {
	at := c.offset
	c.offset += int64(len(line))
	c.last = line
	c.lines++
	if c.gateErr == nil {
		if e, ok, gerr := evidence.GateEventOf(line, c.lines); gerr != nil {
			c.gateErr = gerr
		} else if ok {
			c.gates = append(c.gates, e)
		}
	}
	text := line[:len(line)-1]
	var ev task.Event
	var err error
	decoded := false
	switch {
	case bytes.Contains(line, []byte(`"kind":"model_call"`)):
		err, decoded = json.Unmarshal(line, &ev), true
		if err == nil && ev.Kind == event.KindModelCall {
			for _, call := range task.ModelCalls([]task.Event{ev}) {
				c.costs.Add(call)
			}
		}
	case entersPhase(line):
		err, decoded = json.Unmarshal(line, &ev), true
		if err == nil {
			if sp := phaseSpans([]task.Event{ev}); len(sp) == 1 {
				c.entered = sp[0]
			}
		}
	}
	if !c.folded {
		return
	}
	if decoded {
		c.fold.AddDecoded(text, at, ev, err)
	} else {
		c.fold.Add(text, at)
	}
	if !c.regionOK {
		return
	}
	// The bytes from the fold's Start (and the '\n' before it) on.
	from := max(c.fold.Start()-1, 0)
	if cut := from - c.regionAt; cut > 0 {
		c.region = c.region[cut:]
		c.regionAt = from
	}
	if int64(len(c.region))+int64(len(line)) > maxRegion {
		c.region, c.regionOK = nil, false
		return
	}
	c.region = append(c.region, line...)
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
