package task

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/gittest"
)

func TestReadStateInvalid(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	tk := newTask(t, p, "0001-a")
	path := filepath.Join(tk.Dir, StateFile)
	big := `{"phase":"planning","revision":1,"pad":"` + strings.Repeat("x", maxStateSize) + `"}`
	tests := []struct {
		name  string
		setup func(t *testing.T)
		field string
		want  string // in the message
	}{
		{"missing", func(t *testing.T) { os.Remove(path) }, "$", "no file"},
		{"empty", func(t *testing.T) { writeFile(t, path, "") }, "$", "empty"},
		{"blank", func(t *testing.T) { writeFile(t, path, " \n") }, "$", "empty"},
		{"directory", func(t *testing.T) { os.Remove(path); os.Mkdir(path, 0o755) }, "$", "folder"},
		{"too large", func(t *testing.T) { writeFile(t, path, big) }, "$", "1 MiB"},
		{"not JSON", func(t *testing.T) { writeFile(t, path, "phase: planning\n") }, "$", "invalid JSON"},
		{"truncated", func(t *testing.T) { writeFile(t, path, `{"phase":"planning","revision":1`) }, "$", "invalid JSON"},
		{"trailing garbage", func(t *testing.T) { writeFile(t, path, `{"phase":"planning","revision":1} x`) }, "$", "invalid JSON"},
		{"array", func(t *testing.T) { writeFile(t, path, `[1]`) }, "$", "a JSON array"},
		{"null", func(t *testing.T) { writeFile(t, path, `null`) }, "$", "null"},
		{"missing phase", func(t *testing.T) { writeFile(t, path, `{"revision":1}`) }, "$.phase", "missing"},
		{"phase wrong type", func(t *testing.T) { writeFile(t, path, `{"phase":3,"revision":1}`) }, "$.phase", "number 3"},
		{"unknown phase", func(t *testing.T) { writeFile(t, path, `{"phase":"deploy","revision":1}`) }, "$.phase", `"deploy"`},
		{"missing revision", func(t *testing.T) { writeFile(t, path, `{"phase":"test"}`) }, "$.revision", "missing"},
		{"revision 0", func(t *testing.T) { writeFile(t, path, `{"phase":"test","revision":0}`) }, "$.revision", "number 0"},
		{"revision negative", func(t *testing.T) { writeFile(t, path, `{"phase":"test","revision":-3}`) }, "$.revision", "number -3"},
		{"revision fraction", func(t *testing.T) { writeFile(t, path, `{"phase":"test","revision":1.5}`) }, "$.revision", "1.5"},
		{"revision string", func(t *testing.T) { writeFile(t, path, `{"phase":"test","revision":"2"}`) }, "$.revision", "string"},
		{"actors wrong type", func(t *testing.T) { writeFile(t, path, `{"phase":"test","revision":1,"actors":[]}`) }, "$.actors", "array"},
		{"actor wrong type", func(t *testing.T) { writeFile(t, path, `{"phase":"test","revision":1,"actors":{"planning":"x"}}`) }, "$.actors.planning", "string"},
		{"task wrong type", func(t *testing.T) { writeFile(t, path, `{"phase":"test","revision":1,"task":7}`) }, "$.task", "number"},
		{"task of another folder", func(t *testing.T) { writeFile(t, path, `{"phase":"test","revision":1,"task":"other"}`) }, "$.task", `"other"`},
		{"bad time", func(t *testing.T) { writeFile(t, path, `{"phase":"test","revision":1,"updated_at":"yesterday"}`) }, "$.updated_at", "yesterday"},
		{"time wrong type", func(t *testing.T) { writeFile(t, path, `{"phase":"test","revision":1,"created_at":5}`) }, "$.created_at", "number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.RemoveAll(path)
			tt.setup(t)
			_, err := tk.ReadState()
			se := wantStateError(t, err, StateFile, tt.field)
			msg := err.Error()
			if !strings.Contains(msg, tt.want) || !strings.Contains(msg, "expected") || !strings.Contains(msg, "orch verify") || se.Task != "0001-a" {
				t.Fatalf("message %q lacks %q, the expectation or the advice", msg, tt.want)
			}
		})
	}
	t.Run("missing wraps ErrNotExist", func(t *testing.T) {
		os.RemoveAll(path)
		if _, err := tk.ReadState(); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%v", err)
		}
	})
}

func TestReadStateValid(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	tk := newTask(t, p, "0001-a")
	writeFile(t, filepath.Join(tk.Dir, StateFile),
		`{"phase":"review","revision":12,"actors":{"planning":{"round":3,"ratio":0.5,"big":12345678901234567890}},"extra":true,"updated_at":"2026-11-25T10:00:00Z"}`)
	st, err := tk.ReadState()
	if err != nil {
		t.Fatal(err)
	}
	if st.Phase != "review" || st.Revision != 12 || !st.UpdatedAt.Equal(t0) || st.Task != "" {
		t.Fatalf("state = %+v", st)
	}
	for k, want := range map[string]string{"round": "3", "ratio": "0.5", "big": "12345678901234567890"} {
		n, ok := st.Actors["planning"].Values()[k].(json.Number)
		if !ok || n.String() != want {
			t.Fatalf("actors.planning.%s = %#v, want json.Number %s", k, st.Actors["planning"].Values()[k], want)
		}
	}
	// Numbers round-trip unchanged through writeState.
	if err := writeState(osFS{}, tk.Dir, st); err != nil {
		t.Fatal(err)
	}
	if st.Actors["planning"].Round != 3 {
		t.Fatalf("actors.planning.Round = %d, want 3", st.Actors["planning"].Round)
	}
	if got := gittest.ReadFile(t, filepath.Join(tk.Dir, StateFile)); !strings.Contains(got, `"big":12345678901234567890`) || !strings.Contains(got, `"ratio":0.5`) {
		t.Fatalf("rewritten state lost precision: %s", got)
	}
}

func TestWriteStateAtomicLeavesNoTemp(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	tk := newTask(t, p, "0001-a")
	st, _ := tk.ReadState()
	for range 3 {
		st.Revision++
		if err := writeState(osFS{}, tk.Dir, st); err != nil {
			t.Fatal(err)
		}
	}
	entries, _ := os.ReadDir(tk.Dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Fatalf("temporary file left: %s", e.Name())
		}
	}
	fi, _ := os.Stat(filepath.Join(tk.Dir, StateFile))
	if fi.Mode().Perm() != 0o644 {
		t.Fatalf("state.json mode %v", fi.Mode())
	}
}

func FuzzParseState(f *testing.F) {
	for _, s := range []string{
		`{"phase":"planning","revision":1,"actors":{"planning":{"status":"draft","round":0}},"task":"x","created_at":"2026-11-25T10:00:00Z","updated_at":"2026-11-25T10:00:00Z"}`,
		`{"phase":"done","revision":99}`,
		`{"phase":"x"}`, `[]`, `null`, ``, `{"revision":1e3}`, `{"phase":"test","revision":1,"actors":{"a":null}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		st, p := parseState(data, "$")
		if p != nil {
			if p.Field == "" || p.Expected == "" || p.Got == "" {
				t.Fatalf("incomplete problem %+v", p)
			}
			return
		}
		if !st.Phase.Valid() || st.Revision < 1 {
			t.Fatalf("accepted invalid state %+v", st)
		}
		// What was accepted is written and read back the same.
		out, err := encodeJSON(st)
		if err != nil {
			t.Fatal(err)
		}
		back, p := parseState(out, "$")
		if p != nil {
			t.Fatalf("re-read of %s: %+v", out, p)
		}
		if same, field, err := sameState(st, back); err != nil || !same {
			t.Fatalf("round trip differs at %s: %v", field, err)
		}
	})
}
