package task

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/fuzztest"
	"github.com/orchdev/orch/internal/gittest"
)

// foldLog folds the complete lines of log into a new StateFold.
func foldLog(log []byte) *StateFold {
	var f StateFold
	foldMore(&f, log, 0)
	return &f
}

// foldMore folds the complete lines of log[from:] (from at a line's
// start) into f.
func foldMore(f *StateFold, log []byte, from int64) {
	for off := from; ; {
		i := bytes.IndexByte(log[off:], '\n')
		if i < 0 {
			return
		}
		f.Add(log[off:off+int64(i)], off)
		off += int64(i) + 1
	}
}

// committedOf is what CommittedState returns, rendered for comparing:
// the state as JSON, the pending change and the error's text.
func committedOf(st State, p *Pending, err error) string {
	b, jerr := encodeJSON(st)
	if jerr != nil {
		b = []byte(jerr.Error())
	}
	msg := "<nil>"
	if err != nil {
		msg = err.Error()
	}
	return fmt.Sprintf("state %s\npending %+v\nerr %s", b, p, msg)
}

// foldTask is a task whose transcript and state.json a test rewrites:
// states holds the state.json of each revision it went through, and log
// its transcript then.
type foldTask struct {
	tk     *Task
	states []string
	log    []byte
}

func newFoldTask(t testing.TB) *foldTask {
	p := newProject(t)
	tk := newTask(t, p, "0001-a")
	lock(t, tk)
	ft := &foldTask{tk: tk}
	read := func() {
		ft.states = append(ft.states, gittest.ReadFile(t, filepath.Join(tk.Dir, StateFile)))
	}
	read()
	step(t, tk, "plan_review")
	read()
	if err := tk.Append(Event{TS: t0, Kind: "note", Data: map[string]any{"text": "a \"state\" word"}}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(tk.Dir, "code", "a"), "a")
	step(t, tk, "codegen", Move{From: "code/a", To: "history/a"})
	read()
	if err := tk.Append(Event{TS: t0, Kind: "model_call", Data: map[string]any{"phase": "codegen", "tokens_in": 3}}); err != nil {
		t.Fatal(err)
	}
	ft.log = []byte(gittest.ReadFile(t, filepath.Join(tk.Dir, TranscriptFile)))
	return ft
}

// write makes state.json the one of revision index pick and the
// transcript log.
func (ft *foldTask) write(t testing.TB, pick int, log []byte) {
	t.Helper()
	// In place (fuzztest.Write): os.WriteFile's flush on close was most
	// of FuzzStateFold's time.
	fuzztest.Write(t, filepath.Join(ft.tk.Dir, StateFile), []byte(ft.states[pick%len(ft.states)]))
	fuzztest.Write(t, filepath.Join(ft.tk.Dir, TranscriptFile), log)
}

// check compares the fold of log's lines with CommittedState on the
// files: the same state, pending change and error.
func (ft *foldTask) check(t testing.TB, what string, f *StateFold) {
	t.Helper()
	cur, err := ft.tk.ReadState()
	if err != nil {
		t.Fatal(err)
	}
	want := committedOf(ft.tk.CommittedState())
	if got := committedOf(f.Committed(ft.tk.ID, cur)); got != want {
		t.Fatalf("%s: the fold says\n%s\nCommittedState says\n%s", what, got, want)
	}
}

// TestStateFold: the fold of a transcript's lines decides the committed
// state as CommittedState does, for transcripts an orch command leaves
// and damaged ones: an interrupted commit (state.json one behind), a
// state set by hand, a last line cut by a crash, a damaged last line, a
// damaged state-carrying line before or after the second last event, a
// "state" key spelled with an escape, and no transcript lines at all.
func TestStateFold(t *testing.T) {
	ft := newFoldTask(t)
	lines := strings.SplitAfter(string(ft.log), "\n")
	lines = lines[:len(lines)-1] // after the last '\n'
	n := len(lines)
	join := func(ls ...string) []byte { return []byte(strings.Join(ls, "")) }
	for _, tc := range []struct {
		name string
		pick int
		log  []byte
	}{
		{"as committed", 2, ft.log},
		{"state.json one behind", 1, ft.log},
		{"state.json two behind", 0, ft.log},
		{"no lines", 2, nil},
		{"only a torn line", 2, []byte(`{"seq":1`)},
		{"a torn last line", 2, append(bytes.Clone(ft.log), `{"seq":9,"kind":"tr`...)},
		{"a damaged last line", 2, join(append(lines[:n:n], "{not json\n")...)},
		{"an empty last line", 2, join(append(lines[:n:n], "\n")...)},
		{"a damaged state line after the last event", 2, join(append(lines[:n:n], `{"seq":9,"state":7}`+"\n", lines[n-1])...)},
		{"a damaged state line between the last two events", 2, join(append(append(lines[:2:2], `{"state":[]}`+"\n"), lines[2:]...)...)},
		{"a damaged state line before the second last event", 2, join(append([]string{`{"state":[]}` + "\n"}, lines...)...)},
		{"a state key with an escape, last", 2, join(append(lines[:n:n], strings.Replace(lines[n-2], `"state"`, `"st\u0061te"`, 1))...)},
		{"a state key with an escape, not last", 2, join(append(lines[:n-1:n-1], strings.Replace(lines[n-2], `"state"`, `"st\u0061te"`, 1), lines[n-1])...)},
		{"a null state", 2, join(append(lines[:n:n], `{"seq":9,"kind":"x","state":null}`+"\n")...)},
		{"only the creation", 0, join(lines[0])},
		{"a line without an event first", 2, join(append([]string{"[]\n"}, lines...)...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ft.write(t, tc.pick, tc.log)
			ft.check(t, "one pass", foldLog(tc.log))
		})
	}
}

// TestStateFoldStart: the decision depends only on the lines from Start
// on: whatever comes before them, CommittedState decides the same; and a
// copy of a fold folds on independently of it.
func TestStateFoldStart(t *testing.T) {
	ft := newFoldTask(t)
	f := foldLog(ft.log)
	start := f.Start()
	if start == 0 {
		t.Fatalf("a transcript with three state-carrying events depends on its first line")
	}
	ft.write(t, 2, ft.log)
	ft.check(t, "whole", f)
	ft.write(t, 2, append([]byte("garbage\n{\"state\":[]}\n"), ft.log[start-1:]...))
	ft.check(t, "another start", f)

	copied := *f
	f.Add([]byte(`{"state":[]}`), int64(len(ft.log)))
	ft.write(t, 2, ft.log)
	ft.check(t, "the copy, after the original folded on", &copied)
}

// FuzzStateFold: for any transcript bytes and any of a task's
// state.json files, the fold of the transcript's complete lines (folded
// in two parts, through a copy) decides as CommittedState on the files,
// and so does it for any other bytes before the fold's Start.
func FuzzStateFold(f *testing.F) {
	seed := newFoldTask(f)
	f.Add(seed.log, uint8(2), []byte("x\n"), uint16(0))
	f.Add(seed.log, uint8(1), []byte(nil), uint16(200))
	f.Add(seed.log, uint8(0), []byte(`{"state":[]}`+"\n"), uint16(400))
	f.Add([]byte(`{"seq":1,"kind":"x","st\u0061te":{"phase":"planning","revision":1}}`+"\n"), uint8(0), []byte(nil), uint16(1))
	// One task's files, rewritten by every input.
	ft := seed
	f.Fuzz(func(t *testing.T, log []byte, pick uint8, prefix []byte, split uint16) {
		ft.write(t, int(pick), log)

		// Folded in two parts at a line's start, through a copy.
		at := int64(0)
		if i := bytes.LastIndexByte(log[:min(int(split), len(log))], '\n'); i >= 0 {
			at = int64(i) + 1
		}
		var first StateFold
		foldMore(&first, log[:at], 0)
		second := first
		first.Add([]byte(`{"state":[]}`), at)
		foldMore(&second, log, at)
		ft.check(t, "folded", &second)

		if start := second.Start(); start > 0 {
			other := append(bytes.Clone(prefix), log[start-1:]...)
			ft.write(t, int(pick), other)
			ft.check(t, "another start", &second)
		}
	})
}

// TestStateFoldCopy: Add does not keep the caller's bytes.
func TestStateFoldCopy(t *testing.T) {
	var f StateFold
	line := []byte(`{"seq":1,"ts":"2026-11-25T10:00:00Z","kind":"note","prev":""}`)
	f.Add(line, 0)
	copy(line, "garbage")
	if _, _, err := f.Committed("0001-a", State{}); err != nil || f.last.err != nil {
		t.Fatalf("the line read after Add returned: %v", f.last.err)
	}
	if len(f.recent) != 0 {
		t.Fatalf("a note counted: %+v", f.recent)
	}
}
