package task

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/safepath"
)

// File names inside a task folder.
const (
	StateFile      = "state.json"
	TranscriptFile = "transcript.jsonl"
	LockFile       = ".lock"
	BriefFile      = artifact.BriefFile
)

// maxStateSize is the largest state.json ReadState accepts.
const maxStateSize = 1 << 20

// State is the content of state.json.
type State struct {
	Phase     lifecycle.Phase `json:"phase"`
	Actors    Actors          `json:"actors"`
	Revision  int64           `json:"revision"`
	Task      string          `json:"task"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
}

// Actor returns the sub-state of phase p's actor (a copy; the zero Actor
// when there is none).
func (s State) Actor(p lifecycle.Phase) Actor { return s.Actors[p].Clone() }

// Clone returns a copy of s that shares no actor with it.
func (s State) Clone() State {
	s.Actors = s.Actors.Clone()
	return s
}

// fieldProblem is what parseState finds wrong, before it is given a file.
type fieldProblem struct {
	Field, Expected, Got string
	Err                  error
}

// ReadState reads and strictly validates state.json. Any problem (missing,
// empty, a folder, unreadable, larger than 1 MiB, not JSON, a field of the
// wrong type, missing phase or revision, unknown phase, revision below 1, a
// task id that is not this task's) is a *StateError naming the file and the
// field. It needs no lock: state.json is only ever replaced atomically.
func (t *Task) ReadState() (State, error) {
	s, p := readStateFile(filepath.Join(t.Dir, StateFile))
	if p == nil && s.Task != "" && s.Task != t.ID {
		p = &fieldProblem{Field: "$.task", Expected: strconv.Quote(t.ID) + " (the task folder's name)", Got: strconv.Quote(s.Task)}
	}
	if p != nil {
		return State{}, t.stateErr(StateFile, p)
	}
	return s, nil
}

func (t *Task) stateErr(file string, p *fieldProblem) *StateError {
	return &StateError{Task: t.ID, File: file, Field: p.Field, Expected: p.Expected, Got: p.Got, Hint: verifyHint(t.ID), Err: p.Err}
}

// readStateFile reads and parses a state file without knowing its task.
func readStateFile(path string) (State, *fieldProblem) {
	data, p := readBounded(path)
	if p != nil {
		return State{}, p
	}
	return parseState(data, "$")
}

// readBounded reads a state file of at most maxStateSize bytes through
// the bounded reader (safepath.ReadRegular): only a regular file, opened
// without blocking (a named pipe put there is refused, never waited on),
// a symbolic link only when it stays inside the task folder.
func readBounded(path string) ([]byte, *fieldProblem) {
	data, err := safepath.ReadRegular(filepath.Dir(path), filepath.Base(path), maxStateSize, safepath.LinksInside)
	var fe *safepath.FileError
	switch {
	case err == nil:
		return data, nil
	case errors.Is(err, safepath.ErrTooLarge) && errors.As(err, &fe):
		return nil, tooLargeProblem(fe.Size)
	case errors.Is(err, safepath.ErrNotRegular) && errors.As(err, &fe) && fe.Got == safepath.DescribeMode(fs.ModeDir):
		return nil, folderProblem()
	case errors.Is(err, safepath.ErrNotRegular) && errors.As(err, &fe):
		return nil, &fieldProblem{Field: "$", Expected: "a JSON file", Got: fe.Got}
	}
	return nil, openProblem(err)
}

func openProblem(err error) *fieldProblem {
	got := "an unreadable file (" + err.Error() + ")"
	if errors.Is(err, fs.ErrNotExist) {
		got = "no file"
	}
	return &fieldProblem{Field: "$", Expected: "a JSON object", Got: got, Err: err}
}

// specialProblem: a named pipe, a socket or a device where a file should
// be.
func specialProblem(m fs.FileMode) *fieldProblem {
	return &fieldProblem{Field: "$", Expected: "a JSON file", Got: artifact.DescribeMode(m)}
}

// openRegular opens a task file for reading through the bounded reader
// (safepath.OpenRegular: without blocking, a symbolic link only inside the
// task folder) and refuses anything but a regular file. A missing file is
// an error wrapping fs.ErrNotExist.
func openRegular(path string) (*os.File, error) {
	f, _, err := safepath.OpenRegular(filepath.Dir(path), filepath.Base(path), safepath.LinksInside)
	var fe *safepath.FileError
	switch {
	case err == nil:
		return f, nil
	case errors.Is(err, safepath.ErrNotRegular) && errors.As(err, &fe):
		what := fe.Got
		if what == safepath.DescribeMode(fs.ModeDir) {
			what = "a folder"
		}
		return nil, fmt.Errorf("%s: not a regular file: %s", path, what)
	case errors.Is(err, fs.ErrNotExist):
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	}
	return nil, fmt.Errorf("%s: %w", path, err)
}

func folderProblem() *fieldProblem {
	return &fieldProblem{Field: "$", Expected: "a JSON file", Got: "a folder"}
}

func tooLargeProblem(size int64) *fieldProblem {
	return &fieldProblem{Field: "$", Expected: "at most 1 MiB", Got: fmt.Sprintf("%d bytes", size)}
}

// parseState strictly parses a JSON state object; field paths start with
// prefix ("$" for state.json, "$.state" inside a transcript event).
func parseState(data []byte, prefix string) (State, *fieldProblem) {
	return parseStateMode(data, prefix, true)
}

// parseStateMode is parseState; without withActors the actors are checked
// for shape (an object of objects) but not decoded, which is all List needs.
func parseStateMode(data []byte, prefix string, withActors bool) (State, *fieldProblem) {
	var s State
	if len(bytes.TrimSpace(data)) == 0 {
		return s, &fieldProblem{Field: prefix, Expected: "a JSON object", Got: "an empty file"}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return s, &fieldProblem{Field: prefix, Expected: "a JSON object", Got: describe(data)}
		}
		return s, &fieldProblem{Field: prefix, Expected: "a JSON object", Got: "invalid JSON (" + err.Error() + ")", Err: err}
	}
	if obj == nil {
		return s, &fieldProblem{Field: prefix, Expected: "a JSON object", Got: "null"}
	}
	field := func(k string) string { return prefix + "." + k }

	phase, ok := present(obj, "phase")
	if !ok {
		return s, &fieldProblem{Field: field("phase"), Expected: "one of " + lifecycle.PhaseList(), Got: "nothing (the field is missing)"}
	}
	if err := json.Unmarshal(phase, &s.Phase); err != nil || !s.Phase.Valid() {
		return s, &fieldProblem{Field: field("phase"), Expected: "one of " + lifecycle.PhaseList(), Got: describe(phase)}
	}

	rev, ok := present(obj, "revision")
	if !ok {
		return s, &fieldProblem{Field: field("revision"), Expected: "an integer ≥ 1", Got: "nothing (the field is missing)"}
	}
	n, err := strconv.ParseInt(string(rev), 10, 64)
	if err != nil || n < 1 {
		return s, &fieldProblem{Field: field("revision"), Expected: "an integer ≥ 1", Got: describe(rev)}
	}
	s.Revision = n

	if raw, ok := present(obj, "actors"); ok {
		if withActors {
			actors, p := parseActors(raw, field("actors"))
			if p != nil {
				return s, p
			}
			s.Actors = actors
		} else if p := checkActors(raw, field("actors")); p != nil {
			return s, p
		}
	}
	if raw, ok := present(obj, "task"); ok {
		if err := json.Unmarshal(raw, &s.Task); err != nil {
			return s, &fieldProblem{Field: field("task"), Expected: "a string", Got: describe(raw)}
		}
	}
	for _, tf := range []struct {
		key string
		dst *time.Time
	}{{"created_at", &s.CreatedAt}, {"updated_at", &s.UpdatedAt}} {
		raw, ok := present(obj, tf.key)
		if !ok {
			continue
		}
		if jsonKind(raw) != "string" || tf.dst.UnmarshalJSON(raw) != nil {
			return s, &fieldProblem{Field: field(tf.key), Expected: "an RFC 3339 time string", Got: describe(raw)}
		}
	}
	return s, nil
}

func parseActors(raw json.RawMessage, path string) (Actors, *fieldProblem) {
	if p := checkActors(raw, path); p != nil {
		return nil, p
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, &fieldProblem{Field: path, Expected: "a JSON object of per-phase objects", Got: describe(raw), Err: err}
	}
	actors := make(Actors, len(m))
	for k, v := range m {
		var a Actor
		if err := a.UnmarshalJSON(v); err != nil {
			return nil, &fieldProblem{Field: path + "." + k, Expected: "a JSON object", Got: describe(v), Err: err}
		}
		actors[lifecycle.Phase(k)] = a
	}
	return actors, nil
}

// checkActors checks that raw is an object of objects without decoding
// the objects.
func checkActors(raw json.RawMessage, path string) *fieldProblem {
	if jsonKind(raw) != "object" {
		return &fieldProblem{Field: path, Expected: "a JSON object of per-phase objects", Got: describe(raw)}
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return &fieldProblem{Field: path, Expected: "a JSON object of per-phase objects", Got: describe(raw), Err: err}
	}
	for k, v := range m {
		if jsonKind(v) != "object" {
			return &fieldProblem{Field: path + "." + k, Expected: "a JSON object", Got: describe(v)}
		}
	}
	return nil
}

// present returns obj[k] unless it is absent or null.
func present(obj map[string]json.RawMessage, k string) (json.RawMessage, bool) {
	v, ok := obj[k]
	if !ok || jsonKind(v) == "null" {
		return nil, false
	}
	return v, true
}

// jsonKind names the kind of a JSON value by its first byte.
func jsonKind(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	switch c := raw[0]; {
	case c == '{':
		return "object"
	case c == '[':
		return "array"
	case c == '"':
		return "string"
	case c == 't' || c == 'f':
		return "boolean"
	case c == 'n':
		return "null"
	case c == '-' || c >= '0' && c <= '9':
		return "number"
	}
	return ""
}

// describe renders a JSON value for a message: its kind and a short excerpt.
func describe(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	excerpt := string(raw)
	if len(excerpt) > 60 {
		excerpt = excerpt[:57] + "..."
	}
	switch k := jsonKind(raw); k {
	case "string":
		return "the string " + excerpt
	case "number", "boolean":
		return k + " " + excerpt
	case "null":
		return "null"
	case "object", "array":
		return "a JSON " + k
	}
	return excerpt
}

// encodeJSON marshals v compactly without HTML escaping. Maps are written
// with sorted keys and structs in field order, so the output is stable.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// writeState replaces state.json atomically and durably.
func writeState(fsys fileSystem, dir string, s State) error {
	if s.Actors == nil {
		s.Actors = Actors{}
	}
	data, err := encodeJSON(s)
	if err != nil {
		return fmt.Errorf("encode state: %w", err)
	}
	return writeFileAtomic(fsys, dir, StateFile, append(data, '\n'), 0o644)
}

// sameState reports whether a and b agree on phase, revision and actors,
// and if not, names the first field that differs.
func sameState(a, b State) (bool, string, error) {
	if a.Phase != b.Phase {
		return false, "$.phase", nil
	}
	if a.Revision != b.Revision {
		return false, "$.revision", nil
	}
	ea, err := encodeActors(a.Actors)
	if err != nil {
		return false, "", err
	}
	eb, err := encodeActors(b.Actors)
	if err != nil {
		return false, "", err
	}
	if !bytes.Equal(ea, eb) {
		return false, "$.actors", nil
	}
	return true, "", nil
}

func encodeActors(a Actors) ([]byte, error) {
	if a == nil {
		a = Actors{}
	}
	b, err := encodeJSON(a)
	if err != nil {
		return nil, fmt.Errorf("encode actors: %w", err)
	}
	return b, nil
}
