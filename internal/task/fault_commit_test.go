package task

import (
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/gittest"
)

// faultWorld is a task with one committed transition (revision 2), a
// second task beside it, and the bytes and tree to compare against.
type faultWorld struct {
	p        *Project
	tk       *Task
	oldState string
	oldLog   string
	outside  map[string]string // the project without the task folder
}

func newFaultWorld(t *testing.T) *faultWorld {
	t.Helper()
	p := newProject(t)
	tk := newTask(t, p, "0001-a")
	newTask(t, p, "0002-b")
	lock(t, tk)
	step(t, tk, "plan_review")
	writeFile(t, filepath.Join(tk.Dir, "code", "files", "a.go"), "package a\n")
	writeFile(t, filepath.Join(tk.Dir, "review", "code-review.json"), "{}\n")
	return &faultWorld{p: p, tk: tk}
}

// snap records the files to compare with after the call.
func (w *faultWorld) snap(t *testing.T) {
	t.Helper()
	w.oldState = gittest.ReadFile(t, filepath.Join(w.tk.Dir, StateFile))
	w.oldLog = gittest.ReadFile(t, filepath.Join(w.tk.Dir, TranscriptFile))
	w.outside = w.outsideTree(t)
}

func (w *faultWorld) outsideTree(t *testing.T) map[string]string {
	t.Helper()
	taskRel := filepath.ToSlash(filepath.Join(OrchDir, tasksName, w.tk.ID))
	return tree(t, w.p.Root, func(rel string) bool { return rel == taskRel })
}

// checkOutside fails when anything outside the task folder changed.
func (w *faultWorld) checkOutside(t *testing.T) {
	t.Helper()
	if d := diffTrees(w.outside, w.outsideTree(t)); len(d) > 0 {
		t.Fatalf("files outside the task folder changed: %v", d)
	}
}

// logAfter checks the transcript right after a failed append: the new
// bytes when the append was durable, else the old bytes, or (when the
// file system stayed broken, so the append could not be cut back) the old
// bytes followed by a torn or complete line of the event. It returns the
// transcript.
func (w *faultWorld) logAfter(t *testing.T, r faultRun, durable bool, newLog string) string {
	t.Helper()
	log := gittest.ReadFile(t, filepath.Join(w.tk.Dir, TranscriptFile))
	switch {
	case durable:
		if log != newLog {
			t.Fatalf("transcript after a fault past its fsync:\n%s\nwant\n%s", log, newLog)
		}
	case !r.fault.sticky:
		if log != w.oldLog {
			t.Fatalf("an append that failed before its fsync completed was not cut back:\n%s", log)
		}
	default:
		rest, ok := strings.CutPrefix(log, w.oldLog)
		if !ok || (log != newLog && strings.Contains(rest, "\n")) {
			t.Fatalf("transcript after a sticky fault is neither the old one, a torn append nor the new one:\n%s", log)
		}
	}
	return log
}

// transition is the commit under test: plan_review → codegen archiving
// code/ and the code review. An unreadable state.json makes it a commit
// that Commit refuses.
func transition(tk *Task) (Event, State) {
	cur, _ := tk.ReadState()
	next := cur
	next.Phase, next.Revision = "codegen", cur.Revision+1
	next.UpdatedAt = t0.Add(time.Hour)
	next.Actors = actorsJSON(`{"codegen": {"status": "pending"}}`)
	ev := Event{TS: next.UpdatedAt, Kind: "transition", Data: map[string]any{"from": cur.Phase, "to": next.Phase},
		Moves: []Move{
			{From: "code", To: "history/1-codegen/code"},
			{From: "review/code-review.json", To: "history/1-codegen/review/code-review.json"},
		}}
	return ev, next
}

// checkArchive checks where the files of transition are: archived when
// the task is at revision 3, in place at revision 2.
func checkArchive(t *testing.T, tk *Task, rev int64) {
	t.Helper()
	here := map[string]string{"code/files/a.go": "package a\n", "review/code-review.json": "{}\n"}
	gone := []string{"history"}
	if rev == 3 {
		here = map[string]string{"history/1-codegen/code/files/a.go": "package a\n", "history/1-codegen/review/code-review.json": "{}\n"}
		gone = []string{"code", "review/code-review.json"}
	}
	for p, want := range here {
		if got := gittest.ReadFile(t, filepath.Join(tk.Dir, p)); got != want {
			t.Fatalf("%s = %q, want %q", p, got, want)
		}
	}
	for _, p := range gone {
		if ok, err := exists(filepath.Join(tk.Dir, p)); err != nil || ok {
			t.Fatalf("%s exists at revision %d", p, rev)
		}
	}
}

// newSnappedWorld is a fault world with its snapshot taken.
func newSnappedWorld(t *testing.T) *faultWorld {
	t.Helper()
	w := newFaultWorld(t)
	w.snap(t)
	return w
}

// TestCommitUnderFaults fails every write, fsync, rename, folder fsync,
// mkdir, chmod and close of a transition with moves, with ENOSPC, EIO,
// EROFS (once, and from then on) and a short write.
func TestCommitUnderFaults(t *testing.T) {
	t.Parallel()
	var (
		newState, newLog     string
		logSync, stateRename int
	)
	m := faultMatrix[*faultWorld]{
		prepare: newSnappedWorld,
		call: func(w *faultWorld, fsys fileSystem) error {
			ev, next := transition(w.tk)
			w.tk.fs = fsys
			defer func() { w.tk.fs = nil }()
			return w.tk.Commit(ev, next)
		},
		recorded: func(t *testing.T, w *faultWorld, ops []op) {
			newState = gittest.ReadFile(t, filepath.Join(w.tk.Dir, StateFile))
			newLog = gittest.ReadFile(t, filepath.Join(w.tk.Dir, TranscriptFile))
			logSync = opIndex(t, ops, 0, opFsync, TranscriptFile)
			stateRename = opIndex(t, ops, 0, opRename, "/"+StateFile)
			if first := opIndex(t, ops, 0, opRename, ""); first < logSync {
				t.Fatalf("a rename (%v) comes before the transcript's fsync", ops[first])
			}
			checkArchive(t, w.tk, 3)
		},
		check: func(t *testing.T, w *faultWorld, r faultRun) {
			durable := r.idx > logSync
			wantState := w.oldState
			if r.idx > stateRename {
				wantState = newState // only the folder fsync after the rename failed
			}
			if got := gittest.ReadFile(t, filepath.Join(w.tk.Dir, StateFile)); got != wantState {
				t.Fatalf("state.json after the fault:\n%s\nwant\n%s", got, wantState)
			}
			if _, err := w.tk.ReadState(); err != nil {
				t.Fatalf("state.json unreadable after the fault: %v", err)
			}
			log := w.logAfter(t, r, durable, newLog)
			if durable && !strings.Contains(r.err.Error(), "is logged") {
				t.Fatalf("the error does not say the change is logged: %v", r.err)
			}
			w.checkOutside(t)

			st, rec := recoverReal(t, w.tk)
			wantRev := int64(2)
			if durable || log == newLog {
				wantRev = 3
			}
			if st.Revision != wantRev {
				t.Fatalf("revision after recovery = %d, want %d", st.Revision, wantRev)
			}
			if !durable && !r.fault.sticky && rec.Repaired() {
				t.Fatalf("a commit that failed before its event was durable left something to repair: %+v", rec)
			}
			checkArchive(t, w.tk, wantRev)
			w.checkOutside(t)
			step(t, w.tk, "review")
			mustVerify(t, w.tk)
		},
	}
	t.Logf("%d faulty commits", m.run(t))
}

// TestAppendUnderFaults fails every operation of Append.
func TestAppendUnderFaults(t *testing.T) {
	t.Parallel()
	var (
		newLog  string
		logSync int
	)
	m := faultMatrix[*faultWorld]{
		prepare: newSnappedWorld,
		call: func(w *faultWorld, fsys fileSystem) error {
			w.tk.fs = fsys
			defer func() { w.tk.fs = nil }()
			return w.tk.Append(Event{TS: t0, Kind: "model_call", Data: map[string]any{"model": "m", "output": strings.Repeat("out ", 100)}})
		},
		recorded: func(t *testing.T, w *faultWorld, ops []op) {
			newLog = gittest.ReadFile(t, filepath.Join(w.tk.Dir, TranscriptFile))
			logSync = opIndex(t, ops, 0, opFsync, TranscriptFile)
		},
		check: func(t *testing.T, w *faultWorld, r faultRun) {
			if got := gittest.ReadFile(t, filepath.Join(w.tk.Dir, StateFile)); got != w.oldState {
				t.Fatalf("Append changed state.json:\n%s", got)
			}
			log := w.logAfter(t, r, r.idx > logSync, newLog)
			w.checkOutside(t)
			st, rec := recoverReal(t, w.tk)
			if st.Revision != 2 {
				t.Fatalf("revision after recovery = %d", st.Revision)
			}
			if r.idx <= logSync && !r.fault.sticky && rec.Repaired() {
				t.Fatalf("an append that failed before its fsync left something to repair: %+v", rec)
			}
			evs, err := w.tk.Transcript()
			if err != nil {
				t.Fatal(err)
			}
			calls := 0
			for _, ev := range evs {
				if ev.Kind == "model_call" {
					calls++
				}
			}
			if want := map[bool]int{true: 1, false: 0}[log == newLog]; calls != want {
				t.Fatalf("%d model_call events logged, want %d", calls, want)
			}
			w.checkOutside(t)
			if err := w.tk.Append(Event{Kind: "note"}); err != nil {
				t.Fatal(err)
			}
			mustVerify(t, w.tk)
		},
	}
	t.Logf("%d faulty appends", m.run(t))
}

// TestFailedTranscriptFsyncLeavesStateUnchanged: when the fsync of the
// transcript fails, Commit returns the error without trying again,
// state.json and the archived files are untouched, the unlogged line is cut
// back, and recovery does not roll forward to it.
func TestFailedTranscriptFsyncLeavesStateUnchanged(t *testing.T) {
	t.Parallel()
	for _, errno := range []syscall.Errno{syscall.EIO, syscall.ENOSPC, syscall.EROFS} {
		t.Run(errno.Error(), func(t *testing.T) {
			t.Parallel()
			w := newFaultWorld(t)
			w.snap(t)
			ff := newFaultFS(func(_ int, o op) bool {
				return o.Kind == opFsync && strings.HasSuffix(o.Path, TranscriptFile)
			}, fault{name: errno.Error(), errno: errno})
			ev, next := transition(w.tk)
			w.tk.fs = ff
			err := w.tk.Commit(ev, next)
			w.tk.fs = nil
			if !errors.Is(err, errno) || !strings.Contains(err.Error(), "not logged") {
				t.Fatalf("Commit = %v, want the fsync's %v", err, errno)
			}
			syncs := 0
			for _, o := range ff.recorded() {
				if o.Kind == opFsync || o.Kind == opDirSync {
					syncs++
				}
			}
			if syncs != 1 {
				t.Fatalf("%d fsyncs after the transcript's fsync failed, want just that one: %v", syncs, ff.recorded())
			}
			if got := gittest.ReadFile(t, filepath.Join(w.tk.Dir, StateFile)); got != w.oldState {
				t.Fatal("state.json changed although the transcript's fsync failed")
			}
			if got := gittest.ReadFile(t, filepath.Join(w.tk.Dir, TranscriptFile)); got != w.oldLog {
				t.Fatalf("the unlogged event was not cut back:\n%s", got)
			}
			checkArchive(t, w.tk, 2)
			st, rec := recoverReal(t, w.tk)
			if st.Revision != 2 || rec.Repaired() {
				t.Fatalf("recovery after the failed fsync: revision %d, %+v", st.Revision, rec)
			}
			// Once the disk is healthy again, the same change commits.
			if err := w.tk.Commit(transition(w.tk)); err != nil {
				t.Fatal(err)
			}
			checkArchive(t, w.tk, 3)
			mustVerify(t, w.tk)
		})
	}
}
