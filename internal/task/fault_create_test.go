package task

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/gittest"
)

// projectWorld is a project with one task, 0001-a, which is current.
type projectWorld struct {
	p      *Project
	before map[string]string // the project without .orch/current and the new task
}

const newID = "0002-b"

func newProjectWorld(t *testing.T) *projectWorld {
	t.Helper()
	p := newProject(t)
	newTask(t, p, "0001-a")
	w := &projectWorld{p: p}
	w.before = w.tree(t)
	return w
}

func (w *projectWorld) tree(t *testing.T) map[string]string {
	t.Helper()
	skip := map[string]bool{
		filepath.ToSlash(filepath.Join(OrchDir, currentName)):      true,
		filepath.ToSlash(filepath.Join(OrchDir, tasksName, newID)): true,
	}
	return tree(t, w.p.Root, func(rel string) bool { return skip[rel] })
}

// checkTree compares the project with how it was, leaving out
// .orch/current and the new task. Strays of an interrupted write are
// allowed only when the file system stayed broken (the clean-up failed
// too); CleanStrays then removes them.
func (w *projectWorld) checkTree(t *testing.T, r faultRun) {
	t.Helper()
	if d := diffTrees(w.before, w.tree(t)); len(d) > 0 {
		if !r.fault.sticky {
			t.Fatalf("files changed: %v", d)
		}
		if err := w.p.CleanStrays(); err != nil {
			t.Fatal(err)
		}
		if d := diffTrees(w.before, w.tree(t)); len(d) > 0 {
			t.Fatalf("files changed after CleanStrays: %v", d)
		}
	}
}

func (w *projectWorld) current(t *testing.T) string {
	t.Helper()
	return gittest.ReadFile(t, filepath.Join(w.p.Dir, currentName))
}

// TestCreateTaskUnderFaults fails every operation of CreateTask: building
// the folder, renaming it into place, fsyncing tasks/, and replacing
// .orch/current.
func TestCreateTaskUnderFaults(t *testing.T) {
	t.Parallel()
	var tasksSync, currentRename int
	m := faultMatrix[*projectWorld]{
		prepare: newProjectWorld,
		call: func(w *projectWorld, fsys fileSystem) error {
			w.p.fs = fsys
			defer func() { w.p.fs = nil }()
			tk, _, err := w.p.CreateTask(newID, "Second brief", t0)
			if err == nil && tk.fs != fsys {
				return errors.New("the created task does not use the project's file system")
			}
			return err
		},
		recorded: func(t *testing.T, w *projectWorld, ops []op) {
			rename := opIndex(t, ops, 0, opRename, "/"+newID)
			tasksSync = opIndex(t, ops, rename, opDirSync, "/"+tasksName)
			currentRename = opIndex(t, ops, tasksSync, opRename, "/"+currentName)
			for _, o := range ops[:rename] {
				if !strings.Contains(o.Path, strayPrefix+newID) {
					t.Fatalf("before the rename, %v touches something outside the folder being built", o)
				}
			}
		},
		check: func(t *testing.T, w *projectWorld, r faultRun) {
			// Only a failure to make it current, or a failed fsync of
			// tasks/ whose undo failed too, leaves the task in place.
			wantCreated := r.idx > tasksSync || r.fault.sticky && r.idx == tasksSync
			tk, err := w.p.Open(newID)
			switch {
			case wantCreated && err != nil:
				t.Fatalf("the task is gone: %v (CreateTask: %v)", err, r.err)
			case !wantCreated && !errors.Is(err, ErrNoTask):
				t.Fatalf("a failed CreateTask left the task: Open = %v (CreateTask: %v)", err, r.err)
			}
			if r.idx > tasksSync && !strings.Contains(r.err.Error(), "was created") {
				t.Fatalf("the error does not say the task exists: %v", r.err)
			}
			if wantCreated {
				mustVerify(t, tk)
				st, err := tk.ReadState()
				if err != nil || st.Revision != 1 || st.Phase != "planning" {
					t.Fatalf("state = %+v, %v", st, err)
				}
				if got := gittest.ReadFile(t, filepath.Join(tk.Dir, BriefFile)); got != "Second brief\n" {
					t.Fatalf("brief = %q", got)
				}
			}
			wantCurrent := "0001-a\n"
			if r.idx > currentRename {
				wantCurrent = newID + "\n"
			}
			if got := w.current(t); got != wantCurrent {
				t.Fatalf("current = %q, want %q", got, wantCurrent)
			}
			w.checkTree(t, r)
			list, err := w.p.List()
			if err != nil || len(list) != map[bool]int{true: 2, false: 1}[wantCreated] {
				t.Fatalf("List = %+v, %v", list, err)
			}
			if !wantCreated {
				// The id is free again.
				if _, _, err := w.p.CreateTask(newID, "Second brief", t0); err != nil {
					t.Fatal(err)
				}
			}
		},
	}
	t.Logf("%d faulty creations", m.run(t))
}

// TestSetCurrentUnderFaults fails every operation of SetCurrent.
func TestSetCurrentUnderFaults(t *testing.T) {
	t.Parallel()
	var rename int
	m := faultMatrix[*projectWorld]{
		prepare: newProjectWorld,
		call: func(w *projectWorld, fsys fileSystem) error {
			w.p.fs = fsys
			defer func() { w.p.fs = nil }()
			return w.p.SetCurrent(newID)
		},
		recorded: func(t *testing.T, w *projectWorld, ops []op) {
			rename = opIndex(t, ops, 0, opRename, "/"+currentName)
		},
		check: func(t *testing.T, w *projectWorld, r faultRun) {
			want := "0001-a\n"
			if r.idx > rename {
				want = newID + "\n"
			}
			if got := w.current(t); got != want {
				t.Fatalf("current = %q, want %q", got, want)
			}
			w.checkTree(t, r)
		},
	}
	t.Logf("%d faulty SetCurrent calls", m.run(t))
}
