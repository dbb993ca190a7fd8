package task

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/orchdev/orch/internal/durable"
)

// hashLine is the chain hash of a transcript line (without its '\n').
func hashLine(line []byte) string {
	sum := sha256.Sum256(line)
	return hex.EncodeToString(sum[:])
}

// logTail is what writers need from the end of the transcript.
type logTail struct {
	end     int64   // length of the complete lines
	torn    int64   // bytes after the last '\n'
	last    []byte  // last complete line; nil when there is none
	lastSeq int64   // its seq
	states  []Event // the last state-carrying events, newest first
}

// openLog opens transcript.jsonl for reading and appending. A missing log
// is a *StateError.
func (t *Task) openLog() (file, error) {
	f, err := t.fsys().OpenFile(filepath.Join(t.Dir, TranscriptFile), os.O_RDWR|os.O_APPEND, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &StateError{Task: t.ID, File: TranscriptFile, Field: "$", Expected: "the task's event log", Got: "no file", Hint: verifyHint(t.ID), Err: err}
	}
	if err != nil {
		return nil, fmt.Errorf("open transcript of task %s: %w", t.ID, err)
	}
	return f, nil
}

// OpenTranscript opens the task's transcript read only, as its readers
// do: only a regular file (a symbolic link only when it stays inside the
// task folder), never waiting on a named pipe put there. A missing one's
// error is fs.ErrNotExist.
func (t *Task) OpenTranscript() (*os.File, error) {
	return openRegular(filepath.Join(t.Dir, TranscriptFile))
}

// readTail reads the transcript from its end until it has found want
// state-carrying events (or reached the start).
func (t *Task) readTail(f file, want int) (logTail, error) {
	var tl logTail
	fi, err := f.Stat()
	if err != nil {
		return tl, fmt.Errorf("stat transcript of task %s: %w", t.ID, err)
	}
	if tl.end, err = findEnd(f, fi.Size()); err != nil {
		return tl, err
	}
	tl.torn = fi.Size() - tl.end
	r := newRevLines(f, tl.end)
	for first := true; ; first = false {
		line, off, ok, err := r.next()
		if err != nil {
			return tl, err
		}
		if !ok {
			return tl, nil
		}
		if !first && !bytes.Contains(line, []byte(`"state"`)) {
			continue
		}
		var ev Event
		if err := json.Unmarshal(line, &ev); err != nil {
			return tl, &StateError{Task: t.ID, File: TranscriptFile, Field: fmt.Sprintf("the line at byte %d", off),
				Expected: "a JSON event object", Got: err.Error(),
				Hint: fmt.Sprintf("run `orch verify --task %s` to find the damaged line", t.ID)}
		}
		if first {
			tl.last, tl.lastSeq = line, ev.Seq
		}
		if ev.State != nil {
			tl.states = append(tl.states, ev)
		}
		if len(tl.states) >= want {
			return tl, nil
		}
	}
}

// tornError reports a transcript whose last line is incomplete.
func (t *Task) tornError(tl logTail) error {
	return &StateError{Task: t.ID, File: TranscriptFile, Field: fmt.Sprintf("byte %d", tl.end),
		Expected: "a complete last line", Got: fmt.Sprintf("%d bytes of an incomplete write", tl.torn),
		Hint: "call Recover after taking the lock (any orch command does)"}
}

// appendEvent completes ev (seq, ts, prev) from the tail and appends it to
// the log with a single write, then fsyncs the log. The log must end at
// tl.end (no torn bytes).
//
// When the write fails, is short, or the fsync fails, the event is not
// durable and must not be acted on: the log is truncated back to tl.end, so
// that no later reader (Recover in particular) takes the line for a logged
// event, and the error is returned. The fsync is never retried and the
// truncation is not fsynced: after a failed fsync the file's cached pages
// no longer say what is on the disk. Should a crash bring the line back,
// it is either torn (Recover cuts it off) or complete, and then state.json
// is still the state before it, which is exactly what Recover rolls
// forward from.
func (t *Task) appendEvent(f file, tl logTail, ev *Event) error {
	ev.Seq = tl.lastSeq + 1
	if ev.TS.IsZero() {
		ev.TS = time.Now().UTC()
	}
	ev.Prev = ""
	if tl.last != nil {
		ev.Prev = hashLine(tl.last)
	}
	line, err := ev.MarshalJSON()
	if err != nil {
		return fmt.Errorf("encode %s event for task %s: %w", ev.Kind, t.ID, err)
	}
	line = append(line, '\n')
	if err := durable.WriteAll(f, line); err != nil {
		return t.undoAppend(f, tl, fmt.Errorf("append to transcript of task %s: %w", t.ID, err))
	}
	if err := f.Sync(); err != nil {
		return t.undoAppend(f, tl, fmt.Errorf("fsync transcript of task %s (the event is not logged): %w", t.ID, err))
	}
	return nil
}

// undoAppend truncates the log back to tl.end after a failed append and
// returns cause, noting when even the truncation failed.
func (t *Task) undoAppend(f file, tl logTail, cause error) error {
	if err := f.Truncate(tl.end); err != nil {
		return fmt.Errorf("%w; cutting the unlogged event off failed too (%v); the next orch command recovers the task from what the transcript then holds", cause, err)
	}
	return cause
}

// Append adds an event that does not change the state (model_call,
// user_input, …) to the transcript: same chain, no state. Writers pass
// the payload of its kind (NewEvent).
// The caller must hold the task's lock.
func (t *Task) Append(ev Event) error {
	if err := ev.flatten(); err != nil {
		return fmt.Errorf("append to task %s: %w", t.ID, err)
	}
	if ev.Kind == "" {
		return fmt.Errorf("append to task %s: event kind is empty", t.ID)
	}
	if ev.State != nil || len(ev.Moves) > 0 {
		return fmt.Errorf("append %s event to task %s: it carries a state or moves; use Commit", ev.Kind, t.ID)
	}
	f, err := t.openLog()
	if err != nil {
		return err
	}
	defer f.Close()
	tl, err := t.readTail(f, 0)
	if err != nil {
		return err
	}
	if tl.torn > 0 {
		return t.tornError(tl)
	}
	if err := t.appendEvent(f, tl, &ev); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close transcript of task %s (the %s event is logged): %w", t.ID, ev.Kind, err)
	}
	return nil
}

// Transcript reads every complete event of the log, oldest first. An
// incomplete last line (an interrupted write) is not an event and is left
// out. A line that is not a valid event is a *StateError naming it.
func (t *Task) Transcript() ([]Event, error) {
	f, err := openRegular(filepath.Join(t.Dir, TranscriptFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &StateError{Task: t.ID, File: TranscriptFile, Field: "$", Expected: "the task's event log", Got: "no file", Hint: verifyHint(t.ID), Err: err}
	}
	if err != nil {
		return nil, fmt.Errorf("open transcript of task %s: %w", t.ID, err)
	}
	defer f.Close()
	var events []Event
	err = eachLine(f, func(n int, line []byte, complete bool) error {
		if !complete {
			return nil
		}
		var ev Event
		if err := json.Unmarshal(line, &ev); err != nil {
			return &StateError{Task: t.ID, File: TranscriptFile, Field: fmt.Sprintf("line %d", n),
				Expected: "a JSON event object", Got: err.Error(), Hint: verifyHint(t.ID)}
		}
		events = append(events, ev)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return events, nil
}

// eachLine calls fn for every line of r (numbered from 1, without '\n');
// complete is false for a last line that has no '\n'.
func eachLine(r io.Reader, fn func(n int, line []byte, complete bool) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			if ferr := fn(n, line[:len(line)-1], true); ferr != nil {
				return ferr
			}
		} else if len(line) > 0 {
			if ferr := fn(n, line, false); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read transcript: %w", err)
		}
	}
}
