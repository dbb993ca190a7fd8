package llm

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// DefaultOllamaModel is used for an Ollama server found through OLLAMA_HOST
// when no model is configured.
const DefaultOllamaModel = "llama3.2"

const ollamaDefaultPort = "11434"

// FromEnvironment picks a provider from well-known environment variables,
// in this order:
//
//  1. ANTHROPIC_API_KEY set: anthropic.
//  2. OPENAI_API_KEY set: openai, at OPENAI_BASE_URL when that is set.
//  3. OLLAMA_HOST set: openai type at <host>/v1, no key needed.
//
// The note says which was chosen and why, for the user. Nothing matching is
// an error wrapping ErrNoProvider that says how to configure one. The
// returned Config names key variables, never keys.
func FromEnvironment(getenv func(string) string) (Config, string, error) {
	set := func(name string) bool { return strings.TrimSpace(getenv(name)) != "" }
	var others []string
	for _, name := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OLLAMA_HOST"} {
		if set(name) {
			others = append(others, name)
		}
	}
	ignored := func(chosen string) string {
		var rest []string
		for _, o := range others {
			if o != chosen {
				rest = append(rest, o)
			}
		}
		if len(rest) == 0 {
			return ""
		}
		return fmt.Sprintf("; %s also set but not used (configure a provider in .orch/config.toml to choose)", strings.Join(rest, ", "))
	}

	switch {
	case set("ANTHROPIC_API_KEY"):
		cfg := Config{Type: TypeAnthropic, Name: TypeAnthropic, APIKeyEnv: "ANTHROPIC_API_KEY"}
		choice := ChooseModel(cfg, getenv)
		cfg.Model = choice.Model
		if base := strings.TrimSpace(getenv("ANTHROPIC_BASE_URL")); base != "" {
			cfg.BaseURL = base
		}
		note := fmt.Sprintf("using provider anthropic (model %s, %s) because ANTHROPIC_API_KEY is set", cfg.Model, modelWhy(choice, EnvAnthropicModel))
		if cfg.BaseURL != "" {
			note += fmt.Sprintf(", at ANTHROPIC_BASE_URL %s", cfg.BaseURL)
		}
		return cfg, note + ignored("ANTHROPIC_API_KEY"), nil

	case set("OPENAI_API_KEY"):
		cfg := Config{Type: TypeOpenAI, Name: TypeOpenAI, APIKeyEnv: "OPENAI_API_KEY"}
		choice := ChooseModel(cfg, getenv)
		cfg.Model = choice.Model
		where := "the OpenAI API"
		if base := strings.TrimSpace(getenv("OPENAI_BASE_URL")); base != "" {
			cfg.BaseURL = base
			where = "OPENAI_BASE_URL " + base
		}
		note := fmt.Sprintf("using provider openai (model %s, %s) at %s because OPENAI_API_KEY is set", cfg.Model, modelWhy(choice, EnvOpenAIModel), where)
		return cfg, note + ignored("OPENAI_API_KEY"), nil

	case set("OLLAMA_HOST"):
		raw := strings.TrimSpace(getenv("OLLAMA_HOST"))
		base, err := ollamaBaseURL(raw)
		if err != nil {
			return Config{}, "", fmt.Errorf("OLLAMA_HOST=%q: %w", raw, err)
		}
		cfg := Config{Type: TypeOpenAI, Name: "ollama", BaseURL: base, Model: DefaultOllamaModel}
		why := "orch's default for Ollama"
		if m := strings.TrimSpace(getenv(EnvOpenAIModel)); m != "" {
			cfg.Model, why = m, "from "+EnvOpenAIModel
		}
		note := fmt.Sprintf("using provider ollama (OpenAI-compatible API at %s, model %s, %s, no key) because OLLAMA_HOST is set; set the model in .orch/config.toml or %s if %s is not pulled",
			base, cfg.Model, why, EnvOpenAIModel, cfg.Model)
		return cfg, note, nil
	}
	return Config{}, "", fmt.Errorf("%w: set ANTHROPIC_API_KEY or OPENAI_API_KEY (with OPENAI_BASE_URL for another OpenAI-compatible server), "+
		"or OLLAMA_HOST for a local Ollama; or configure a provider in .orch/config.toml (a command or script provider needs no key)", ErrNoProvider)
}

// modelWhy says where a model chosen from the environment came from;
// env is the variable that would name another.
func modelWhy(c ModelChoice, env string) string {
	if c.Source == "default" {
		return fmt.Sprintf("orch's default; set %s to choose another", env)
	}
	return "from " + c.Source
}

// ollamaBaseURL turns OLLAMA_HOST (as the ollama CLI accepts it: "host",
// "host:port", "scheme://host:port", possibly the bind address 0.0.0.0)
// into the base URL of its OpenAI-compatible API.
func ollamaBaseURL(raw string) (string, error) {
	s := raw
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("not a host or URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("scheme %q is not http or https", u.Scheme)
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		return "", fmt.Errorf("no host")
	}
	switch host {
	case "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	switch {
	case port != "":
		u.Host = net.JoinHostPort(host, port)
	case u.Scheme == "https":
		// The standard port, as the ollama CLI assumes.
		u.Host = host
		if strings.Contains(host, ":") {
			u.Host = "[" + host + "]"
		}
	default:
		u.Host = net.JoinHostPort(host, ollamaDefaultPort)
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/v1"
	u.RawQuery, u.Fragment, u.User = "", "", nil
	return u.String(), nil
}
