package fleetlink

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/task"
	"github.com/orchdev/orch/internal/view"
)

// Failure is how `orch-fleet --json` reports a failing command: one JSON
// line on stderr, {"error": MESSAGE, "hints": [...], "exit_code": N},
// where MESSAGE is the error without the "orch: " prefix, the hints are
// exit.Hints of the error and N is also the process's exit code.
type Failure struct {
	Error    string   `json:"error"`
	Hints    []string `json:"hints,omitempty"`
	ExitCode int      `json:"exit_code"`
}

// FailureOf is err as orch-fleet reports it.
func FailureOf(err error) Failure {
	return Failure{Error: err.Error(), Hints: exit.Hints(err), ExitCode: int(exit.Of(err))}
}

// Submitted is `orch-fleet submit --json`'s result: the task's ref on the
// shared remote, its first commit and its workflow.
type Submitted struct {
	Task     string `json:"task"`
	Ref      string `json:"ref"`
	Commit   string `json:"commit"`
	Workflow string `json:"workflow"`
}

// Pulled is `orch-fleet pull --json`'s result: the commit of the task's
// ref written into the clone, and the folder it was written to (relative
// to the repository's top).
type Pulled struct {
	Task   string `json:"task"`
	Commit string `json:"commit"`
	Dir    string `json:"dir"`
}

// GateResult is what a gate's action through the fleet returns (orch-fleet
// answer, accept, next --override, redo and revert with --json): the task's
// phase and revision after the step, and the commit of its ref the step
// pushed ("" when it changed nothing).
type GateResult struct {
	Task     string          `json:"task"`
	Phase    lifecycle.Phase `json:"phase"`
	Revision int64           `json:"revision"`
	Commit   string          `json:"commit,omitempty"`
}

// Listing is `orch-fleet list --json`: the fleet's running tasks by phase
// and the identities of the workers polling each queue (orch-model,
// orch-test, orch-land).
type Listing struct {
	Phases  map[lifecycle.Phase][]TaskLine `json:"phases"`
	Workers map[string][]string            `json:"workers"`
}

// TaskLine is one task of a Listing: its revision and, when its workflow
// waits, for what.
type TaskLine struct {
	Task     string `json:"task"`
	Revision int64  `json:"revision"`
	Waiting  string `json:"waiting,omitempty"`
}

// Status is a fleet task's status: what `orch status --json` prints for
// it, read from its workflow (Raw, as the workflow holds it) and decoded.
type Status struct {
	view.Status
	Raw json.RawMessage `json:"-"`
}

// Decision is orch accept's decision, sent through the fleet.
type Decision struct {
	Verdict         string
	Target          string // with changes_requested: codegen, review or planning
	Reasons         []string
	Decider         string
	AllowIncomplete bool
	Revision        int64 // when not 0, the revision the person decided on
}

// SubmitOptions are `orch-fleet submit`'s settings; zero values are its
// defaults.
type SubmitOptions struct {
	MaxAttempts int
	Heartbeat   string // a Go duration ("20s")
}

// maxOutput bounds what is read of orch-fleet's stdout (a large task's
// transcript is its largest answer).
const maxOutput = 256 << 20

// maxStderr bounds what is kept of its stderr: the end, where the error is.
const maxStderr = 64 << 10

// decodeOne decodes data, which must be exactly one JSON value of out's
// type (no unknown field, nothing after it).
func decodeOne(what string, data []byte, out any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("orch-fleet %s printed what is not its JSON answer: %w (%s)", what, err, excerpt(data))
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("orch-fleet %s printed more than one JSON value (%s)", what, excerpt(data))
	}
	return nil
}

// decodeStatus decodes `orch-fleet status --json`'s answer.
func decodeStatus(data []byte) (Status, error) {
	var s Status
	if err := decodeOne("status", data, &s.Status); err != nil {
		return Status{}, err
	}
	if s.Task == "" || s.Phase == "" {
		return Status{}, fmt.Errorf("orch-fleet status printed a status without task or phase (%s)", excerpt(data))
	}
	s.Raw = json.RawMessage(bytes.TrimSpace(data))
	return s, nil
}

// decodeLog decodes `orch-fleet log --json`'s answer: one event per line,
// as `orch log --json` prints them.
func decodeLog(data []byte) ([]task.Event, error) {
	var out []task.Event
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		var ev task.Event
		err := dec.Decode(&ev)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("orch-fleet log printed what is not a transcript event (event %d): %w", len(out)+1, err)
		}
		if ev.Kind == "" {
			return nil, fmt.Errorf("orch-fleet log printed an event without kind (event %d)", len(out)+1)
		}
		out = append(out, ev)
	}
}

// decodeFailure turns a failed run of orch-fleet (its exit code and the
// end of its stderr) into the error a person sees: orch-fleet's own
// message, hints and exit code when its last line is its Failure with
// that code, else the command, the code and what it printed.
func decodeFailure(what string, code int, stderr []byte) error {
	lines := strings.Split(strings.TrimRight(string(stderr), "\n"), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	var f Failure
	if strings.HasPrefix(last, "{") && decodeOne(what, []byte(last), &f) == nil && f.ExitCode == code && code != 0 && f.Error != "" {
		e := exit.New(kindOf(code), "%s", f.Error)
		if len(f.Hints) > 0 {
			e = e.WithHint("%s", strings.Join(f.Hints, "\n"))
		}
		return e
	}
	text := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(stderr)), exit.Prefix))
	if text == "" {
		text = "no message"
	}
	return exit.New(kindOf(code), "orch-fleet %s failed (exit %d): %s", what, code, text)
}

// kindOf is the error kind carrying exit code code: orch's own kind when
// it has one, else a kind of that code, so that the code reaches the
// caller unchanged.
func kindOf(code int) *exit.Sentinel {
	if k := exit.KindOf(exit.Code(code)); int(k.ExitCode()) == code {
		return k
	}
	if code <= 0 || code > 255 {
		return exit.ErrInternal
	}
	return exit.NewSentinel(exit.Code(code), "orch-fleet failed")
}

// excerpt is the start of data, for a message.
func excerpt(data []byte) string {
	s := strings.TrimSpace(string(data))
	if s == "" {
		return "nothing"
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return fmt.Sprintf("%q", s)
}

// ErrNoBinary is the kind of the error when orch-fleet cannot be found
// (exit 2, as a missing project is).
var ErrNoBinary = exit.NewSentinel(exit.Usage, "orch-fleet not found")
