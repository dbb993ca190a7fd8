package llm

import (
	"fmt"
	"strings"
)

// Environment variables naming a model when the configuration names none.
const (
	EnvOpenAIModel    = "OPENAI_MODEL"
	EnvAnthropicModel = "ANTHROPIC_MODEL"
)

// ModelChoice is the model a provider uses and why.
type ModelChoice struct {
	Model string
	// Source is where the model came from: "configuration", the name of
	// the environment variable, or "default" (orch's default model).
	Source string
	env    string // the variable that would name another model
}

// ChooseModel resolves the model of an openai or anthropic provider: the
// configuration's model; else OPENAI_MODEL or ANTHROPIC_MODEL (for the
// provider's type); else orch's default for the type (DefaultOllamaModel
// for a provider named "ollama" found through OLLAMA_HOST). Other types
// have the configuration's model, possibly "".
func ChooseModel(cfg Config, getenv func(string) string) ModelChoice {
	if cfg.Model != "" {
		return ModelChoice{Model: cfg.Model, Source: "configuration"}
	}
	env, def := "", ""
	switch cfg.Type {
	case TypeOpenAI:
		env, def = EnvOpenAIModel, DefaultOpenAIModel
	case TypeAnthropic:
		env, def = EnvAnthropicModel, DefaultAnthropicModel
	default:
		return ModelChoice{Source: "configuration"}
	}
	if getenv != nil {
		if m := strings.TrimSpace(getenv(env)); m != "" {
			return ModelChoice{Model: m, Source: env, env: env}
		}
	}
	return ModelChoice{Model: def, Source: "default", env: env}
}

// Note says which model was chosen and why, for the user; "" for a
// provider without a model (command, script).
func (c ModelChoice) Note(provider string) string {
	switch {
	case c.Model == "":
		return ""
	case c.Source == "configuration":
		return fmt.Sprintf("provider %s: model %s, as configured", provider, c.Model)
	case c.Source == EnvOpenAIModel || c.Source == EnvAnthropicModel:
		return fmt.Sprintf("provider %s: model %s, from %s (the configuration names no model)", provider, c.Model, c.Source)
	default:
		return fmt.Sprintf("provider %s: model %s, orch's default (set the provider's model in .orch/config.toml, or %s, to choose another)", provider, c.Model, c.env)
	}
}
