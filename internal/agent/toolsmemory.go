package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/orchdev/orch/internal/durable"
	"github.com/orchdev/orch/internal/llm"
)

// Tool calling is offered to every provider that may speak it (README,
// "Agents: tools, edits and context"); a server that refuses it answers
// *llm.ToolsRefusedError. The refusal is remembered in orch's cache
// (~/.cache/orch/tools-refused.json), keyed by the provider's type, base
// URL (or command) and model, so that later runs, in any repository, ask
// that server for single answers from the start; it is said once, on
// stderr, when it is found.

// toolsRefusedFile is the memory's file name in the user cache folder.
const toolsRefusedFile = "tools-refused.json"

// toolsRefusal is one remembered refusal.
type toolsRefusal struct {
	Provider string    `json:"provider"`
	Message  string    `json:"message"`
	At       time.Time `json:"at"`
}

// toolsKey names what a refusal belongs to: the server (base URL, or the
// command) and the model, never a key.
func toolsKey(cfg llm.Config, model string) string {
	if model == "" {
		model = cfg.Model
	}
	where := cfg.BaseURL
	switch {
	case cfg.Type == llm.TypeCommand:
		where = strings.Join(cfg.Command, " ")
	case where == "" && cfg.Type == llm.TypeOpenAI:
		where = llm.DefaultOpenAIBaseURL
	}
	return cfg.Type + " " + strings.TrimSuffix(where, "/") + " " + model
}

// toolsMemoryPath is the memory's file, "" when there is no user cache
// folder (the refusal is then remembered for this process only).
func (rt *Runtime) toolsMemoryPath() string {
	if rt.UserCache == "" {
		return ""
	}
	return filepath.Join(rt.UserCache, toolsRefusedFile)
}

// readToolsMemory reads the remembered refusals; a missing or unreadable
// file remembers none (tools are offered again, and refused again).
func (rt *Runtime) readToolsMemory() map[string]toolsRefusal {
	m := map[string]toolsRefusal{}
	if p := rt.toolsMemoryPath(); p != "" {
		if data, err := os.ReadFile(p); err == nil && len(data) < 1<<20 {
			_ = json.Unmarshal(data, &m)
		}
	}
	return m
}

// toolsRefused reports whether the server and model of cfg refused tools
// before (in this process or, as remembered, in another).
func (rt *Runtime) toolsRefused(cfg llm.Config, model string) bool {
	key := toolsKey(cfg, model)
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.refused[key] {
		return true
	}
	if _, ok := rt.readToolsMemory()[key]; ok {
		rt.refused[key] = true
		return true
	}
	return false
}

// rememberToolsRefused records a refusal of tools (in this process and in
// the user cache) and says it on stderr, once.
func (rt *Runtime) rememberToolsRefused(cfg llm.Config, model string, e *llm.ToolsRefusedError) {
	key := toolsKey(cfg, model)
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.refused[key] {
		return
	}
	rt.refused[key] = true
	mem := rt.readToolsMemory()
	mem[key] = toolsRefusal{Provider: cfg.Name, Message: e.Message, At: rt.Now().UTC()}
	where := "for this run"
	if p := rt.toolsMemoryPath(); p != "" {
		if data, err := json.MarshalIndent(mem, "", "  "); err == nil && os.MkdirAll(filepath.Dir(p), 0o755) == nil && durable.WriteFile(p, append(data, '\n'), 0o644) == nil {
			where = "in " + p + " (delete the entry to offer tools again)"
		}
	}
	w := rt.Stderr
	if w == nil {
		w = os.Stderr
	}
	fmt.Fprintf(w, "orch: %s (%s) refused tool calling: %s\norch: its roles now answer once each, without tools; remembered %s; set tools = false in its configuration to say so up front\n",
		providerLabel(cfg), strings.TrimPrefix(key, cfg.Type+" "), e.Message, where)
}

// providerLabel names a provider for the user.
func providerLabel(cfg llm.Config) string {
	if cfg.Name != "" {
		return "provider " + cfg.Name
	}
	return "provider " + cfg.Type
}

// isToolsRefused reports whether err is a refusal of tool calling.
func isToolsRefused(err error) (*llm.ToolsRefusedError, bool) {
	var e *llm.ToolsRefusedError
	ok := errors.As(err, &e)
	return e, ok
}

// IsToolsRefused reports whether err is a provider's refusal of tool
// calling: the role may ask again without tools (the refusal is already
// remembered, so ToolsFor now answers false).
func IsToolsRefused(err error) bool {
	_, ok := isToolsRefused(err)
	return ok
}
