package task

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func isSync(o op) bool { return o.Kind == opFsync || o.Kind == opDirSync }

// TestFailedFsyncIsNotRetried makes every fsync fail: each call makes one
// fsync, the first, and returns its error. After a failed fsync the page
// cache no longer says what is on the disk; trying again could report
// success for data that is lost.
func TestFailedFsyncIsNotRetried(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		call func(t *testing.T, fsys fileSystem) error
	}{
		{"Commit", func(t *testing.T, fsys fileSystem) error {
			w := newFaultWorld(t)
			w.tk.fs = fsys
			return w.tk.Commit(transition(w.tk))
		}},
		{"Append", func(t *testing.T, fsys fileSystem) error {
			w := newFaultWorld(t)
			w.tk.fs = fsys
			return w.tk.Append(Event{Kind: "note"})
		}},
		{"Recover", func(t *testing.T, fsys fileSystem) error {
			w := newCrashedWorld(t, true)
			w.tk.fs = fsys
			_, err := w.tk.Recover(t0)
			return err
		}},
		{"CreateTask", func(t *testing.T, fsys fileSystem) error {
			w := newProjectWorld(t)
			w.p.fs = fsys
			_, _, err := w.p.CreateTask(newID, "brief", t0)
			return err
		}},
		{"SetCurrent", func(t *testing.T, fsys fileSystem) error {
			w := newProjectWorld(t)
			w.p.fs = fsys
			return w.p.SetCurrent(newID)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ff := newFaultFS(func(_ int, o op) bool { return isSync(o) }, fault{name: "EIO", errno: syscall.EIO})
			err := tt.call(t, ff)
			if !errors.Is(err, syscall.EIO) {
				t.Fatalf("error = %v, want the fsync's EIO", err)
			}
			var syncs []op
			for _, o := range ff.recorded() {
				if isSync(o) {
					syncs = append(syncs, o)
				}
			}
			if len(syncs) != 1 {
				t.Fatalf("%d fsyncs, want 1 (the failed one, not retried, and nothing after it): %v", len(syncs), syncs)
			}
		})
	}
}

// TestRecoverFsyncsMovesFoundDone: when a commit's moves were done but a
// folder fsync after them failed, Recover finds the moves done and still
// fsyncs every folder they touched, before it writes state.json.
func TestRecoverFsyncsMovesFoundDone(t *testing.T) {
	t.Parallel()
	w := newFaultWorld(t)
	ff := newFaultFS(func(_ int, o op) bool {
		return o.Kind == opDirSync && strings.HasSuffix(o.Path, filepath.Join("history", "1-codegen", "review"))
	}, fault{name: "EIO", errno: syscall.EIO})
	w.tk.fs = ff
	if err := w.tk.Commit(transition(w.tk)); !errors.Is(err, syscall.EIO) {
		t.Fatalf("Commit = %v", err)
	}
	rec := newFaultFS(nil, fault{})
	w.tk.fs = rec
	if r, err := w.tk.Recover(t0); err != nil || !r.RolledForward {
		t.Fatalf("Recover = %+v, %v", r, err)
	}
	ops := rec.recorded()
	for _, o := range ops {
		if o.Kind == opRename && strings.HasSuffix(o.Path, "code") {
			t.Fatalf("a move found done was done again: %v", o)
		}
	}
	stateRename := opIndex(t, ops, 0, opRename, "/"+StateFile)
	for _, dir := range []string{"", "history", "history/1-codegen", "history/1-codegen/review", "review"} {
		want := filepath.Join(w.tk.Dir, dir)
		synced := false
		for _, o := range ops[:stateRename] {
			synced = synced || o.Kind == opDirSync && o.Path == want
		}
		if !synced {
			t.Fatalf("Recover did not fsync %s before writing state.json: %v", want, ops)
		}
	}
	w.tk.fs = nil
	checkArchive(t, w.tk, 3)
	mustVerify(t, w.tk)
}

// TestLockPIDWriteFault: when the pid cannot be written into the lock
// file, Lock fails and does not keep the lock.
func TestLockPIDWriteFault(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	tk := newTask(t, p, "0001-a")
	for _, kind := range []string{opOpen, opWrite, opClose} {
		tk.fs = newFaultFS(func(_ int, o op) bool { return o.Kind == kind }, fault{name: "ENOSPC", errno: syscall.ENOSPC})
		if _, err := tk.Lock(context.Background(), 0); !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("Lock with a failing %s = %v", kind, err)
		}
		tk.fs = nil
		l, err := tk.Lock(context.Background(), 0)
		if err != nil {
			t.Fatalf("the lock was kept after a failed %s: %v", kind, err)
		}
		if err := l.Unlock(); err != nil {
			t.Fatal(err)
		}
	}
}
