package task

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// faultRun is one run of a call with one injected fault.
type faultRun struct {
	idx   int   // index of the operation that failed first
	op    op    // that operation, as recorded in the fault-free run
	fault fault // what it did
	err   error // what the call returned
	ff    *faultFS
}

// faultMatrix describes a call to run under every fault: prepare builds a
// fresh world W (on the real file system), call makes the call through the
// given file system, recorded sees the operations of a fault-free run, and
// check asserts what a faulty run left behind.
type faultMatrix[W any] struct {
	prepare  func(t *testing.T) W
	call     func(w W, fsys fileSystem) error
	recorded func(t *testing.T, w W, ops []op) // after the fault-free run
	check    func(t *testing.T, w W, r faultRun)
}

// run makes the call once over a recording faultFS, then once for every
// recorded operation × every fault of its kind, each on a fresh world.
// Every faulty run must return an error wrapping the injected one and must
// never fsync a path again after its fsync failed; then check runs. It
// returns the number of faulty runs.
func (m faultMatrix[W]) run(t *testing.T) int {
	t.Helper()
	w := m.prepare(t)
	ff := newFaultFS(nil, fault{})
	if err := m.call(w, ff); err != nil {
		t.Fatalf("fault-free run: %v", err)
	}
	ops := ff.recorded()
	if len(ops) == 0 {
		t.Fatal("the call performed no operation through the file-system seam")
	}
	if m.recorded != nil {
		m.recorded(t, w, ops)
	}
	var names []string
	for _, o := range ops {
		names = append(names, o.Kind+" "+filepath.Base(o.Path))
	}
	t.Logf("%d operations: %s", len(ops), strings.Join(names, ", "))
	runs := 0
	for i, o := range ops {
		for _, f := range faults(o.Kind) {
			runs++
			t.Run(fmt.Sprintf("%02d_%s_%s/%s", i, o.Kind, filepath.Base(o.Path), f.name), func(t *testing.T) {
				t.Parallel()
				w := m.prepare(t)
				ff := newFaultFS(failAt(i), f)
				err := m.call(w, ff)
				got := ff.recorded()
				if len(got) <= i || got[i].Kind != o.Kind {
					t.Fatalf("the faulty run did not reach operation %d (%s %s): %v", i, o.Kind, o.Path, got)
				}
				if err == nil {
					t.Fatalf("%s at operation %d (%s %s) reported success", f.name, i, o.Kind, o.Path)
				}
				want := error(f.errno)
				if f.short {
					want = io.ErrShortWrite
				}
				if !errors.Is(err, want) {
					t.Fatalf("error %q does not wrap the injected %v", err, want)
				}
				if len(ff.retried) > 0 {
					t.Fatalf("fsync retried after it failed: %v (error %v)", ff.retried, err)
				}
				m.check(t, w, faultRun{idx: i, op: o, fault: f, err: err, ff: ff})
			})
		}
	}
	return runs
}

// opIndex is the index of the first operation of that kind whose path
// ends with suffix, at or after from; it fails the test when there is none.
func opIndex(t testing.TB, ops []op, from int, kind, suffix string) int {
	t.Helper()
	for i := from; i < len(ops); i++ {
		if ops[i].Kind == kind && strings.HasSuffix(ops[i].Path, suffix) {
			return i
		}
	}
	t.Fatalf("no %s of *%s from operation %d in %v", kind, suffix, from, ops)
	return -1
}

// tree reads everything below dir except the paths skip selects (relative,
// with '/'): regular files by content, folders and symlinks by kind.
func tree(t testing.TB, dir string, skip func(rel string) bool) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if skip != nil && skip(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case d.IsDir():
			out[rel] = "<folder>"
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "<symlink " + target + ">"
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// diffTrees names the paths whose presence or content differs.
func diffTrees(a, b map[string]string) []string {
	var d []string
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			d = append(d, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			d = append(d, k)
		}
	}
	slices.Sort(d)
	return d
}

// lastLogged is the state carried by the last state-carrying event.
func lastLogged(t testing.TB, tk *Task) State {
	t.Helper()
	evs, err := tk.Transcript()
	if err != nil {
		t.Fatal(err)
	}
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].State != nil {
			return *evs[i].State
		}
	}
	t.Fatal("no event carries a state")
	return State{}
}

// recoverReal runs Recover on the real file system and checks that the
// task is then consistent: Verify passes, state.json parses and equals the
// last logged state, no stray temporary file is left, and recovering again
// finds nothing to do. It returns the state and what the first Recover did.
func recoverReal(t testing.TB, tk *Task) (State, Recovery) {
	t.Helper()
	tk.fs = nil
	first, err := tk.Recover(t0)
	if err != nil {
		t.Fatalf("Recover on the real file system: %v", err)
	}
	mustVerify(t, tk)
	st, err := tk.ReadState()
	if err != nil {
		t.Fatalf("state.json after recovery: %v", err)
	}
	logged := lastLogged(t, tk)
	if same, field, err := sameState(st, logged); err != nil || !same {
		t.Fatalf("state.json differs from the last logged state at %s (%v)", field, err)
	}
	if temps, err := tk.strayTemps(); err != nil || len(temps) > 0 {
		t.Fatalf("temporary files left after recovery: %v %v", temps, err)
	}
	if rec, err := tk.Recover(t0); err != nil || rec.Repaired() {
		t.Fatalf("a second Recover repaired %+v, %v", rec, err)
	}
	return st, first
}
