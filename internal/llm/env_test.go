package llm

import (
	"context"
	"errors"
	"github.com/orchdev/orch/internal/exit"
	"strings"
	"testing"
)

func TestFromEnvironment(t *testing.T) {
	for _, tc := range []struct {
		name     string
		env      []string
		want     Config
		noteHas  []string
		wantErr  error
		errHas   string
		keyCheck bool // New must then succeed with the same environment
	}{
		{
			name:     "anthropic",
			env:      []string{"ANTHROPIC_API_KEY", testKey},
			want:     Config{Type: TypeAnthropic, Name: "anthropic", Model: DefaultAnthropicModel, APIKeyEnv: "ANTHROPIC_API_KEY"},
			noteHas:  []string{"anthropic", "ANTHROPIC_API_KEY is set", "orch's default; set ANTHROPIC_MODEL to choose another"},
			keyCheck: true,
		},
		{
			name:     "anthropic model from ANTHROPIC_MODEL",
			env:      []string{"ANTHROPIC_API_KEY", testKey, "ANTHROPIC_MODEL", "claude-opus-5-5", "OPENAI_MODEL", "gpt-5.4"},
			want:     Config{Type: TypeAnthropic, Name: "anthropic", Model: "claude-opus-5-5", APIKeyEnv: "ANTHROPIC_API_KEY"},
			noteHas:  []string{"model claude-opus-5-5, from ANTHROPIC_MODEL"},
			keyCheck: true,
		},
		{
			name:     "openai model from OPENAI_MODEL",
			env:      []string{"OPENAI_API_KEY", testKey, "OPENAI_MODEL", "gpt-5.4-mini"},
			want:     Config{Type: TypeOpenAI, Name: "openai", Model: "gpt-5.4-mini", APIKeyEnv: "OPENAI_API_KEY"},
			noteHas:  []string{"model gpt-5.4-mini, from OPENAI_MODEL"},
			keyCheck: true,
		},
		{
			name:     "anthropic wins over openai and says so",
			env:      []string{"ANTHROPIC_API_KEY", testKey, "OPENAI_API_KEY", testKey},
			want:     Config{Type: TypeAnthropic, Name: "anthropic", Model: DefaultAnthropicModel, APIKeyEnv: "ANTHROPIC_API_KEY"},
			noteHas:  []string{"OPENAI_API_KEY also set but not used"},
			keyCheck: true,
		},
		{
			name:     "anthropic base URL",
			env:      []string{"ANTHROPIC_API_KEY", testKey, "ANTHROPIC_BASE_URL", "https://gateway.example/anthropic"},
			want:     Config{Type: TypeAnthropic, Name: "anthropic", Model: DefaultAnthropicModel, APIKeyEnv: "ANTHROPIC_API_KEY", BaseURL: "https://gateway.example/anthropic"},
			noteHas:  []string{"ANTHROPIC_BASE_URL https://gateway.example/anthropic"},
			keyCheck: true,
		},
		{
			name:     "openai",
			env:      []string{"OPENAI_API_KEY", testKey},
			want:     Config{Type: TypeOpenAI, Name: "openai", Model: DefaultOpenAIModel, APIKeyEnv: "OPENAI_API_KEY"},
			noteHas:  []string{"the OpenAI API", "OPENAI_API_KEY is set"},
			keyCheck: true,
		},
		{
			name:     "openai-compatible base URL",
			env:      []string{"OPENAI_API_KEY", testKey, "OPENAI_BASE_URL", "https://openrouter.ai/api/v1"},
			want:     Config{Type: TypeOpenAI, Name: "openai", Model: DefaultOpenAIModel, APIKeyEnv: "OPENAI_API_KEY", BaseURL: "https://openrouter.ai/api/v1"},
			noteHas:  []string{"OPENAI_BASE_URL https://openrouter.ai/api/v1"},
			keyCheck: true,
		},
		{
			name:     "openai wins over ollama",
			env:      []string{"OPENAI_API_KEY", testKey, "OLLAMA_HOST", "localhost"},
			want:     Config{Type: TypeOpenAI, Name: "openai", Model: DefaultOpenAIModel, APIKeyEnv: "OPENAI_API_KEY"},
			noteHas:  []string{"OLLAMA_HOST also set"},
			keyCheck: true,
		},
		{
			name:     "ollama host and port",
			env:      []string{"OLLAMA_HOST", "127.0.0.1:11434"},
			want:     Config{Type: TypeOpenAI, Name: "ollama", BaseURL: "http://127.0.0.1:11434/v1", Model: DefaultOllamaModel},
			noteHas:  []string{"ollama", "no key", "OLLAMA_HOST is set"},
			keyCheck: true,
		},
		{
			name: "ollama bare host",
			env:  []string{"OLLAMA_HOST", "gpu-box"},
			want: Config{Type: TypeOpenAI, Name: "ollama", BaseURL: "http://gpu-box:11434/v1", Model: DefaultOllamaModel},
		},
		{
			name: "ollama bind address",
			env:  []string{"OLLAMA_HOST", "0.0.0.0"},
			want: Config{Type: TypeOpenAI, Name: "ollama", BaseURL: "http://127.0.0.1:11434/v1", Model: DefaultOllamaModel},
		},
		{
			name: "ollama URL with path",
			env:  []string{"OLLAMA_HOST", "https://ollama.internal/proxy/"},
			want: Config{Type: TypeOpenAI, Name: "ollama", BaseURL: "https://ollama.internal/proxy/v1", Model: DefaultOllamaModel},
		},
		{
			name: "ollama IPv6",
			env:  []string{"OLLAMA_HOST", "[::1]:8080"},
			want: Config{Type: TypeOpenAI, Name: "ollama", BaseURL: "http://[::1]:8080/v1", Model: DefaultOllamaModel},
		},
		{
			name:   "ollama bad scheme",
			env:    []string{"OLLAMA_HOST", "ftp://host"},
			errHas: "OLLAMA_HOST",
		},
		{
			name:    "blank values do not count",
			env:     []string{"ANTHROPIC_API_KEY", "  ", "OPENAI_API_KEY", ""},
			wantErr: ErrNoProvider,
			errHas:  "set ANTHROPIC_API_KEY or OPENAI_API_KEY",
		},
		{
			name:    "nothing",
			wantErr: ErrNoProvider,
			errHas:  "OLLAMA_HOST",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			getenv := env(tc.env...)
			cfg, note, err := FromEnvironment(getenv)
			if tc.errHas != "" {
				if err == nil || !strings.Contains(exit.Format(err), tc.errHas) {
					t.Fatalf("error %v, want one containing %q", err, tc.errHas)
				}
				if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
					t.Errorf("error %v does not match %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Type != tc.want.Type || cfg.Name != tc.want.Name || cfg.BaseURL != tc.want.BaseURL ||
				cfg.Model != tc.want.Model || cfg.APIKeyEnv != tc.want.APIKeyEnv {
				t.Errorf("config\n got %+v\nwant %+v", cfg, tc.want)
			}
			for _, s := range tc.noteHas {
				if !strings.Contains(note, s) {
					t.Errorf("note %q lacks %q", note, s)
				}
			}
			if strings.Contains(note, testKey) {
				t.Errorf("note contains the key: %q", note)
			}
			if tc.keyCheck {
				if _, err := New(cfg, getenv); err != nil {
					t.Errorf("New with the chosen config: %v", err)
				}
			}
		})
	}
}

func TestNewConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cfg    Config
		env    []string
		errHas string
		isKey  bool
	}{
		{"missing openai key", Config{Type: TypeOpenAI}, nil,
			"orch: provider openai: environment variable OPENAI_API_KEY is not set", true},
		{"missing anthropic key", Config{Type: TypeAnthropic, Name: "claude"}, nil,
			"orch: provider claude: environment variable ANTHROPIC_API_KEY is not set", true},
		{"missing named key", Config{Type: TypeOpenAI, BaseURL: "http://localhost:8000/v1", APIKeyEnv: "VLLM_KEY"}, nil,
			"environment variable VLLM_KEY is not set", true},
		{"unknown type", Config{Type: "gemini"}, nil, `unknown provider type "gemini"`, false},
		{"no type", Config{}, nil, "no provider type", false},
		{"bad base URL", Config{Type: TypeOpenAI, BaseURL: "localhost:8000"}, nil, "not an http(s) URL", false},
		{"bad anthropic base URL", Config{Type: TypeAnthropic, BaseURL: "ftp://x"}, []string{"ANTHROPIC_API_KEY", testKey}, "not an http(s) URL", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.cfg, env(tc.env...))
			if err == nil || !strings.Contains(exit.Format(err), tc.errHas) {
				t.Fatalf("error %v, want one containing %q", err, tc.errHas)
			}
			var ke *KeyError
			if errors.As(err, &ke) != tc.isKey {
				t.Errorf("error %T, *KeyError wanted: %t", err, tc.isKey)
			}
			assertNoKey(t, err)
		})
	}
}

func TestChooseModel(t *testing.T) {
	for _, tc := range []struct {
		cfg      Config
		env      []string
		want     ModelChoice
		noteHas  string
		provider string
	}{
		{Config{Type: TypeOpenAI, Model: "gpt-5.4"}, []string{"OPENAI_MODEL", "gpt-5.5"}, ModelChoice{Model: "gpt-5.4", Source: "configuration"}, "model gpt-5.4, as configured", "openai"},
		{Config{Type: TypeOpenAI}, []string{"OPENAI_MODEL", " gpt-5.4-nano "}, ModelChoice{Model: "gpt-5.4-nano", Source: "OPENAI_MODEL", env: "OPENAI_MODEL"}, "from OPENAI_MODEL (the configuration names no model)", "openai"},
		{Config{Type: TypeOpenAI}, []string{"ANTHROPIC_MODEL", "claude-haiku-4-5"}, ModelChoice{Model: DefaultOpenAIModel, Source: "default", env: "OPENAI_MODEL"}, "orch's default (set the provider's model in .orch/config.toml, or OPENAI_MODEL", "openai"},
		{Config{Type: TypeAnthropic}, []string{"ANTHROPIC_MODEL", "claude-haiku-4-5"}, ModelChoice{Model: "claude-haiku-4-5", Source: "ANTHROPIC_MODEL", env: "ANTHROPIC_MODEL"}, "from ANTHROPIC_MODEL", "claude"},
		{Config{Type: TypeCommand}, []string{"OPENAI_MODEL", "x"}, ModelChoice{Source: "configuration"}, "", "local"},
	} {
		got := ChooseModel(tc.cfg, env(tc.env...))
		if got != tc.want {
			t.Errorf("%+v with %v: %+v, want %+v", tc.cfg, tc.env, got, tc.want)
		}
		note := got.Note(tc.provider)
		if tc.noteHas == "" && note != "" || !strings.Contains(note, tc.noteHas) {
			t.Errorf("note %q, want it to contain %q", note, tc.noteHas)
		}
	}
	// New uses the environment's model when the configuration has none.
	api := newFakeAPI(t, jsonAnswer(t, 200, "openai/chat_text.json"))
	p, err := New(Config{Type: TypeOpenAI, BaseURL: api.srv.URL}, env("OPENAI_MODEL", "gpt-5.4-mini"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Complete(context.Background(), basicRequest()); err != nil {
		t.Fatal(err)
	}
	if m := api.received()[0].Body["model"]; m != "gpt-5.4-mini" {
		t.Errorf("model sent %v, want OPENAI_MODEL's", m)
	}
}
