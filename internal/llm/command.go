package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"time"

	"github.com/orchdev/orch/internal/clip"
)

// Limits of the command provider.
const (
	maxCommandStdout = 16 << 20
	maxCommandStderr = 16 << 10
	// commandWaitDelay bounds how long orch waits for the command's
	// output pipes to close after it exits or is killed (a stray
	// background child may hold them open).
	commandWaitDelay = 2 * time.Second
)

// commandProvider runs an executable per call; see commandproto.go and
// docs/command-protocol.md for the protocol. The answer is not streamed: OnToken, when
// set, receives the whole text once.
type commandProvider struct {
	name    string
	argv    []string
	model   string
	timeout time.Duration
	version int // protocol version spoken: 1 or 2
	opts    options
}

func newCommand(cfg Config, name string, timeout time.Duration, o options) (Provider, error) {
	if len(cfg.Command) == 0 || cfg.Command[0] == "" {
		return nil, &ConfigError{Provider: name, Msg: "command provider has no command; set its argv"}
	}
	version := cfg.CommandProtocol
	switch version {
	case 0:
		version = CommandProtocolV1
	case CommandProtocolV1, CommandProtocolV2:
	default:
		return nil, &ConfigError{Provider: name, Msg: fmt.Sprintf("command protocol version %d is unknown; use 1 or 2", version)}
	}
	return &commandProvider{
		name:    name,
		argv:    append([]string(nil), cfg.Command...),
		model:   cfg.Model,
		timeout: timeout,
		version: version,
		opts:    o,
	}, nil
}

func (p *commandProvider) Name() string { return p.name }

// SupportsTools reports whether the command speaks protocol version 2.
func (p *commandProvider) SupportsTools() bool { return p.version >= CommandProtocolV2 }

func (p *commandProvider) Complete(parent context.Context, req Request) (Response, error) {
	model := req.Model
	if model == "" {
		model = p.model
	}
	creq, err := encodeCommandRequest(p.version, req, model)
	if err != nil {
		return Response{}, &ConfigError{Provider: p.name, Msg: err.Error()}
	}
	in, err := json.Marshal(creq)
	if err != nil {
		return Response{}, &ConfigError{Provider: p.name, Msg: fmt.Sprintf("encode request: %v", err)}
	}
	ctx, cancel := context.WithTimeout(parent, p.timeout)
	defer cancel()
	start := p.opts.now()

	cmd := exec.CommandContext(ctx, p.argv[0], p.argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd) }
	cmd.WaitDelay = commandWaitDelay
	stdout := &cappedBuffer{max: maxCommandStdout}
	stderr := &tailBuffer{max: maxCommandStderr}
	cmd.Stdin = bytes.NewReader(in)
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	runErr := cmd.Run()
	if cmd.Process != nil {
		// Whatever the command left running in its group goes with it.
		_ = killGroup(cmd)
	}

	if parent.Err() != nil {
		return Response{}, fmt.Errorf("provider %s: call abandoned: %w", p.name, context.Cause(parent))
	}
	if ctx.Err() != nil {
		return Response{}, &TimeoutError{Provider: p.name, Timeout: p.timeout}
	}
	if runErr != nil && !(errors.Is(runErr, exec.ErrWaitDelay) && cmd.ProcessState != nil && cmd.ProcessState.Success()) {
		ce := &CommandError{Provider: p.name, Command: p.argv[0], Status: -1, Stderr: stderr.String(), Err: runErr}
		var exitErr *exec.ExitError
		if errors.As(runErr, &exitErr) && exitErr.ProcessState.Exited() {
			ce.Status = exitErr.ExitCode()
			ce.Err = nil
		}
		return Response{}, ce
	}
	if stdout.overflow {
		return Response{}, &ProtocolError{Provider: p.name, Msg: fmt.Sprintf("command %s wrote more than %d bytes to stdout", p.argv[0], maxCommandStdout)}
	}
	out, err := decodeCommandResponse(stdout.Bytes(), p.version)
	if err != nil {
		return Response{}, &ProtocolError{
			Provider: p.name,
			Msg:      fmt.Sprintf("command %s printed no valid response (stdout starts %q)", p.argv[0], clip.Bytes(stdout.String(), 200)),
			Err:      err,
		}
	}
	if out.ToolsRefused != "" {
		if len(req.Tools) == 0 {
			return Response{}, &ProtocolError{Provider: p.name, Msg: fmt.Sprintf("command %s answered tools_refused but the request offers no tools", p.argv[0])}
		}
		return Response{}, &ToolsRefusedError{Provider: p.name, Message: shortMessage(out.ToolsRefused)}
	}
	if out.Refusal != "" {
		return Response{}, &RefusalError{Provider: p.name, Message: out.Refusal}
	}
	if len(out.ToolCalls) > 0 && len(req.Tools) == 0 {
		return Response{}, &ProtocolError{Provider: p.name, Msg: fmt.Sprintf("command %s called tool %q but the request offers no tools", p.argv[0], clip.Bytes(out.ToolCalls[0].Name, 80))}
	}
	if out.Model == "" {
		out.Model = model
	}
	if req.OnToken != nil && out.Text != "" {
		req.OnToken(out.Text)
	}
	return Response{
		Text:       out.Text,
		Usage:      out.Usage,
		Model:      out.Model,
		Provider:   p.name,
		StopReason: out.StopReason,
		Latency:    p.opts.now().Sub(start),
		ToolCalls:  out.ToolCalls,
	}, nil
}

// killGroup kills the command's whole process group.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// cappedBuffer keeps at most max bytes and notes that more were written.
// It never fails a write, so the command is not killed by a broken pipe.
// (The buffer is a field, not embedded: an embedded bytes.Buffer would
// lend its ReadFrom to io.Copy and bypass the cap.)
type cappedBuffer struct {
	buf      bytes.Buffer
	max      int
	overflow bool
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	room := b.max - b.buf.Len()
	if len(p) > room {
		b.overflow = true
		if room > 0 {
			b.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return b.buf.Write(p)
}

func (b *cappedBuffer) Bytes() []byte  { return b.buf.Bytes() }
func (b *cappedBuffer) String() string { return b.buf.String() }

// tailBuffer keeps the last max bytes written.
type tailBuffer struct {
	buf []byte
	max int
	cut bool
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0:0], b.buf[over:]...)
		b.cut = true
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	if b.cut {
		return "…" + string(b.buf)
	}
	return string(b.buf)
}
