package board

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/orchdev/orch/internal/task"
)

// A watcher tells subscribers which tasks changed: a task whose
// transcript or state.json changed (size, time or inode), a task created
// or removed. File-system notifications (fsnotify) wake it; when they are
// unavailable (inotify limits, a file system without them) it polls. It
// also polls, slowly, when notifications work: a missed event is late,
// never lost.
type watcher struct {
	tasksDir string
	// poll is the polling interval without notifications; slow is the
	// safety-net interval with them.
	poll, slow time.Duration
	// forcePoll disables notifications (tests of the fallback).
	forcePoll bool

	mu   sync.Mutex
	subs map[*subscription]struct{}
	seen map[string]fileSig
	// mode says how changes are noticed: "notify" or "poll".
	mode string
	// ready is closed once the baseline is scanned and the mode known.
	ready chan struct{}
	// gen counts the changes published: a page rendered at one
	// generation is stale at a later one.
	gen int64
}

// Gen is the number of changes published so far.
func (w *watcher) Gen() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.gen
}

// fileSig is what tells a changed task: the transcript's and state.json's
// size and modification time.
type fileSig struct {
	logSize, stateSize int64
	logTime, stateTime time.Time
}

func newWatcher(tasksDir string) *watcher {
	return &watcher{tasksDir: tasksDir, poll: 250 * time.Millisecond, slow: 2 * time.Second,
		subs: map[*subscription]struct{}{}, seen: map[string]fileSig{}, ready: make(chan struct{})}
}

// A subscription collects the ids of changed tasks until they are taken:
// a slow reader gets them all at once, never loses one.
type subscription struct {
	mu      sync.Mutex
	pending map[string]bool
	wake    chan struct{}
}

// take returns the ids collected since the last take, sorted.
func (s *subscription) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.pending))
	for id := range s.pending {
		out = append(out, id)
	}
	clear(s.pending)
	slices.Sort(out)
	return out
}

// subscribe returns a subscription; cancel ends it.
func (w *watcher) subscribe() (*subscription, func()) {
	s := &subscription{pending: map[string]bool{}, wake: make(chan struct{}, 1)}
	w.mu.Lock()
	w.subs[s] = struct{}{}
	w.mu.Unlock()
	return s, func() {
		w.mu.Lock()
		delete(w.subs, s)
		w.mu.Unlock()
	}
}

// Mode says how the watcher notices changes ("notify" or "poll").
func (w *watcher) Mode() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.mode
}

// run watches until ctx ends.
func (w *watcher) run(ctx context.Context) {
	w.scan() // the baseline: nothing is reported for it
	fw, err := w.notifier()
	w.mu.Lock()
	if err != nil {
		w.mode = "poll"
	} else {
		w.mode = "notify"
	}
	w.mu.Unlock()
	close(w.ready)
	interval := w.poll
	var events chan fsnotify.Event
	var errs chan error
	if fw != nil {
		defer fw.Close()
		interval = w.slow
		events, errs = fw.Events, fw.Errors
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	// Notifications come in bursts (append, fsync, rename): changes are
	// collected for a moment, then scanned once.
	var settle <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if ev.Op&fsnotify.Create != 0 && filepath.Dir(ev.Name) == w.tasksDir {
				// A new task folder: watch it too.
				if fi, err := os.Stat(ev.Name); err == nil && fi.IsDir() {
					_ = fw.Add(ev.Name)
				}
			}
			if settle == nil {
				settle = time.After(30 * time.Millisecond)
			}
		case <-errs:
			// An overflow or a watch lost: the next scan finds what
			// changed.
			if settle == nil {
				settle = time.After(30 * time.Millisecond)
			}
		case <-settle:
			settle = nil
			w.publish(w.scan())
		case <-tick.C:
			w.publish(w.scan())
		}
	}
}

// notifier watches the tasks folder and every task folder.
func (w *watcher) notifier() (*fsnotify.Watcher, error) {
	if w.forcePoll {
		return nil, os.ErrInvalid
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	if err := fw.Add(w.tasksDir); err != nil {
		fw.Close()
		return nil, err
	}
	entries, _ := os.ReadDir(w.tasksDir)
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			if err := fw.Add(filepath.Join(w.tasksDir, e.Name())); err != nil {
				fw.Close()
				return nil, err
			}
		}
	}
	return fw, nil
}

// scan compares every task's files with what was seen and returns the ids
// of the tasks that changed, appeared or disappeared.
func (w *watcher) scan() []string {
	entries, _ := os.ReadDir(w.tasksDir)
	now := map[string]fileSig{}
	for _, e := range entries {
		if !e.IsDir() || task.ValidID(e.Name()) != nil {
			continue
		}
		dir := filepath.Join(w.tasksDir, e.Name())
		var s fileSig
		if fi, err := os.Stat(filepath.Join(dir, task.TranscriptFile)); err == nil {
			s.logSize, s.logTime = fi.Size(), fi.ModTime()
		}
		if fi, err := os.Stat(filepath.Join(dir, task.StateFile)); err == nil {
			s.stateSize, s.stateTime = fi.Size(), fi.ModTime()
		}
		now[e.Name()] = s
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	changed := changedKeys(w.seen, now)
	w.seen = now
	return changed
}

// publish adds the changed ids to every subscription and wakes it.
func (w *watcher) publish(ids []string) {
	if len(ids) == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.gen++
	for s := range w.subs {
		s.mu.Lock()
		for _, id := range ids {
			s.pending[id] = true
		}
		s.mu.Unlock()
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}
