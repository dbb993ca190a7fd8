package fleetlink

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/task"
)

// BinaryName is the fleet's binary (fleet/cmd/orch-fleet).
const BinaryName = "orch-fleet"

// BuildHint says how to build orch-fleet.
const BuildHint = "build it from orch's source: cd fleet && go build -o DIR/orch-fleet ./cmd/orch-fleet (DIR: the folder of orch, or one on PATH), or set [fleet] binary = \"PATH\" in .orch/config.toml (docs/fleet.md)"

// Find returns the orch-fleet binary to run: [fleet] binary when set
// (relative to the repository's top root), else orch-fleet in the folder of
// the running orch executable, else orch-fleet on PATH. ErrNoBinary when
// there is none.
func Find(root string, f config.Fleet) (string, error) {
	if f.Binary != "" {
		p := f.Binary
		if !filepath.IsAbs(p) {
			p = filepath.Join(root, p)
		}
		if err := executable(p); err != nil {
			return "", exit.New(ErrNoBinary, "[fleet] binary %s: %v", f.Binary, err).WithHint("%s", BuildHint)
		}
		return p, nil
	}
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), BinaryName)
		if executable(p) == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath(BinaryName); err == nil {
		return p, nil
	}
	return "", exit.New(ErrNoBinary, "the fleet is configured ([fleet] in .orch/config.toml) but %s is neither next to orch nor on PATH", BinaryName).WithHint("%s", BuildHint)
}

// executable is nil when p is a regular file with an execute bit.
func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", p)
	}
	return nil
}

// Link runs orch-fleet for the clone at Root with the settings Fleet.
type Link struct {
	// Binary is orch-fleet's path (Find).
	Binary string
	// Root is the repository's top: orch-fleet runs there and reads the
	// rest of [fleet] (TLS, the API key's variable) from its config.
	Root string
	// Fleet's Address, Namespace and Remote are passed as orch-fleet's
	// --temporal, --namespace and --remote.
	Fleet config.Fleet
	// Env is orch-fleet's environment; nil: orch's own.
	Env []string
}

// Open finds orch-fleet and returns the link for the clone at root.
func Open(root string, f config.Fleet) (*Link, error) {
	bin, err := Find(root, f)
	if err != nil {
		return nil, err
	}
	return &Link{Binary: bin, Root: root, Fleet: f}, nil
}

// args are orch-fleet's global flags followed by the command's words.
func (l *Link) args(words ...string) []string {
	a := []string{"--json"}
	if l.Fleet.Address != "" {
		a = append(a, "--temporal", l.Fleet.Address)
	}
	if l.Fleet.Namespace != "" {
		a = append(a, "--namespace", l.Fleet.Namespace)
	}
	if l.Fleet.Remote != "" {
		a = append(a, "--remote", l.Fleet.Remote)
	}
	return append(a, words...)
}

// run runs orch-fleet's command what with words, writing its stdout to
// stdout (nil: kept and returned, bounded by maxOutput), and turns a
// failure into orch-fleet's own error (decodeFailure).
func (l *Link) run(ctx context.Context, what string, stdout io.Writer, words ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, l.Binary, l.args(words...)...)
	cmd.Dir = l.Root
	cmd.Env = l.Env
	var out limitedBuffer
	out.max = maxOutput
	if stdout != nil {
		cmd.Stdout = stdout
	} else {
		cmd.Stdout = &out
	}
	errb := tailBuffer{max: maxStderr}
	cmd.Stderr = &errb
	err := cmd.Run()
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return nil, exit.New(exit.ErrInternal, "run %s %s: %w", l.Binary, what, err)
		}
		if !ee.Exited() {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, exit.New(exit.ErrInternal, "orch-fleet %s ended without an exit code (%v): %s", what, ee.ProcessState, excerpt(errb.Bytes()))
		}
		return nil, decodeFailure(what, ee.ExitCode(), errb.Bytes())
	}
	if out.over {
		return nil, exit.New(exit.ErrInternal, "orch-fleet %s printed more than %d bytes", what, maxOutput)
	}
	return out.Bytes(), nil
}

// call runs a command whose answer is one JSON value of out's type.
func (l *Link) call(ctx context.Context, what string, out any, words ...string) error {
	data, err := l.run(ctx, what, nil, words...)
	if err != nil {
		return err
	}
	return decodeOne(what, data, out)
}

// Status is task id's status from its workflow: what `orch status --json`
// prints.
func (l *Link) Status(ctx context.Context, id string) (Status, error) {
	data, err := l.run(ctx, "status", nil, "status", "--task", id)
	if err != nil {
		return Status{}, err
	}
	return decodeStatus(data)
}

// Log is task id's transcript from its workflow: the events `orch log
// --json` prints.
func (l *Link) Log(ctx context.Context, id string) ([]task.Event, error) {
	data, err := l.run(ctx, "log", nil, "log", "--task", id)
	if err != nil {
		return nil, err
	}
	return decodeLog(data)
}

// List is the fleet's running tasks by phase and its workers by queue.
func (l *Link) List(ctx context.Context) (Listing, error) {
	var out Listing
	err := l.call(ctx, "list", &out, "list")
	return out, err
}

// Submit hands task id of the clone to the fleet.
func (l *Link) Submit(ctx context.Context, id string, o SubmitOptions) (Submitted, error) {
	words := []string{"submit"}
	if o.MaxAttempts > 0 {
		words = append(words, "--max-attempts", strconv.Itoa(o.MaxAttempts))
	}
	if o.Heartbeat != "" {
		words = append(words, "--heartbeat", o.Heartbeat)
	}
	var out Submitted
	err := l.call(ctx, "submit", &out, append(words, "--", id)...)
	return out, err
}

// Pull writes task id's folder, as its ref on the shared remote holds it,
// into the clone.
func (l *Link) Pull(ctx context.Context, id string) (Pulled, error) {
	var out Pulled
	err := l.call(ctx, "pull", &out, "pull", "--", id)
	return out, err
}

// gate runs a gate's command and decodes its GateResult.
func (l *Link) gate(ctx context.Context, what, id string, words ...string) (GateResult, error) {
	var out GateResult
	err := l.call(ctx, what, &out, append([]string{what, "--task", id}, words...)...)
	return out, err
}

// Answer answers question q of task id's plan with text.
func (l *Link) Answer(ctx context.Context, id, q, text string) (GateResult, error) {
	return l.gate(ctx, "answer", id, "--", q, text)
}

// Accept records the accept decision d on task id.
func (l *Link) Accept(ctx context.Context, id string, d Decision) (GateResult, error) {
	words := []string{"--verdict", d.Verdict}
	if d.Target != "" {
		words = append(words, "--to", d.Target)
	}
	for _, r := range d.Reasons {
		words = append(words, "--reason", r)
	}
	if d.Decider != "" {
		words = append(words, "--decider", d.Decider)
	}
	if d.AllowIncomplete {
		words = append(words, "--allow-incomplete")
	}
	if d.Revision != 0 {
		words = append(words, "--expect", strconv.FormatInt(d.Revision, 10))
	}
	return l.gate(ctx, "accept", id, words...)
}

// Override moves task id on without checking the conditions (orch next
// --override REASON [--to TO]).
func (l *Link) Override(ctx context.Context, id, reason string, to lifecycle.Phase) (GateResult, error) {
	words := []string{"--override", reason}
	if to != "" {
		words = append(words, "--to", string(to))
	}
	return l.gate(ctx, "next", id, words...)
}

// Redo re-runs phase p of task id ("": the current phase).
func (l *Link) Redo(ctx context.Context, id string, p lifecycle.Phase, reason string) (GateResult, error) {
	words := []string{"--reason", reason}
	if p != "" {
		words = append(words, "--", string(p))
	}
	return l.gate(ctx, "redo", id, words...)
}

// Revert carries out task id's requested revert.
func (l *Link) Revert(ctx context.Context, id, reason string) (GateResult, error) {
	return l.gate(ctx, "revert", id, "--reason", reason)
}

// Worker runs `orch-fleet worker ARGS` in the clone until ctx ends or it
// stops, its output written to stdout as it comes.
func (l *Link) Worker(ctx context.Context, args []string, stdout io.Writer) error {
	_, err := l.run(ctx, "worker", stdout, append([]string{"worker"}, args...)...)
	return err
}

// limitedBuffer keeps at most max bytes and notes that more came.
type limitedBuffer struct {
	bytes.Buffer
	max  int
	over bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); len(p) > room {
		b.over = true
		if room > 0 {
			b.Buffer.Write(p[:room])
		}
		return len(p), nil
	}
	return b.Buffer.Write(p)
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	buf []byte
	max int
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.buf = append(b.buf, p...)
	if len(b.buf) > b.max {
		b.buf = append(b.buf[:0], b.buf[len(b.buf)-b.max:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) Bytes() []byte { return b.buf }
