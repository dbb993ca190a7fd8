package board

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/orchdev/orch/internal/durable"
	"github.com/orchdev/orch/internal/fileid"
	"github.com/orchdev/orch/internal/task"
)

// The cards' cache (docs/board.md, "Cards"): the board keeps, per task,
// the committed state its card read (task.Task.CommittedState: state.json,
// checked against the transcript's last state-carrying events), keyed by
// the identity of state.json and transcript.jsonl as an lstat gives it
// (size, mtime, ctime, inode, device, mode). A refresh takes it from there
// when neither file changed, as git's index does: an entry is trusted only
// when both identities are unchanged and both files' mtime and ctime are
// older than the file system's time at which the reading began, so that a
// file changed in the same clock tick as it was read (a same-size edit
// within the same second, on a coarse clock) is read again.

// holds reports whether what was read of a file whose identity was was,
// reading from the file system's time since, still holds for the file
// whose identity is now now: the identity unchanged and the file last
// changed before since (the zero identity is a file that does not exist:
// it has nothing to change).
func holds(was, now fileid.ID, since int64) bool {
	return was == now && (now == fileid.ID{} || now.ChangedBefore(since))
}

// lstatID is the identity of path as an lstat gives it; a file that does
// not exist has the zero identity. ok is false when it cannot be had (and
// always off Linux), and for a file that is not a regular one (a
// symbolic link): then nothing is taken from the cards' cache.
func lstatID(path string) (id fileid.ID, ok bool) {
	id, err := fileid.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fileid.ID{}, true
	}
	// A symbolic link's identity does not change with what it points
	// to: nothing read through one is kept.
	return id, err == nil && id.IsRegular()
}

// fsClock reads the file system's clock: the mtime the file system gives
// a file the board writes (.orch/cache/board.clock), whatever the
// process's clock says.
type fsClock struct {
	mu   sync.Mutex
	path string
	f    *os.File
}

// now is the file system's time; ok is false when it cannot be had (then
// nothing is cached).
func (c *fsClock) now() (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.f == nil {
		dir := filepath.Dir(c.path)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return 0, false
		}
		if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
			return 0, false // not a folder of its own (a symbolic link): write nothing
		}
		f, err := os.OpenFile(c.path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return 0, false
		}
		if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
			f.Close()
			return 0, false
		}
		c.f = f
	}
	// A write marks the file's mtime with the file system's current time.
	if _, err := c.f.WriteAt([]byte{'\n'}, 0); err != nil {
		return 0, false
	}
	id, err := fileid.Fstat(c.f)
	return id.Mtime, err == nil
}

func (c *fsClock) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.f != nil {
		c.f.Close()
		c.f = nil
	}
}

// cardStates is the cards' cache of committed states, by task id.
type cardStates struct {
	mu sync.Mutex
	m  map[string]*cardState
	// lstat is lstatID (tests give the identity a coarse file system
	// would).
	lstat func(path string) (fileid.ID, bool)
	// parsed is state.json as ReadState read it, by task id, with its
	// identity and the file system's time at which the reading began: a
	// change of the transcript alone does not read state.json again.
	parsed map[string]*parsedState
	// Hits and misses count the states taken from the cache and read
	// again (for tests and benchmarks); diskHits, those of the hits taken
	// from the cards' cache file; folds, those of the misses decided from
	// the transcript's lines as the card read them (task.StateFold)
	// instead of CommittedState; stateReads, the readings of state.json.
	hits, misses, diskHits, folds, stateReads int

	// path is the cards' cache file (cardfile.go; "" keeps none). disk
	// holds its entries, loaded with the first card read; remember
	// updates them with each card read, save writes them when changed.
	path   string
	loaded bool
	disk   map[string]*diskCard
	seen   map[string]bool
	dirty  bool
	// saveEvery spaces the writes of the file (0: at the end of every
	// page that changed an entry): after a write, the next waits on
	// timer. saved is when the last one was made.
	saveEvery time.Duration
	saved     time.Time
	timer     *time.Timer
}

// load reads the cards' cache file once (cs.mu held).
func (cs *cardStates) load() {
	if cs.loaded {
		return
	}
	cs.loaded = true
	if cs.path != "" {
		cs.disk = readCards(cs.path)
		durable.RemoveStaleTemps(cs.path, time.Hour)
	}
}

// remember keeps d as task id's entry of the cards' cache file.
func (cs *cardStates) remember(id string, d *diskCard) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.path == "" {
		return
	}
	cs.load()
	if cs.seen == nil {
		cs.seen = map[string]bool{}
	}
	cs.seen[id] = true
	if old := cs.disk[id]; old != nil && old.State == d.State && old.Log == d.Log && old.Since == d.Since {
		return
	}
	if cs.disk == nil {
		cs.disk = map[string]*diskCard{}
	}
	cs.disk[id], cs.dirty = d, true
}

// save ends a page: the entries of tasks the page did not read are
// dropped, and the cards' cache file is written when its entries changed
// — at once, or when saveEvery has passed since the last write.
func (cs *cardStates) save() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.path == "" || !cs.loaded {
		return
	}
	for id := range cs.disk {
		if !cs.seen[id] {
			delete(cs.disk, id)
			cs.dirty = true
		}
	}
	cs.seen = nil
	if !cs.dirty {
		return
	}
	if wait := cs.saveEvery - time.Since(cs.saved); wait > 0 {
		if cs.timer == nil {
			cs.timer = time.AfterFunc(wait, cs.flush)
		}
		return
	}
	cs.write()
}

// flush writes the cards' cache file now if a write is waiting (when the
// board stops).
func (cs *cardStates) flush() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.timer != nil {
		cs.timer.Stop()
		cs.timer = nil
	}
	if cs.path != "" && cs.dirty {
		cs.write()
	}
}

// write writes the cards' cache file (cs.mu held).
func (cs *cardStates) write() {
	writeCards(cs.path, cs.disk)
	cs.dirty = false
	cs.saved = time.Now()
}

// cardState is a committed state as CommittedState returned it, with the
// identities of state.json and the transcript taken before reading them
// and the file system's time at which the reading began. st is shared
// (with the cards' cache file's entries): not to be changed.
type cardState struct {
	state, log fileid.ID
	since      int64
	st         task.State
	pending    *task.Pending
	err        error
}

// trusted reports whether e still holds for files whose identities are
// now state and log.
func (e *cardState) trusted(state, log fileid.ID) bool {
	return holds(e.state, state, e.since) && holds(e.log, log, e.since)
}

// parsedState is state.json as ReadState read it (st, or err), with its
// identity before it was read and the file system's time then. st is
// shared: not to be changed.
type parsedState struct {
	id    fileid.ID
	since int64
	st    task.State
	err   error
}

// committed is a task's committed state as the card reads it, and the
// transcript's identity before it was read.
type committed struct {
	st task.State
	// shared is st as the cards' cache keeps it (st is a copy): not to
	// be changed.
	shared  task.State
	pending *task.Pending
	err     error
	// state is state.json's identity and read the file system's time at
	// which the reading of st began; disk is the entry of the cards'
	// cache file st was taken from (nil: none).
	state fileid.ID
	read  int64
	disk  *diskCard
	// log is the transcript's identity and since the file system's time
	// before it was read; logOK is false when either could not be had.
	log   fileid.ID
	since int64
	logOK bool
	// tail is the transcript's reading the state was decided from, when
	// it was read for it (tailErr: the reading failed).
	tail    *tailRead
	tailErr error
}

// committed is t.CommittedState(), taken from the cache when state.json
// and the transcript did not change since it was read; since is the file
// system's time now (stamped false: none could be had, nothing is
// cached). Otherwise the transcript's tail is read through costs and the
// state decided from its lines (task.StateFold) and state.json, itself
// taken from the cache while it did not change.
func (cs *cardStates) committed(t *task.Task, since int64, stamped bool, costs *costTails) committed {
	lstat := cs.lstat
	if lstat == nil {
		lstat = lstatID
	}
	stateID, okS := lstat(filepath.Join(t.Dir, task.StateFile))
	logID, okL := lstat(filepath.Join(t.Dir, task.TranscriptFile))
	ok := stamped && okS && okL
	if ok {
		cs.mu.Lock()
		e := cs.m[t.ID]
		hit := e != nil && e.trusted(stateID, logID)
		var d *diskCard
		if !hit {
			// The first page of `orch serve`: the cards' cache file.
			cs.load()
			if d = cs.disk[t.ID]; d != nil && d.trusted(stateID, logID) {
				if cs.m == nil {
					cs.m = map[string]*cardState{}
				}
				e = &cardState{state: d.State, log: d.Log, since: d.Since, st: d.St, pending: d.Pending}
				cs.m[t.ID], hit = e, true
				cs.diskHits++
			} else {
				d = nil
			}
		}
		if hit {
			cs.hits++
		}
		cs.mu.Unlock()
		if hit {
			return committed{st: e.st.Clone(), shared: e.st, pending: e.pending, err: e.err, log: logID, since: since, logOK: true, state: stateID, read: e.since, disk: d}
		}
	}
	cm := cs.decide(t, committed{log: logID, since: since, logOK: ok, state: stateID, read: since}, stamped && okS, costs)
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.m == nil {
		cs.m = map[string]*cardState{}
	}
	cs.misses++
	if ok {
		cs.m[t.ID] = &cardState{state: stateID, log: logID, since: since, st: cm.st, pending: cm.pending, err: cm.err}
	} else {
		delete(cs.m, t.ID)
	}
	cm.shared, cm.st = cm.st, cm.st.Clone()
	return cm
}

// decide is CommittedState from the transcript's lines as costs read
// them and state.json, read again only when its identity (cm.state;
// keep: it can be kept) changed. When the lines read are not all folded
// (an entry taken from the cards' cache file, or one whose bytes were
// too many to check), it is CommittedState itself. The state may be the
// cache's: not to be changed.
func (cs *cardStates) decide(t *task.Task, cm committed, keep bool, costs *costTails) committed {
	tr, terr := costs.read(t, cm, true)
	cm.tail, cm.tailErr = &tr, terr
	if terr != nil || !tr.folded {
		cm.st, cm.pending, cm.err = t.CommittedState()
		return cm
	}
	cur, err := cs.stateJSON(t, cm.state, cm.since, keep)
	if err != nil {
		cm.err = err
		return cm
	}
	cm.st, cm.pending, cm.err = tr.fold.Committed(t.ID, cur)
	cs.mu.Lock()
	cs.folds++
	cs.mu.Unlock()
	return cm
}

// stateJSON is t.ReadState(), taken from the cache when state.json's
// identity is id, the one it was read with, and it was older than the
// reading; since is the file system's time before id was taken (keep
// false: nothing is kept). The state is the cache's: not to be changed.
func (cs *cardStates) stateJSON(t *task.Task, id fileid.ID, since int64, keep bool) (task.State, error) {
	cs.mu.Lock()
	if p := cs.parsed[t.ID]; keep && p != nil && holds(p.id, id, p.since) {
		cs.mu.Unlock()
		return p.st, p.err
	}
	cs.stateReads++
	cs.mu.Unlock()
	st, err := t.ReadState()
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.parsed == nil {
		cs.parsed = map[string]*parsedState{}
	}
	if keep {
		cs.parsed[t.ID] = &parsedState{id: id, since: since, st: st, err: err}
	} else {
		delete(cs.parsed, t.ID)
	}
	return st, err
}
