package evidence

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/lifecycle"
)

// transcriptFile is the task's event log (task.TranscriptFile).
const transcriptFile = "transcript.jsonl"

// gateLine is what ReadGates decodes of a transcript line that moved the
// task: its kind, the edge and the hashes it recorded.
type gateLine struct {
	Seq      int64             `json:"seq"`
	Kind     string            `json:"kind"`
	From     lifecycle.Phase   `json:"from"`
	To       lifecycle.Phase   `json:"to"`
	Evidence map[string]string `json:"evidence"`
}

// ReadGates reads the hashes bound by the gates of the task's current
// attempt from its transcript (see lifecycle.FoldGates): the transition,
// override and redo events, oldest first, complete lines only. It reads the
// file directly and decodes only those events, so it stays cheap on a long
// log of model calls. A missing log binds nothing; a line that moved the
// task but does not decode is an error naming it (`orch verify` says more).
func ReadGates(taskDir string) (lifecycle.Gates, error) {
	evs, err := readGateEvents(taskDir)
	if err != nil {
		return nil, err
	}
	return lifecycle.FoldGates(evs), nil
}

// ReadRecords reads, in one pass over the transcript, the hashes bound by
// the current attempt's gates (ReadGates) and what the pending
// regressions judged (lifecycle.FoldSentBack).
func ReadRecords(taskDir string) (gates, sentBack lifecycle.Gates, err error) {
	evs, err := readGateEvents(taskDir)
	if err != nil {
		return nil, nil, err
	}
	return lifecycle.FoldGates(evs), lifecycle.FoldSentBack(evs), nil
}

// readGateEvents reads the transition, override and redo events of the
// transcript, oldest first (none when there is no transcript).
func readGateEvents(taskDir string) ([]lifecycle.GateEvent, error) {
	// Without blocking, and only a regular file (artifact.OpenRegular).
	f, fi, err := artifact.OpenRegular(taskDir, transcriptFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the gates' records: %w", err)
	}
	defer f.Close()
	var evs []lifecycle.GateEvent
	// A buffer no larger than the transcript (at most 64 KiB): the
	// board reads every task's on each refresh.
	br := bufio.NewReaderSize(f, int(min(fi.Size()+1, 64<<10)))
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if e, ok, gerr := GateEventOf(line, n); gerr != nil {
			return nil, gerr
		} else if ok {
			evs = append(evs, e)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", transcriptFile, err)
		}
	}
	return evs, nil
}

// GateEventOf is what ReadRecords reads of line n (from 1) of the
// transcript, with its '\n': ok is true for a complete line of a
// transition, override or redo event, decoded; such a line that does not
// decode is an error naming it. The board folds the lines it reads of a
// transcript's tail with it.
func GateEventOf(line []byte, n int) (e lifecycle.GateEvent, ok bool, err error) {
	if len(line) == 0 || line[len(line)-1] != '\n' || !movesTask(line) {
		return e, false, nil
	}
	var gl gateLine
	if err := json.Unmarshal(line, &gl); err != nil {
		return e, false, fmt.Errorf("%s line %d: %w (run `orch verify`)", transcriptFile, n, err)
	}
	return lifecycle.GateEvent{Seq: gl.Seq, Override: gl.Kind == "override", Redo: gl.Kind == "redo",
		From: gl.From, To: gl.To, Hashes: gl.Evidence}, true, nil
}

// movesTask reports whether a (compact JSON) transcript line is a
// transition, override or redo event.
func movesTask(line []byte) bool {
	for _, k := range [][]byte{[]byte(`"kind":"transition"`), []byte(`"kind":"override"`), []byte(`"kind":"redo"`)} {
		if bytes.Contains(line, k) {
			return true
		}
	}
	return false
}
