package task

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/fuzztest"
	"github.com/orchdev/orch/internal/lifecycle"
)

// tenEvents makes a task whose transcript has ten lines.
func tenEvents(t *testing.T) *Task {
	t.Helper()
	p := newProject(t)
	tk := newTask(t, p, "0001-a")
	lock(t, tk)
	for i, ph := range []lifecycle.Phase{"plan_review", "codegen", "review", "test", "accept"} {
		step(t, tk, ph)
		if err := tk.Append(Event{TS: t0, Kind: "model_call", Data: map[string]any{"n": i}}); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(logLines(t, tk)); n != 11 {
		t.Fatalf("%d lines", n)
	}
	mustVerify(t, tk)
	return tk
}

func TestVerifyDamage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		edit func(lines []string) []string
		line int    // of the first problem
		want string // in its message
	}{
		{"edited line", func(l []string) []string {
			l[6] = strings.Replace(l[6], `"n":2`, `"n":7`, 1)
			return l
		}, 8, "line 7 was edited"},
		{"deleted line", func(l []string) []string { return append(l[:4:4], l[5:]...) }, 5, "removed"},
		{"inserted line", func(l []string) []string {
			return append(l[:3:3], append([]string{l[2]}, l[3:]...)...)
		}, 4, "seq is 3, expected 4"},
		{"swapped lines", func(l []string) []string { l[3], l[4] = l[4], l[3]; return l }, 4, "seq is 5, expected 4"},
		{"not JSON", func(l []string) []string { l[2] = "{oops"; return l }, 3, "not valid JSON"},
		{"array", func(l []string) []string { l[2] = "[1,2]"; return l }, 3, "expected a JSON object"},
		{"empty line", func(l []string) []string { l[2] = ""; return l }, 3, "not valid JSON"},
		{"missing prev", func(l []string) []string { l[2] = strings.Replace(l[2], `,"prev":`, `,"prex":`, 1); return l }, 3, `"prev" is missing`},
		{"seq as string", func(l []string) []string { l[2] = strings.Replace(l[2], `"seq":3`, `"seq":"3"`, 1); return l }, 3, `"seq" is the string`},
		{"empty kind", func(l []string) []string {
			l[2] = strings.Replace(l[2], `"kind":"model_call"`, `"kind":""`, 1)
			return l
		}, 3, `"kind" is empty`},
		{"first line not created", func(l []string) []string {
			l[0] = strings.Replace(l[0], `"kind":"created"`, `"kind":"transition"`, 1)
			return l
		}, 1, `must be "created"`},
		{"first prev set", func(l []string) []string { l[0] = strings.Replace(l[0], `"prev":""`, `"prev":"ab"`, 1); return l }, 1, `expected "" for the first line`},
		{"bad state in event", func(l []string) []string {
			l[1] = strings.Replace(l[1], `"phase":"plan_review"`, `"phase":"deploy"`, 1)
			return l
		}, 2, "$.state.phase"},
		{"revision gap", func(l []string) []string { l[1] = strings.Replace(l[1], `"revision":2`, `"revision":5`, 1); return l }, 2, "state revision is 5, expected 2"},
		{"bad move in log", func(l []string) []string {
			l[1] = strings.Replace(l[1], `,"prev":`, `,"moves":[{"from":"a","to":"../../x"}],"prev":`, 1)
			return l
		}, 2, "inside the task folder"},
		{"last line state edited", func(l []string) []string {
			l[10] = strings.Replace(l[10], `"n":4`, `"n":5`, 1)
			l[9] = strings.Replace(l[9], `"phase":"accept"`, `"phase":"done"`, 1)
			return l
		}, 11, "line 10 was edited"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tk := tenEvents(t)
			writeLog(t, tk, tt.edit(logLines(t, tk)))
			rep, err := tk.Verify()
			if err != nil {
				t.Fatal(err)
			}
			if rep.OK || len(rep.Problems) == 0 {
				t.Fatal("damage not found")
			}
			first := rep.Problems[0]
			if first.Line != tt.line || !strings.Contains(first.Msg, tt.want) {
				t.Fatalf("first problem %q (line %d), want line %d with %q; all: %v", first.Msg, first.Line, tt.line, tt.want, rep.Problems)
			}
			if !strings.HasPrefix(first.String(), "line ") {
				t.Fatalf("String() = %q", first.String())
			}
		})
	}
}

func TestVerifyEditedLineNamesOnlyIt(t *testing.T) {
	t.Parallel()
	tk := tenEvents(t)
	lines := logLines(t, tk)
	lines[6] = strings.Replace(lines[6], `"n":2`, `"n":7`, 1)
	writeLog(t, tk, lines)
	rep, _ := tk.Verify()
	if len(rep.Problems) != 1 || rep.Problems[0].Msg != "prev hash mismatch: line 7 was edited, or lines before line 8 were removed or inserted" {
		t.Fatalf("problems = %v", rep.Problems)
	}
	if rep.Problems[0].String() != "line 8: prev hash mismatch: line 7 was edited, or lines before line 8 were removed or inserted" {
		t.Fatalf("String() = %q", rep.Problems[0].String())
	}
}

func TestVerifyStateJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		edit func(t *testing.T, tk *Task)
		want string
	}{
		{"phase edited", func(t *testing.T, tk *Task) { editState(t, tk, func(s *State) { s.Phase = "done" }) }, "state.json: $.phase differs from the transcript's state at revision 6"},
		{"actors edited", func(t *testing.T, tk *Task) { editState(t, tk, func(s *State) { s.Actors = nil }) }, "$.actors differs"},
		{"ahead", func(t *testing.T, tk *Task) { editState(t, tk, func(s *State) { s.Revision = 7 }) }, "changed outside orch"},
		{"invalid", func(t *testing.T, tk *Task) { writeFile(t, filepath.Join(tk.Dir, StateFile), `{"phase":1}`) }, "state.json: $.phase: expected one of"},
		{"missing", func(t *testing.T, tk *Task) { os.Remove(filepath.Join(tk.Dir, StateFile)) }, "state.json: $: expected a JSON object, got no file"},
		{"no transcript", func(t *testing.T, tk *Task) { os.Remove(filepath.Join(tk.Dir, TranscriptFile)) }, "transcript.jsonl: missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tk := tenEvents(t)
			tt.edit(t, tk)
			rep, err := tk.Verify()
			if err != nil {
				t.Fatal(err)
			}
			if rep.OK || rep.Problems[0].Line != 0 || !strings.Contains(rep.Problems[0].Msg, tt.want) {
				t.Fatalf("problems = %v, want %q", rep.Problems, tt.want)
			}
		})
	}
}

func TestVerifyCapsProblems(t *testing.T) {
	t.Parallel()
	tk := tenEvents(t)
	lines := logLines(t, tk)
	for range 100 {
		lines = append(lines, "junk")
	}
	writeLog(t, tk, lines)
	rep, _ := tk.Verify()
	if len(rep.Problems) != maxProblems+1 || !strings.Contains(rep.Problems[maxProblems].Msg, "more problems") {
		t.Fatalf("%d problems, last %v", len(rep.Problems), rep.Problems[len(rep.Problems)-1])
	}
}

func FuzzVerify(f *testing.F) {
	f.Add([]byte(`{"seq":1,"ts":"2026-11-25T10:00:00Z","kind":"created","state":{"phase":"planning","actors":{},"revision":1,"task":"0001-a","created_at":"2026-11-25T10:00:00Z","updated_at":"2026-11-25T10:00:00Z"},"prev":""}` + "\n"))
	f.Add([]byte("{}\n[]\n\n{\"seq\":2"))
	f.Add([]byte(""))
	// A verified log with a torn last line (found by the fuzzer in CI).
	f.Add([]byte(`{"seq":1,"ts":"2026-11-25T10:00:00Z","kind":"created","state":{"phase":"planning","actors":{},"revision":1,"task":"0001-a"},"prev":""}` + "\n{"))
	// One task folder for all the inputs of a worker, holding exactly the
	// two files before each (fuzztest: a t.TempDir per input took longer
	// than Verify and Recover together).
	dir := f.TempDir()
	tk := &Task{ID: "0001-a", Dir: dir}
	f.Fuzz(func(t *testing.T, log []byte) {
		fuzztest.Reset(t, dir, map[string][]byte{
			TranscriptFile: log,
			StateFile:      []byte(`{"phase":"planning","actors":{},"revision":1,"task":"0001-a"}`),
		})
		rep, err := tk.Verify()
		if err != nil {
			t.Fatal(err)
		}
		if rep.OK != (len(rep.Problems) == 0) {
			t.Fatalf("OK=%v with %d problems", rep.OK, len(rep.Problems))
		}
		// Whatever Verify accepts, Recover accepts; the one repair it may
		// make is cutting off the torn last line Verify reported (an
		// append interrupted before it was durable is not damage).
		if rep.OK {
			var torn int64
			if rep.Torn != nil {
				torn = rep.Torn.Bytes
			}
			rec, err := tk.Recover(t0)
			if err != nil || len(rec.RemovedTemp) > 0 || rec.RolledForward || rec.TornBytes != torn {
				t.Fatalf("Recover of a verified task (torn %d bytes) = %+v, %v", torn, rec, err)
			}
		}
	})
}
