package task

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/durable"
	"github.com/orchdev/orch/internal/gittest"
)

// tornTail is an interrupted append left at the end of the transcript.
const tornTail = `{"seq":9,"ts":"2026-11-25T1`

// newCrashedWorld is a faultWorld whose transition to revision 3 crashed
// after its event was logged (moves and state.json pending). With debris,
// a stray temporary state file and a torn line after the event are left
// too: everything Recover repairs at once.
func newCrashedWorld(t *testing.T, debris bool) *faultWorld {
	t.Helper()
	w := newFaultWorld(t)
	w.tk.Hooks.AfterAppend = func() { panic(crash{}) }
	crashAt(t, func() error { return w.tk.Commit(transition(w.tk)) })
	w.tk.Hooks = Hooks{}
	if !debris {
		w.snap(t)
		return w
	}
	writeFile(t, filepath.Join(w.tk.Dir, StateFile+durable.TempInfix+"123"), `{"phase":"co`)
	f, err := os.OpenFile(filepath.Join(w.tk.Dir, TranscriptFile), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(tornTail); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	w.snap(t)
	return w
}

// TestRecoverUnderFaults fails every operation of a Recover that completes
// two moves, rolls state.json forward and logs a "recovered" event, and of
// one that also removes a temporary file and cuts a torn line.
func TestRecoverUnderFaults(t *testing.T) {
	t.Parallel()
	for _, debris := range []bool{false, true} {
		t.Run(map[bool]string{false: "roll-forward", true: "with-debris"}[debris], func(t *testing.T) {
			t.Parallel()
			recoverUnderFaults(t, debris)
		})
	}
}

func recoverUnderFaults(t *testing.T, debris bool) {
	var (
		newState    string
		stateRename int
	)
	m := faultMatrix[*faultWorld]{
		prepare: func(t *testing.T) *faultWorld { return newCrashedWorld(t, debris) },
		call: func(w *faultWorld, fsys fileSystem) error {
			w.tk.fs = fsys
			defer func() { w.tk.fs = nil }()
			_, err := w.tk.Recover(t0)
			return err
		},
		recorded: func(t *testing.T, w *faultWorld, ops []op) {
			newState = gittest.ReadFile(t, filepath.Join(w.tk.Dir, StateFile))
			stateRename = opIndex(t, ops, 0, opRename, "/"+StateFile)
			// state.json must never get ahead of what the disk has logged.
			logSync := opIndex(t, ops, 0, opFsync, TranscriptFile)
			if debris && opIndex(t, ops, 0, opTruncate, TranscriptFile) > logSync {
				t.Fatal("the torn line is cut after the transcript's fsync")
			}
			if first := opIndex(t, ops, 0, opRename, ""); first < logSync {
				t.Fatalf("Recover renames (%v) before the transcript is fsynced", ops[first])
			}
			checkArchive(t, w.tk, 3)
			mustVerify(t, w.tk)
		},
		check: func(t *testing.T, w *faultWorld, r faultRun) {
			wantState := w.oldState
			if r.idx > stateRename {
				wantState = newState
			}
			if got := gittest.ReadFile(t, filepath.Join(w.tk.Dir, StateFile)); got != wantState {
				t.Fatalf("state.json after the fault:\n%s\nwant\n%s", got, wantState)
			}
			if _, err := w.tk.ReadState(); err != nil {
				t.Fatalf("state.json unreadable after the fault: %v", err)
			}
			log := gittest.ReadFile(t, filepath.Join(w.tk.Dir, TranscriptFile))
			if !strings.HasPrefix(log, strings.TrimSuffix(w.oldLog, tornTail)) {
				t.Fatalf("Recover changed logged lines:\n%s", log)
			}
			w.checkOutside(t)
			st, _ := recoverReal(t, w.tk)
			if st.Revision != 3 {
				t.Fatalf("revision after recovery = %d, want 3 (the logged one)", st.Revision)
			}
			checkArchive(t, w.tk, 3)
			w.checkOutside(t)
			step(t, w.tk, "review")
			mustVerify(t, w.tk)
		},
	}
	t.Logf("%d faulty recoveries", m.run(t))
}
