package task

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/gittest"
)

// snapshot reads every regular file of a task folder except its lock.
func snapshot(t testing.TB, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == LockFile {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		files[rel] = gittest.ReadFile(t, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func sameFiles(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestRecoverCleanTaskChangesNothing(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	tk := newTask(t, p, "0001-a")
	lock(t, tk)
	step(t, tk, "plan_review")
	before := snapshot(t, tk.Dir)
	rec, err := tk.Recover(t0)
	if err != nil || rec.Repaired() {
		t.Fatalf("Recover = %+v, %v", rec, err)
	}
	if !sameFiles(before, snapshot(t, tk.Dir)) {
		t.Fatal("Recover of a clean task changed files")
	}
}

func TestRecoverAfterCrashAfterAppend(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	tk := newTask(t, p, "0001-a")
	lock(t, tk)
	step(t, tk, "plan_review")
	tk.Hooks.AfterAppend = func() { panic(crash{}) }
	crashAt(t, func() error { step(t, tk, "codegen"); return nil })
	tk.Hooks = Hooks{}

	if st, _ := tk.ReadState(); st.Revision != 2 {
		t.Fatalf("state.json changed before the crash point: %+v", st)
	}
	// The event is durable: an interrupted commit, not damage.
	rep, _ := tk.Verify()
	if !rep.OK || rep.Pending == nil || rep.Pending.Revision != 3 || rep.Pending.Behind != 2 || rep.Pending.Seq != 3 {
		t.Fatalf("Verify before recovery = %+v", rep)
	}
	if st, pend, err := tk.CommittedState(); err != nil || st.Phase != "codegen" || st.Revision != 3 || pend == nil {
		t.Fatalf("CommittedState before recovery = %+v, %+v, %v", st, pend, err)
	}
	rec, err := tk.Recover(t0)
	if err != nil {
		t.Fatal(err)
	}
	if !rec.RolledForward || rec.Revision != 3 || rec.TornBytes != 0 {
		t.Fatalf("recovery = %+v", rec)
	}
	st, err := tk.ReadState()
	if err != nil || st.Phase != "codegen" || st.Revision != 3 {
		t.Fatalf("state after recovery = %+v, %v", st, err)
	}
	evs, _ := tk.Transcript()
	last := evs[len(evs)-1]
	if last.Kind != event.KindRecovered || last.State != nil || last.Data["rolled_forward_to"] == nil || !last.TS.Equal(t0) {
		t.Fatalf("last event = %+v", last)
	}
	mustVerify(t, tk)
	// Recovering again finds nothing to do; the next commit works.
	if rec, err := tk.Recover(t0); err != nil || rec.Repaired() {
		t.Fatalf("second Recover = %+v, %v", rec, err)
	}
	step(t, tk, "review")
	mustVerify(t, tk)
}

func TestRecoverCompletesMoves(t *testing.T) {
	t.Parallel()
	for _, point := range []string{"after append", "after moves"} {
		t.Run(point, func(t *testing.T) {
			p := newProject(t)
			tk := newTask(t, p, "0001-a")
			lock(t, tk)
			writeFile(t, filepath.Join(tk.Dir, "code", "files", "a.go"), "package a\n")
			writeFile(t, filepath.Join(tk.Dir, "review", "code-review.json"), "{}")
			moves := []Move{
				{From: "code", To: "history/1-codegen/code"},
				{From: "review/code-review.json", To: "history/1-codegen/review/code-review.json"},
			}
			if point == "after append" {
				tk.Hooks.AfterAppend = func() { panic(crash{}) }
			} else {
				tk.Hooks.AfterMoves = func() { panic(crash{}) }
			}
			crashAt(t, func() error { step(t, tk, "plan_review", moves...); return nil })
			tk.Hooks = Hooks{}
			if point == "after append" {
				if _, err := os.Stat(filepath.Join(tk.Dir, "code")); err != nil {
					t.Fatal("moves happened before the crash point")
				}
			}
			rec, err := tk.Recover(t0)
			if err != nil || !rec.RolledForward {
				t.Fatalf("Recover = %+v, %v", rec, err)
			}
			if got := gittest.ReadFile(t, filepath.Join(tk.Dir, "history", "1-codegen", "code", "files", "a.go")); got != "package a\n" {
				t.Fatalf("moved file = %q", got)
			}
			if _, err := os.Stat(filepath.Join(tk.Dir, "history", "1-codegen", "review", "code-review.json")); err != nil {
				t.Fatal(err)
			}
			for _, gone := range []string{"code", "review/code-review.json"} {
				if _, err := os.Lstat(filepath.Join(tk.Dir, gone)); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("%s still there after recovery", gone)
				}
			}
			if st, _ := tk.ReadState(); st.Phase != "plan_review" {
				t.Fatalf("phase = %s", st.Phase)
			}
			mustVerify(t, tk)
		})
	}
}

func TestRecoverCrashAfterPartialMoves(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	tk := newTask(t, p, "0001-a")
	lock(t, tk)
	writeFile(t, filepath.Join(tk.Dir, "a"), "A")
	writeFile(t, filepath.Join(tk.Dir, "b"), "B")
	tk.Hooks.AfterAppend = func() {
		// The first of two moves happened before the crash.
		if err := os.MkdirAll(filepath.Join(tk.Dir, "h"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(tk.Dir, "a"), filepath.Join(tk.Dir, "h", "a")); err != nil {
			t.Fatal(err)
		}
		panic(crash{})
	}
	crashAt(t, func() error {
		step(t, tk, "plan_review", Move{From: "a", To: "h/a"}, Move{From: "b", To: "h/b"})
		return nil
	})
	tk.Hooks = Hooks{}
	if _, err := tk.Recover(t0); err != nil {
		t.Fatal(err)
	}
	if gittest.ReadFile(t, filepath.Join(tk.Dir, "h", "a")) != "A" || gittest.ReadFile(t, filepath.Join(tk.Dir, "h", "b")) != "B" {
		t.Fatal("moves not completed")
	}
	mustVerify(t, tk)
}

func TestRecoverTornTail(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	tk := newTask(t, p, "0001-a")
	lock(t, tk)
	step(t, tk, "plan_review")
	good := gittest.ReadFile(t, filepath.Join(tk.Dir, TranscriptFile))
	torn := `{"seq":3,"ts":"2026-11-25T10:00:00Z","kind":"transition","state":{"phase":"code`
	writeFile(t, filepath.Join(tk.Dir, TranscriptFile), good+torn)

	rep, err := tk.Verify()
	if err != nil {
		t.Fatal(err)
	}
	// An append interrupted before it was durable is not damage.
	if !rep.OK || len(rep.Problems) != 0 || rep.Torn == nil || rep.Torn.Line != 3 || rep.Torn.Bytes != int64(len(torn)) ||
		!strings.Contains(rep.Torn.String(), "incomplete write") || rep.Events != 2 {
		t.Fatalf("Verify of torn log = %+v", rep)
	}
	if evs, err := tk.Transcript(); err != nil || len(evs) != 2 {
		t.Fatalf("Transcript of torn log = %d events, %v", len(evs), err)
	}
	rec, err := tk.Recover(t0)
	if err != nil {
		t.Fatal(err)
	}
	if rec.TornBytes != int64(len(torn)) || rec.RolledForward {
		t.Fatalf("recovery = %+v", rec)
	}
	lines := logLines(t, tk)
	if len(lines) != 3 || !strings.HasPrefix(good, strings.Join(lines[:2], "\n")) || !strings.Contains(lines[2], `"kind":"recovered"`) ||
		!strings.Contains(lines[2], `"torn_bytes":`) {
		t.Fatalf("log after repair:\n%s", strings.Join(lines, "\n"))
	}
	mustVerify(t, tk)
	if st, _ := tk.ReadState(); st.Revision != 2 {
		t.Fatalf("revision = %d", st.Revision)
	}
}

func TestRecoverRemovesStrayTemps(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	tk := newTask(t, p, "0001-a")
	lock(t, tk)
	writeFile(t, filepath.Join(tk.Dir, "state.json.tmp-12345"), `{"phase":"te`)
	writeFile(t, filepath.Join(tk.Dir, "notes.tmp"), "mine")
	rec, err := tk.Recover(t0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.RemovedTemp) != 1 || rec.RemovedTemp[0] != "state.json.tmp-12345" {
		t.Fatalf("recovery = %+v", rec)
	}
	if _, err := os.Stat(filepath.Join(tk.Dir, "state.json.tmp-12345")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("temp file not removed")
	}
	if gittest.ReadFile(t, filepath.Join(tk.Dir, "notes.tmp")) != "mine" {
		t.Fatal("a file that is not ours was touched")
	}
	mustVerify(t, tk)
}

func TestRecoverRefusesInconsistency(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		edit  func(t *testing.T, tk *Task)
		file  string
		field string
	}{
		{"phase edited", func(t *testing.T, tk *Task) {
			editState(t, tk, func(s *State) { s.Phase = "done" })
		}, StateFile, "$.phase"},
		{"actors edited", func(t *testing.T, tk *Task) {
			editState(t, tk, func(s *State) { a := s.Actors["planning"]; a.Status = "review_ready"; s.Actors["planning"] = a })
		}, StateFile, "$.actors"},
		{"revision ahead", func(t *testing.T, tk *Task) {
			editState(t, tk, func(s *State) { s.Revision = 9 })
		}, StateFile, "$.revision"},
		{"revision behind by two", func(t *testing.T, tk *Task) {
			editState(t, tk, func(s *State) { s.Revision = 1 })
		}, StateFile, "$.revision"},
		{"behind by one but different", func(t *testing.T, tk *Task) {
			editState(t, tk, func(s *State) { s.Revision = 2; s.Phase = "test" })
		}, StateFile, "$.phase"},
		{"state.json missing", func(t *testing.T, tk *Task) {
			os.Remove(filepath.Join(tk.Dir, StateFile))
		}, StateFile, "$"},
		{"transcript missing", func(t *testing.T, tk *Task) {
			os.Remove(filepath.Join(tk.Dir, TranscriptFile))
		}, TranscriptFile, "$"},
		{"last line not JSON", func(t *testing.T, tk *Task) {
			lines := logLines(t, tk)
			lines[len(lines)-1] = "garbage"
			writeLog(t, tk, lines)
		}, TranscriptFile, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := newProject(t)
			tk := newTask(t, p, "0001-a")
			lock(t, tk)
			step(t, tk, "plan_review")
			step(t, tk, "codegen")
			tt.edit(t, tk)
			writeFile(t, filepath.Join(tk.Dir, "state.json.tmp-1"), "x")
			before := snapshot(t, tk.Dir)
			_, err := tk.Recover(t0)
			se := wantStateError(t, err, tt.file, tt.field)
			if se.Hint == "" {
				t.Fatalf("no advice in %v", err)
			}
			if !sameFiles(before, snapshot(t, tk.Dir)) {
				t.Fatal("Recover changed files despite the inconsistency")
			}
			if rep, err := tk.Verify(); err != nil || rep.OK {
				t.Fatalf("Verify = %+v, %v", rep, err)
			}
		})
	}
}

// editState rewrites state.json behind the log's back.
func editState(t *testing.T, tk *Task, f func(*State)) {
	t.Helper()
	st, err := tk.ReadState()
	if err != nil {
		t.Fatal(err)
	}
	f(&st)
	if err := writeState(osFS{}, tk.Dir, st); err != nil {
		t.Fatal(err)
	}
}

func TestRecoverRefusesTamperedMoves(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	tk := newTask(t, p, "0001-a")
	lock(t, tk)
	writeFile(t, filepath.Join(tk.Dir, "code", "a.go"), "x")
	tk.Hooks.AfterAppend = func() { panic(crash{}) }
	crashAt(t, func() error { step(t, tk, "plan_review", Move{From: "code", To: "history/code"}); return nil })
	tk.Hooks = Hooks{}
	lines := logLines(t, tk)
	lines[len(lines)-1] = strings.Replace(lines[len(lines)-1], `"to":"history/code"`, `"to":"../../escaped"`, 1)
	writeLog(t, tk, lines)
	_, err := tk.Recover(t0)
	if err == nil || !strings.Contains(err.Error(), "inside the task folder") {
		t.Fatalf("Recover = %v", err)
	}
	if _, err := os.Stat(filepath.Join(tk.Dir, "code", "a.go")); err != nil {
		t.Fatal("tampered move was applied")
	}
	if st, _ := tk.ReadState(); st.Revision != 1 {
		t.Fatalf("state rolled forward despite the bad move: %+v", st)
	}
}

// TestRecoverRefilledMoves: a phase's re-run archives its artifact and
// moves the staged one to the same path in one event. Killed after the
// append, between the two moves or after both, recovery leaves the old
// file archived and the new one in place (it used to archive the new file
// again when both moves were done and then fail: "neither exists").
func TestRecoverRefilledMoves(t *testing.T) {
	t.Parallel()
	for _, point := range []string{"after append", "between the moves", "after moves"} {
		t.Run(point, func(t *testing.T) {
			p := newProject(t)
			tk := newTask(t, p, "0001-a")
			lock(t, tk)
			writeFile(t, filepath.Join(tk.Dir, "planning", "plan.md"), "old")
			writeFile(t, filepath.Join(tk.Dir, ".staging", "r1", "planning", "plan.md"), "new")
			moves := []Move{
				{From: "planning/plan.md", To: "history/1-planning/planning/plan.md"},
				{From: ".staging/r1/planning/plan.md", To: "planning/plan.md"},
			}
			switch point {
			case "after append":
				tk.Hooks.AfterAppend = func() { panic(crash{}) }
			case "between the moves":
				tk.Hooks.AfterAppend = func() {
					if err := os.MkdirAll(filepath.Join(tk.Dir, "history", "1-planning", "planning"), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.Rename(filepath.Join(tk.Dir, "planning", "plan.md"), filepath.Join(tk.Dir, "history", "1-planning", "planning", "plan.md")); err != nil {
						t.Fatal(err)
					}
					panic(crash{})
				}
			case "after moves":
				tk.Hooks.AfterMoves = func() { panic(crash{}) }
			}
			crashAt(t, func() error { step(t, tk, "planning", moves...); return nil })
			tk.Hooks = Hooks{}
			for range 2 {
				// Recovering twice is recovering once.
				if _, err := tk.Recover(t0); err != nil {
					t.Fatal(err)
				}
				if got := gittest.ReadFile(t, filepath.Join(tk.Dir, "history", "1-planning", "planning", "plan.md")); got != "old" {
					t.Fatalf("archived plan.md = %q", got)
				}
				if got := gittest.ReadFile(t, filepath.Join(tk.Dir, "planning", "plan.md")); got != "new" {
					t.Fatalf("planning/plan.md = %q", got)
				}
				if _, err := os.Lstat(filepath.Join(tk.Dir, ".staging", "r1", "planning", "plan.md")); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("the staged file is still there: %v", err)
				}
			}
			mustVerify(t, tk)
		})
	}
}
