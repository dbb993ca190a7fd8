package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/gofrs/flock"

	"github.com/orchdev/orch/internal/durable"
)

// scriptProvider replays a script file deterministically.
//
// Each request role has its own cursor: a call takes the first entry at or
// after the role's cursor whose role matches (see roleMatches) and moves
// the cursor past it. Roles therefore do not disturb each other, however
// concurrent calls interleave, and two personas of one reviewer role each
// see every entry written for the bare role. The file is read once, by New.
//
// Without Config.ScriptStateFile the cursors live in memory and a new
// Provider starts from the beginning. With it, the cursors are kept in that
// file (JSON {"version": 1, "cursors": {"planner": 2}}), updated atomically
// under a lock on "<file>.lock" at every call, so successive orch processes
// continue the script. Delete the state file to start over.
//
// Answers carry the usage the script gives (none by default); OnToken,
// when set, receives the whole text once. Scripted tool calls are replayed
// as the model's (see scriptfile.go), so the provider speaks tool calling.
type scriptProvider struct {
	name      string
	file      string
	stateFile string
	entries   []scriptEntry
	opts      options

	mu      sync.Mutex
	cursors map[string]int // used without a state file
}

func newScript(cfg Config, name string, o options) (Provider, error) {
	if cfg.ScriptFile == "" {
		return nil, &ConfigError{Provider: name, Msg: "script provider has no script file"}
	}
	data, err := os.ReadFile(cfg.ScriptFile)
	if err != nil {
		return nil, &ConfigError{Provider: name, Msg: fmt.Sprintf("read script: %v", err)}
	}
	entries, err := decodeScript(data)
	if err != nil {
		return nil, &ConfigError{Provider: name, Msg: fmt.Sprintf("script %s: %v", cfg.ScriptFile, err)}
	}
	return &scriptProvider{
		name:      name,
		file:      cfg.ScriptFile,
		stateFile: cfg.ScriptStateFile,
		entries:   entries,
		opts:      o,
		cursors:   map[string]int{},
	}, nil
}

func (p *scriptProvider) Name() string { return p.name }

func (p *scriptProvider) Complete(ctx context.Context, req Request) (Response, error) {
	if err := ctx.Err(); err != nil {
		return Response{}, fmt.Errorf("provider %s: call abandoned: %w", p.name, context.Cause(ctx))
	}
	start := p.opts.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	var (
		e   scriptEntry
		err error
	)
	if p.stateFile == "" {
		e, err = p.take(p.cursors, req.Role)
	} else {
		e, err = p.takePersistent(ctx, req.Role)
	}
	if err != nil {
		return Response{}, err
	}
	if len(e.ToolCalls) > 0 && len(req.Tools) == 0 {
		return Response{}, &ProtocolError{Provider: p.name, Msg: fmt.Sprintf("script %s: the next entry for role %q calls tools (%s) but the request offers none", p.file, req.Role, e.ToolCalls[0].Name)}
	}
	if req.OnToken != nil && e.Text != "" {
		req.OnToken(e.Text)
	}
	model := req.Model
	if model == "" {
		model = "script"
	}
	return Response{
		Text:       e.Text,
		Usage:      e.Usage,
		Model:      model,
		Provider:   p.name,
		StopReason: e.StopReason,
		Latency:    p.opts.now().Sub(start),
		ToolCalls:  append([]ToolCall(nil), e.ToolCalls...),
	}, nil
}

// SupportsTools reports whether the script replays tool calls: a script
// whose entries are only answers stands for a model without tool calling
// (agents then ask for one structured answer, as with command protocol 1).
func (p *scriptProvider) SupportsTools() bool {
	for _, e := range p.entries {
		if len(e.ToolCalls) > 0 {
			return true
		}
	}
	return false
}

// take returns the next entry for role and advances its cursor in cursors.
func (p *scriptProvider) take(cursors map[string]int, role string) (scriptEntry, error) {
	start := max(cursors[role], 0)
	for i := start; i < len(p.entries); i++ {
		if roleMatches(p.entries[i].Role, role) {
			cursors[role] = i + 1
			return p.entries[i], nil
		}
	}
	used := 0
	for i := 0; i < start && i < len(p.entries); i++ {
		if roleMatches(p.entries[i].Role, role) {
			used++
		}
	}
	return scriptEntry{}, &ScriptExhaustedError{Provider: p.name, File: p.file, Role: role, Used: used}
}

// scriptState is the state file's content.
type scriptState struct {
	Version int            `json:"version"`
	Cursors map[string]int `json:"cursors"`
}

const (
	scriptStateVersion = 1
	scriptLockRetry    = 10 * time.Millisecond
)

func (p *scriptProvider) takePersistent(ctx context.Context, role string) (scriptEntry, error) {
	lock := flock.New(p.stateFile + ".lock")
	locked, err := lock.TryLockContext(ctx, scriptLockRetry)
	if err != nil || !locked {
		if ctx.Err() != nil {
			return scriptEntry{}, fmt.Errorf("provider %s: call abandoned while waiting for %s: %w", p.name, lock.Path(), context.Cause(ctx))
		}
		return scriptEntry{}, fmt.Errorf("provider %s: lock %s: %w", p.name, lock.Path(), err)
	}
	defer func() { _ = lock.Unlock() }()

	st, err := readScriptState(p.stateFile)
	if err != nil {
		return scriptEntry{}, fmt.Errorf("provider %s: %w", p.name, err)
	}
	e, err := p.take(st.Cursors, role)
	if err != nil {
		return scriptEntry{}, err
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return scriptEntry{}, fmt.Errorf("provider %s: encode script state: %w", p.name, err)
	}
	if err := durable.WriteFile(p.stateFile, append(data, '\n'), 0o644); err != nil {
		return scriptEntry{}, fmt.Errorf("provider %s: save script state: %w", p.name, err)
	}
	return e, nil
}

// readScriptState reads a state file; a missing file is a fresh start.
func readScriptState(path string) (scriptState, error) {
	st := scriptState{Version: scriptStateVersion, Cursors: map[string]int{}}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("read script state: %w", err)
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return st, fmt.Errorf("script state %s is not valid JSON (delete it to start the script over): %w", path, err)
	}
	if st.Version != scriptStateVersion {
		return st, fmt.Errorf("script state %s has version %d, expected %d (delete it to start the script over)", path, st.Version, scriptStateVersion)
	}
	if st.Cursors == nil {
		st.Cursors = map[string]int{}
	}
	return st, nil
}
