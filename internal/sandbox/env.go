package sandbox

import (
	"maps"
	"slices"
	"strings"
)

// SanitizeEnv returns env ("NAME=value" entries) without the variables a
// test suite must not see: names containing KEY, SECRET, TOKEN, PASSWORD,
// PASSWD or CREDENTIAL (case-insensitive), the model providers' OPENAI_*,
// ANTHROPIC_* and OLLAMA_* variables, and the SSH/GPG agent sockets. Names
// listed in allow (exact match) pass through anyway. Malformed entries
// (no '=' or an empty name) are dropped; when a name repeats, the last value
// wins and keeps the position of the first. The input is not modified.
func SanitizeEnv(env []string, allow []string) []string {
	allowed := make(map[string]bool, len(allow))
	for _, a := range allow {
		allowed[a] = true
	}
	out := make([]string, 0, len(env))
	index := make(map[string]int, len(env))
	for _, kv := range env {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		if !allowed[name] && secretName(name) {
			continue
		}
		if i, seen := index[name]; seen {
			out[i] = kv
			continue
		}
		index[name] = len(out)
		out = append(out, kv)
	}
	return out
}

// secretName reports whether a variable name looks like it holds a secret.
func secretName(name string) bool {
	upper := strings.ToUpper(name)
	// Name fragments that mark a variable as secret.
	for _, w := range [...]string{"KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "CREDENTIAL"} {
		if strings.Contains(upper, w) {
			return true
		}
	}
	// Model providers: none of their variables reaches a suite.
	for _, p := range [...]string{"OPENAI_", "ANTHROPIC_", "OLLAMA_"} {
		if strings.HasPrefix(upper, p) {
			return true
		}
	}
	// Agent sockets give access to credentials without holding them.
	return upper == "SSH_AUTH_SOCK" || upper == "GPG_AGENT_INFO"
}

// MergeEnv returns base with the variables of extra set (added or
// replaced). Names in extra are applied in sorted order so the result does
// not depend on map iteration.
func MergeEnv(base []string, extra map[string]string) []string {
	if len(extra) == 0 {
		return base
	}
	out := make([]string, 0, len(base)+len(extra))
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		if _, replaced := extra[name]; replaced {
			continue
		}
		out = append(out, kv)
	}
	for _, name := range slices.Sorted(maps.Keys(extra)) {
		out = append(out, name+"="+extra[name])
	}
	return out
}

// LookupEnv returns the value of name in env (the last one wins).
func LookupEnv(env []string, name string) (string, bool) {
	val, found := "", false
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			val, found = v, true
		}
	}
	return val, found
}
