package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Message roles.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	// RoleTool carries the result of one tool call back to the model;
	// ToolCallID names the call it answers.
	RoleTool = "tool"
)

// Message is one turn of the conversation sent to a model.
type Message struct {
	Role    string `json:"role"` // system, user, assistant or tool
	Content string `json:"content"`
	// ToolCalls are the calls an assistant turn asked for, in order.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID is, for a RoleTool message, the ID of the call answered.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// IsError marks a RoleTool result that reports a refused or failed
	// call (the model reads it and may correct itself).
	IsError bool `json:"is_error,omitempty"`
	// CacheBreakpoint marks the end of a prefix worth caching across calls
	// (the repository map, the plan). Anthropic gets cache_control on this
	// message's last block; providers without explicit caching ignore it.
	CacheBreakpoint bool `json:"cache_breakpoint,omitempty"`
	// ProviderState is, on an assistant turn, what the provider needs back
	// unchanged with it (Anthropic's thinking blocks, which must precede
	// the tool calls they led to); copy it from Response.ProviderState, or
	// use Response.AssistantMessage. Other providers ignore it.
	ProviderState json.RawMessage `json:"provider_state,omitempty"`
}

// Tool is a function the model may call during a request.
type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Parameters is the JSON schema (an object) of the call's arguments.
	Parameters json.RawMessage `json:"parameters"`
}

// ToolCall is one call the model asked for.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is a JSON object; when a model sent arguments that are not
	// one (malformed JSON, a cut-off answer), a JSON string holding what it
	// sent, so that decoding fails and the model can be told why.
	Arguments json.RawMessage `json:"arguments"`
}

// Request is one call to a model.
type Request struct {
	// Role is the orch role making the call: planner,
	// plan_reviewer:<persona>, codegen, code_reviewer:<persona>,
	// accept_advisor. Providers use it for logging and scripted replay;
	// it is not sent to HTTP APIs.
	Role string
	// Model overrides the provider's configured model when not empty.
	Model    string
	Messages []Message
	// Schema is a JSON schema for a structured answer; nil asks for free
	// text. HTTP providers require its root to be an object.
	Schema json.RawMessage
	// SchemaName names the structured answer (for example "plan"); it is
	// used as the tool name or response_format name. Default "answer".
	SchemaName string
	// MaxTokens caps the answer's length; 0 means the provider default.
	MaxTokens   int
	Temperature *float64
	// Tools the model may call; empty means none. A provider that does
	// not speak tool calling (ToolCaller reports false) refuses a request
	// with tools.
	Tools []Tool
	// CacheKey groups requests that share a prompt prefix (OpenAI's
	// prompt_cache_key); empty means none.
	CacheKey string
	// ReasoningEffort for reasoning models ("low", "medium", "high");
	// empty means the provider default.
	ReasoningEffort string
	// OnToken, when not nil, receives the answer's text as it streams, in
	// order. For a structured answer it receives fragments of the JSON.
	// It is called from the goroutine running Complete.
	OnToken func(string)
}

// Usage counts the tokens a call consumed, as reported by the provider.
type Usage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	// CachedInputTokens is the part of InputTokens read from the
	// provider's prompt cache; CacheWriteTokens the part written to it.
	CachedInputTokens int64 `json:"cached_input_tokens,omitempty"`
	CacheWriteTokens  int64 `json:"cache_write_tokens,omitempty"`
}

// Response is a model's answer.
type Response struct {
	// Text is the raw answer, or the JSON of a structured answer.
	Text       string
	Usage      Usage
	Model      string // the model that answered, as reported
	Provider   string // the provider's Name
	StopReason string // as reported: stop, length, end_turn, tool_use, ...
	Latency    time.Duration
	// ToolCalls the model asked for; empty when it answered in text.
	ToolCalls []ToolCall
	// ProviderState is opaque content of the answer to send back with it
	// in the next turn of a tool loop (see Message.ProviderState).
	ProviderState json.RawMessage
}

// AssistantMessage is the answer as the assistant turn of a continued
// conversation: its text, tool calls and provider state.
func (r Response) AssistantMessage() Message {
	return Message{Role: RoleAssistant, Content: r.Text, ToolCalls: r.ToolCalls, ProviderState: r.ProviderState}
}

// Truncated reports whether the answer was cut off by the output limit
// (OpenAI finish_reason "length", Anthropic stop_reason "max_tokens").
func (r Response) Truncated() bool {
	return r.StopReason == "length" || r.StopReason == "max_tokens"
}

// ToolCaller is implemented by providers that can be asked whether they
// speak tool calling; a provider that does not implement it does not.
type ToolCaller interface {
	SupportsTools() bool
}

// SupportsTools reports whether p speaks tool calling.
func SupportsTools(p Provider) bool {
	tc, ok := p.(ToolCaller)
	return ok && tc.SupportsTools()
}

// Provider is a source of model answers. Implementations are safe for
// concurrent use.
type Provider interface {
	Name() string
	Complete(ctx context.Context, req Request) (Response, error)
}

// Provider types accepted in Config.Type.
const (
	TypeOpenAI    = "openai"
	TypeAnthropic = "anthropic"
	TypeCommand   = "command"
	TypeScript    = "script"
)

// Defaults applied by New.
const (
	DefaultTimeout    = 5 * time.Minute
	DefaultMaxRetries = 3
)

// Config describes one provider.
type Config struct {
	Type string // openai, anthropic, command or script
	// Name labels the provider in errors and responses; default Type.
	Name string
	// BaseURL of an HTTP API; empty means the vendor's public endpoint.
	BaseURL string
	// Model used when a Request does not name one; empty means
	// OPENAI_MODEL or ANTHROPIC_MODEL, else orch's default (ChooseModel).
	Model string
	// APIKeyEnv is the NAME of the environment variable holding the key,
	// never the key itself. For anthropic it defaults to
	// ANTHROPIC_API_KEY; for openai without a BaseURL to OPENAI_API_KEY;
	// an openai-compatible server with a BaseURL and no APIKeyEnv is
	// called without a key (Ollama, a local vLLM).
	APIKeyEnv string
	// Command is the argv of a command provider.
	Command []string
	// Tools says whether an openai or anthropic provider is asked to call
	// tools; nil means true, for every base URL. A server that refuses
	// tools (Ollama, vLLM and LM Studio speak tool calling only with some
	// models) answers a *ToolsRefusedError, from which the agents fall
	// back to single answers. A command provider speaks tools with
	// protocol 2, a script provider when its script replays tool calls.
	Tools *bool
	// CommandProtocol is the version of the command protocol the command
	// speaks: 1 (the default when 0) or 2 (tool calling).
	CommandProtocol int
	// ScriptFile is the JSON file a script provider replays.
	ScriptFile string
	// ScriptStateFile, when set, keeps the script cursors on disk so that
	// successive orch processes continue the script instead of starting
	// over.
	ScriptStateFile string
	// Timeout bounds one Complete call, retries included; 0 means
	// DefaultTimeout.
	Timeout time.Duration
	// MaxRetries bounds the retries of an HTTP call; 0 means
	// DefaultMaxRetries, a negative value disables retries.
	MaxRetries int
}

// New builds the provider cfg describes. getenv looks up environment
// variables (os.Getenv in production); an API key is resolved here, once,
// and a missing key is a *KeyError naming the variable.
func New(cfg Config, getenv func(string) string, opts ...Option) (Provider, error) {
	if getenv == nil {
		return nil, &ConfigError{Provider: cfg.Type, Msg: "no environment lookup function given"}
	}
	o := buildOptions(opts)
	name := cfg.Name
	if name == "" {
		name = cfg.Type
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	retries := cfg.MaxRetries
	switch {
	case retries == 0:
		retries = DefaultMaxRetries
	case retries < 0:
		retries = 0
	}
	switch cfg.Type {
	case TypeOpenAI, TypeAnthropic:
		cfg.Model = ChooseModel(cfg, getenv).Model
		keyEnv := defaultKeyEnv(cfg)
		key := ""
		if keyEnv != "" {
			key = getenv(keyEnv)
			if key == "" {
				return nil, &KeyError{Provider: name, EnvVar: keyEnv}
			}
		}
		core := &httpCore{
			name: name, keyEnv: keyEnv, key: key,
			timeout: timeout, maxRetries: retries, opts: o,
		}
		if cfg.Type == TypeOpenAI {
			return newOpenAI(cfg, core)
		}
		return newAnthropic(cfg, core)
	case TypeCommand:
		return newCommand(cfg, name, timeout, o)
	case TypeScript:
		return newScript(cfg, name, o)
	case "":
		return nil, &ConfigError{Provider: name, Msg: "no provider type given; use openai, anthropic, command or script"}
	default:
		return nil, &ConfigError{Provider: name, Msg: fmt.Sprintf("unknown provider type %q; use openai, anthropic, command or script", cfg.Type)}
	}
}

// defaultKeyEnv returns the environment variable holding cfg's key, or ""
// when the provider is called without one.
func defaultKeyEnv(cfg Config) string {
	if cfg.APIKeyEnv != "" {
		return cfg.APIKeyEnv
	}
	switch cfg.Type {
	case TypeAnthropic:
		return "ANTHROPIC_API_KEY"
	case TypeOpenAI:
		if cfg.BaseURL == "" {
			return "OPENAI_API_KEY"
		}
	}
	return ""
}
