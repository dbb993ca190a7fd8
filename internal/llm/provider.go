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
)

// Message is one turn of the conversation sent to a model.
type Message struct {
	Role    string `json:"role"` // system, user or assistant
	Content string `json:"content"`
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
	// OnToken, when not nil, receives the answer's text as it streams, in
	// order. For a structured answer it receives fragments of the JSON.
	// It is called from the goroutine running Complete.
	OnToken func(string)
}

// Usage counts the tokens a call consumed, as reported by the provider.
type Usage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
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
	// Model used when a Request does not name one.
	Model string
	// APIKeyEnv is the NAME of the environment variable holding the key,
	// never the key itself. For anthropic it defaults to
	// ANTHROPIC_API_KEY; for openai without a BaseURL to OPENAI_API_KEY;
	// an openai-compatible server with a BaseURL and no APIKeyEnv is
	// called without a key (Ollama, a local vLLM).
	APIKeyEnv string
	// Command is the argv of a command provider.
	Command []string
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
