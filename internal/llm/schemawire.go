package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// defaultSchemaName names a structured answer when the request does not.
const defaultSchemaName = "answer"

// schemaName makes name acceptable as an OpenAI response_format name and an
// Anthropic tool name: [a-zA-Z0-9_-], at most 64 characters.
func schemaName(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		if b.Len() >= 64 {
			break
		}
	}
	if b.Len() == 0 {
		return defaultSchemaName
	}
	return b.String()
}

// objectSchema decodes a request's schema, which must describe a JSON
// object (both APIs require that of a structured answer).
func objectSchema(provider string, raw json.RawMessage) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var schema map[string]any
	if err := dec.Decode(&schema); err != nil || schema == nil {
		return nil, &ConfigError{Provider: provider, Msg: fmt.Sprintf("request schema is not a JSON object: %v", err)}
	}
	if dec.More() {
		return nil, &ConfigError{Provider: provider, Msg: "request schema has data after the JSON object"}
	}
	if t, ok := schema["type"]; ok && t != "object" {
		return nil, &ConfigError{Provider: provider, Msg: fmt.Sprintf("request schema describes %v; a structured answer must be an object", t)}
	}
	return schema, nil
}

// strictCompatible reports whether schema is in OpenAI's strict subset as
// far as orch's schemas go: every object lists all its properties as
// required and sets additionalProperties to false.
func strictCompatible(schema any) bool {
	switch s := schema.(type) {
	case map[string]any:
		if !hasAnyKey(s, "type", "anyOf", "$ref", "enum", "const") {
			// An unconstrained value ({}) is outside the strict subset.
			return false
		}
		if props, ok := s["properties"].(map[string]any); ok {
			if s["additionalProperties"] != false {
				return false
			}
			required := map[string]bool{}
			if list, ok := s["required"].([]any); ok {
				for _, r := range list {
					if name, ok := r.(string); ok {
						required[name] = true
					}
				}
			}
			for name, sub := range props {
				if !required[name] || !strictCompatible(sub) {
					return false
				}
			}
		} else if typeIncludes(s["type"], "object") {
			// An object without properties cannot be strict.
			return false
		}
		for _, key := range []string{"items", "additionalProperties"} {
			if sub, ok := s[key].(map[string]any); ok && !strictCompatible(sub) {
				return false
			}
		}
		for _, key := range []string{"anyOf", "allOf", "oneOf"} {
			if list, ok := s[key].([]any); ok {
				for _, sub := range list {
					if !strictCompatible(sub) {
						return false
					}
				}
			}
		}
		return true
	case bool:
		return false
	default:
		return true
	}
}

func typeIncludes(t any, want string) bool {
	switch v := t.(type) {
	case string:
		return v == want
	case []any:
		return slices.Contains(v, any(want))
	}
	return false
}

func hasAnyKey(m map[string]any, keys ...string) bool {
	for _, k := range keys {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}
