package task

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/gittest"
)

func TestCommit(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	tk := newTask(t, p, "0001-a")
	lock(t, tk)
	before := logLines(t, tk)

	st, _ := tk.ReadState()
	next := st
	next.Phase, next.Revision, next.Task, next.UpdatedAt = "plan_review", 2, "", time.Time{}
	next.Actors = actorsJSON(`{"planning": {"status": "review_ready", "round": 2}}`)
	if err := tk.Commit(Event{Kind: "transition", Data: map[string]any{"from": "planning", "to": "plan_review"}}, next); err != nil {
		t.Fatal(err)
	}
	got, err := tk.ReadState()
	if err != nil {
		t.Fatal(err)
	}
	if got.Phase != "plan_review" || got.Revision != 2 || got.Task != tk.ID || got.UpdatedAt.IsZero() || got.Actors["planning"].Status != "review_ready" {
		t.Fatalf("state after commit = %+v", got)
	}
	evs, err := tk.Transcript()
	if err != nil {
		t.Fatal(err)
	}
	ev := evs[len(evs)-1]
	if len(evs) != 2 || ev.Seq != 2 || ev.Prev != hashLine([]byte(before[0])) || ev.TS.IsZero() ||
		ev.State == nil || ev.State.Revision != 2 || !ev.State.UpdatedAt.Equal(ev.TS) || ev.Data["to"] != "plan_review" {
		t.Fatalf("logged event = %+v", ev)
	}
	step(t, tk, "codegen")
	if rep := mustVerify(t, tk); rep.Events != 3 {
		t.Fatalf("events = %d", rep.Events)
	}
}

func TestCommitRefusals(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	tk := newTask(t, p, "0001-a")
	lock(t, tk)
	writeFile(t, filepath.Join(tk.Dir, "code", "x.go"), "package x\n")
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(tk.Dir, "out")); err != nil {
		t.Fatal(err)
	}
	st, _ := tk.ReadState()
	ok := st
	ok.Phase, ok.Revision = "plan_review", 2
	tr := Event{Kind: "transition"}
	withMoves := func(ms ...Move) Event { return Event{Kind: "redo", Moves: ms} }
	tests := []struct {
		name string
		ev   Event
		next State
		is   error
		msg  string
	}{
		{"same revision", tr, func() State { s := ok; s.Revision = 1; return s }(), ErrStale, "revision 1"},
		{"skipped revision", tr, func() State { s := ok; s.Revision = 3; return s }(), ErrStale, "expected 2"},
		{"unknown phase", tr, func() State { s := ok; s.Phase = "deploy"; return s }(), nil, "$.phase"},
		{"other task", tr, func() State { s := ok; s.Task = "zzz"; return s }(), nil, "zzz"},
		{"empty kind", Event{}, ok, nil, "kind"},
		{"data clash", Event{Kind: "x", Data: map[string]any{"seq": 9}}, ok, nil, "clashes"},
		{"move outside", withMoves(Move{From: "code", To: "../x"}), ok, nil, "inside the task folder"},
		{"move absolute", withMoves(Move{From: "/etc", To: "x"}), ok, nil, "inside the task folder"},
		{"move unclean", withMoves(Move{From: "code/../code", To: "x"}), ok, nil, "clean"},
		{"move state.json", withMoves(Move{From: StateFile, To: "x"}), ok, nil, StateFile},
		{"move transcript", withMoves(Move{From: "code", To: TranscriptFile}), ok, nil, TranscriptFile},
		{"move into itself", withMoves(Move{From: "code", To: "code/sub"}), ok, nil, "contains"},
		{"move missing", withMoves(Move{From: "nope", To: "x"}), ok, nil, "does not exist"},
		{"move onto existing", withMoves(Move{From: "code", To: "planning"}), ok, nil, "already exists"},
		{"move through a symlink out of the task", withMoves(Move{From: "code", To: "out/x"}), ok, nil, "escapes"},
		{"move under a file", withMoves(Move{From: "code", To: "planning/brief.md/x"}), ok, nil, "not a folder"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := gittest.ReadFile(t, filepath.Join(tk.Dir, TranscriptFile))
			state := gittest.ReadFile(t, filepath.Join(tk.Dir, StateFile))
			err := tk.Commit(tt.ev, tt.next)
			if err == nil || (tt.is != nil && !errors.Is(err, tt.is)) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("Commit = %v, want %v containing %q", err, tt.is, tt.msg)
			}
			if gittest.ReadFile(t, filepath.Join(tk.Dir, TranscriptFile)) != log || gittest.ReadFile(t, filepath.Join(tk.Dir, StateFile)) != state {
				t.Fatal("a refused commit changed the files")
			}
			if _, err := os.Stat(filepath.Join(tk.Dir, "code", "x.go")); err != nil {
				t.Fatal("a refused commit moved files")
			}
			if entries, _ := os.ReadDir(outside); len(entries) != 0 {
				t.Fatal("a move wrote outside the task folder")
			}
		})
	}
}

func TestCommitRefusesUnrecovered(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	tk := newTask(t, p, "0001-a")
	lock(t, tk)
	// A crash after the append leaves the log one revision ahead.
	tk.Hooks.AfterAppend = func() { panic(crash{}) }
	crashAt(t, func() error { step(t, tk, "plan_review"); return nil })
	tk.Hooks = Hooks{}
	st, _ := tk.ReadState()
	next := st
	next.Revision++
	err := tk.Commit(Event{Kind: "transition"}, next)
	wantStateError(t, err, StateFile, "$.revision")

	if _, err := tk.Recover(t0); err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(filepath.Join(tk.Dir, TranscriptFile), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"seq":9,`)
	f.Close()
	st, _ = tk.ReadState()
	next = st
	next.Revision++
	wantStateError(t, tk.Commit(Event{Kind: "transition"}, next), TranscriptFile, "")
	wantStateError(t, tk.Append(Event{Kind: "note"}), TranscriptFile, "")
}

func TestCommitMoves(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	tk := newTask(t, p, "0001-a")
	lock(t, tk)
	writeFile(t, filepath.Join(tk.Dir, "code", "files", "a.go"), "package a\n")
	writeFile(t, filepath.Join(tk.Dir, "review", "code-review.json"), "{}")
	step(t, tk, "plan_review",
		Move{From: "code", To: "history/1-codegen/code"},
		Move{From: "history/1-codegen/code/files/a.go", To: "history/1-codegen/a.go"},
		Move{From: "review/code-review.json", To: "history/1-codegen/review/code-review.json"})
	if got := gittest.ReadFile(t, filepath.Join(tk.Dir, "history", "1-codegen", "a.go")); got != "package a\n" {
		t.Fatalf("moved file = %q", got)
	}
	for _, gone := range []string{"code", "review/code-review.json"} {
		if _, err := os.Lstat(filepath.Join(tk.Dir, gone)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s still there", gone)
		}
	}
	mustVerify(t, tk)
	evs, _ := tk.Transcript()
	if len(evs[1].Moves) != 3 {
		t.Fatalf("moves not logged: %+v", evs[1])
	}
}

func TestAppend(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	tk := newTask(t, p, "0001-a")
	lock(t, tk)
	if err := tk.Append(Event{TS: t0, Kind: "model_call", Data: map[string]any{"model": "m", "output": strings.Repeat("y", 200_000)}}); err != nil {
		t.Fatal(err)
	}
	if err := tk.Append(Event{Kind: "note", State: &State{}}); err == nil {
		t.Fatal("Append with a state succeeded")
	}
	if err := tk.Append(Event{Kind: "note", Moves: []Move{{From: "a", To: "b"}}}); err == nil {
		t.Fatal("Append with moves succeeded")
	}
	if err := tk.Append(Event{}); err == nil {
		t.Fatal("Append without kind succeeded")
	}
	st := step(t, tk, "plan_review")
	if st.Revision != 2 {
		t.Fatalf("revision = %d", st.Revision)
	}
	evs, err := tk.Transcript()
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 3 || evs[1].Kind != "model_call" || evs[1].State != nil || evs[2].Seq != 3 {
		t.Fatalf("transcript = %d events", len(evs))
	}
	mustVerify(t, tk)
}
