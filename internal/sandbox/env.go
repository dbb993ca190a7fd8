package sandbox

import (
	"maps"
	"slices"
	"strings"

	"github.com/orchdev/orch/internal/lazyre"
)

// Variables a suite gets from orch's environment: what builds and tests
// need, nothing else. A name that looks like it holds a secret is dropped
// even when it matches (authLike), unless the configuration's env_allow
// names it.
var (
	// allowedNames pass as they are.
	allowedNames = []string{
		"PATH", "HOME", "LANG", "LANGUAGE", "TERM", "TZ", "TMPDIR", "CI", "NO_COLOR",
		"JAVA_HOME", "VIRTUAL_ENV",
	}
	// allowedPrefixes are the toolchains' own variables (and the locale).
	allowedPrefixes = []string{"LC_", "CARGO_", "RUSTUP_", "NODE_", "PYTHON", "CGO_"}
	// authWords in a name mark it as holding a secret or a way in.
	authWords = []string{"KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "COOKIE", "SESSION", "DSN", "WEBHOOK"}
)

// FilterEnv returns the entries of env ("NAME=value") a test suite may
// see: the allow-list — PATH, HOME, LANG, LANGUAGE, LC_*, TERM, TZ,
// TMPDIR, CI, NO_COLOR, the toolchains' variables (Go's GO* such as
// GOFLAGS and GOPATH, CGO_*, CARGO_*, RUSTUP_*, JAVA_HOME, NODE_*,
// PYTHON*, VIRTUAL_ENV) minus any whose name looks like a secret
// (authLike: GOAUTH, NODE_AUTH_TOKEN, CARGO_REGISTRY_TOKEN) — plus the
// names in allow, which pass whatever they look like. An allow entry is
// an exact name or a prefix ending in "*" ("MYAPP_*"). Malformed entries
// (no '=' or an empty name) are dropped; when a name repeats, the last
// value wins and keeps the position of the first. The input is not
// modified.
//
// The values of the allow-list's variables are checked too: one that
// holds a URL with credentials (scheme://user:password@host, as in a
// GOPROXY or a PIP_INDEX_URL) is dropped, and FilterEnvNotes names it. A
// name in allow passes with its value: the configuration asked for it.
func FilterEnv(env []string, allow []string) []string {
	out, _ := FilterEnvNotes(env, allow)
	return out
}

// FilterEnvNotes is FilterEnv, and also returns the names of the
// variables it dropped for their value (sorted, once each): a report
// says which ones and why, never the values.
func FilterEnvNotes(env []string, allow []string) (kept []string, credentials []string) {
	out := make([]string, 0, len(env))
	index := make(map[string]int, len(env))
	for _, kv := range env {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		byConfig := allowedByConfig(name, allow)
		if !byConfig && (!allowedName(name) || authLike(name)) {
			continue
		}
		if !byConfig && HasURLCredentials(kv[len(name)+1:]) {
			if !slices.Contains(credentials, name) {
				credentials = append(credentials, name)
			}
			// An earlier value of the same name goes too: the last one
			// would have won.
			if i, seen := index[name]; seen {
				out[i] = ""
			}
			continue
		}
		if i, seen := index[name]; seen {
			out[i] = kv
			continue
		}
		index[name] = len(out)
		out = append(out, kv)
	}
	out = slices.DeleteFunc(out, func(kv string) bool { return kv == "" })
	slices.Sort(credentials)
	return out, credentials
}

// urlScheme matches the start of a URL, anywhere in a value: GOPROXY
// holds lists of URLs separated by commas and pipes, GOFLAGS words.
var urlScheme = lazyre.New(`[A-Za-z][A-Za-z0-9+.-]*://`)

// listSeparators end a URL in a value: white space, and the commas and
// pipes of a GOPROXY list.
const listSeparators = " \t\n\v\f\r,|"

// HasURLCredentials reports whether value holds a URL whose userinfo has
// a password (user:password@, or :token@), percent-encoded or not. A
// password is taken as the user wrote it: an unencoded '/', '?', '#' or
// '@' in it ("https://user:pa/ss@host") still makes it one, although a
// strict URL parser would end the userinfo there. Only what reads as a
// host and a port before the path ("host:8443/@scope/pkg": digits, then
// '/', '?' or '#') is not a password.
func HasURLCredentials(value string) bool {
	for _, loc := range urlScheme.FindAllStringIndex(value, -1) {
		rest := value[loc[1]:]
		if end := strings.IndexAny(rest, listSeparators); end >= 0 {
			rest = rest[:end]
		}
		if hasPassword(rest) {
			return true
		}
	}
	return false
}

// hasPassword reports whether rest, what follows a URL's "scheme://",
// starts with user:password@ (the last '@' ends the password, the first
// ':' starts it) with a non-empty password.
func hasPassword(rest string) bool {
	colon := strings.IndexByte(rest, ':')
	at := strings.LastIndexByte(rest, '@')
	if colon < 0 || at <= colon+1 {
		return false
	}
	user, password := rest[:colon], rest[colon+1:at]
	if strings.ContainsAny(user, "/?#@") {
		return false // the colon is in the path, or the user has no password
	}
	return user == "" || !portThenPath(password)
}

// portThenPath reports whether s, after "host:", is a port and the rest
// of the URL: one or more digits, then '/', '?' or '#'.
func portThenPath(s string) bool {
	i := strings.IndexAny(s, "/?#")
	if i <= 0 {
		return false
	}
	for _, r := range s[:i] {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// EnvNames returns the names of env's entries, sorted: what a report
// shows of an environment (never the values).
func EnvNames(env []string) []string {
	names := make([]string, 0, len(env))
	for _, kv := range env {
		if name, _, ok := strings.Cut(kv, "="); ok && name != "" && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// allowedName reports whether name is on the allow-list.
func allowedName(name string) bool {
	if slices.Contains(allowedNames, name) {
		return true
	}
	for _, p := range allowedPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return goVariable(name)
}

// goVariable reports whether name is one of Go's: GO and upper-case
// letters or digits (GOFLAGS, GO111MODULE), never GOOGLE_* or another
// underscored name.
func goVariable(name string) bool {
	rest, ok := strings.CutPrefix(name, "GO")
	if !ok || rest == "" {
		return false
	}
	for _, r := range rest {
		if !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// authLike reports whether a name looks like it holds a secret or grants
// access: it contains one of authWords, or PAT as a word of its own
// (GH_PAT; not PYTHONPATH), case-insensitively.
func authLike(name string) bool {
	upper := strings.ToUpper(name)
	for _, w := range authWords {
		if strings.Contains(upper, w) {
			return true
		}
	}
	return slices.Contains(strings.FieldsFunc(upper, func(r rune) bool { return r == '_' || r == '-' || r == '.' }), "PAT")
}

// allowedByConfig reports whether an entry of allow (a name, or a prefix
// ending in "*") names name.
func allowedByConfig(name string, allow []string) bool {
	for _, a := range allow {
		if prefix, ok := strings.CutSuffix(a, "*"); ok {
			if prefix != "" && strings.HasPrefix(name, prefix) {
				return true
			}
		} else if a == name {
			return true
		}
	}
	return false
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
