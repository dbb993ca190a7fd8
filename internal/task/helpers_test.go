package task

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/lifecycle"
)

var t0 = time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)

func newProject(t testing.TB) *Project {
	t.Helper()
	p, _, err := InitProject(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func newTask(t testing.TB, p *Project, id string) *Task {
	t.Helper()
	tk, _, err := p.CreateTask(id, "Add retry to the HTTP client", t0)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func lock(t testing.TB, tk *Task) *Lock {
	t.Helper()
	l, err := tk.Lock(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Unlock() })
	return l
}

// step commits a transition to phase with the next revision.
func step(t testing.TB, tk *Task, phase lifecycle.Phase, moves ...Move) State {
	t.Helper()
	st, err := tk.ReadState()
	if err != nil {
		t.Fatal(err)
	}
	next := st
	next.Phase = phase
	next.Revision++
	next.UpdatedAt = st.UpdatedAt.Add(time.Minute)
	ev := Event{TS: next.UpdatedAt, Kind: "transition", Data: map[string]any{"from": st.Phase, "to": phase}, Moves: moves}
	if err := tk.Commit(ev, next); err != nil {
		t.Fatal(err)
	}
	return next
}

func mustVerify(t testing.TB, tk *Task) VerifyReport {
	t.Helper()
	rep, err := tk.Verify()
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK {
		t.Fatalf("verify: %+v", rep.Problems)
	}
	return rep
}

func writeFile(t testing.TB, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// logLines returns the transcript's lines without their '\n'.
func logLines(t testing.TB, tk *Task) []string {
	t.Helper()
	s := gittest.ReadFile(t, filepath.Join(tk.Dir, TranscriptFile))
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

func writeLog(t testing.TB, tk *Task, lines []string) {
	t.Helper()
	writeFile(t, filepath.Join(tk.Dir, TranscriptFile), strings.Join(lines, "\n")+"\n")
}

// crash is the panic value hooks use to simulate a crash.
type crash struct{}

// crashAt runs f and recovers the simulated crash; it fails the test when f
// neither crashes nor errors.
func crashAt(t testing.TB, f func() error) {
	t.Helper()
	crashed := false
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(crash); !ok {
					panic(r)
				}
				crashed = true
			}
		}()
		if err := f(); err != nil {
			t.Fatalf("expected a crash, got error %v", err)
		}
	}()
	if !crashed {
		t.Fatal("expected a crash")
	}
}

func wantStateError(t testing.TB, err error, file, field string) *StateError {
	t.Helper()
	var se *StateError
	if !errors.As(err, &se) {
		t.Fatalf("want *StateError, got %T %v", err, err)
	}
	if !errors.Is(err, ErrInvalidState) {
		t.Fatalf("%v does not wrap ErrInvalidState", err)
	}
	if se.File != file || (field != "" && se.Field != field) {
		t.Fatalf("got file %q field %q, want %q %q (%v)", se.File, se.Field, file, field, err)
	}
	msg := err.Error()
	if !strings.Contains(msg, file) || !strings.Contains(msg, se.Field) {
		t.Fatalf("message %q does not name file %q and field %q", msg, file, se.Field)
	}
	return se
}

// actorsJSON parses a JSON object of actor objects for a test state.
func actorsJSON(js string) Actors {
	a, p := parseActors([]byte(js), "$.actors")
	if p != nil {
		panic(p.Field + ": " + p.Got)
	}
	return a
}
