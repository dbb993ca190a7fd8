package sandbox

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestFilterEnv(t *testing.T) {
	tests := []struct {
		name  string
		env   []string
		allow []string
		want  []string
		creds []string // dropped for their value
	}{
		{
			name: "what builds and tests need passes",
			env: []string{"PATH=/bin", "HOME=/root", "LANG=C.UTF-8", "LC_ALL=C", "TERM=xterm", "TZ=UTC", "TMPDIR=/t", "CI=true",
				"GOFLAGS=-mod=mod", "GO111MODULE=on", "GOPATH=/g", "GOPRIVATE=example.com", "CGO_ENABLED=0",
				"CARGO_HOME=/c", "RUSTUP_HOME=/r", "JAVA_HOME=/j", "NODE_OPTIONS=--x", "NODE_ENV=test",
				"PYTHONPATH=/p", "PYTHONDONTWRITEBYTECODE=1", "VIRTUAL_ENV=/v"},
			want: []string{"PATH=/bin", "HOME=/root", "LANG=C.UTF-8", "LC_ALL=C", "TERM=xterm", "TZ=UTC", "TMPDIR=/t", "CI=true",
				"GOFLAGS=-mod=mod", "GO111MODULE=on", "GOPATH=/g", "GOPRIVATE=example.com", "CGO_ENABLED=0",
				"CARGO_HOME=/c", "RUSTUP_HOME=/r", "JAVA_HOME=/j", "NODE_OPTIONS=--x", "NODE_ENV=test",
				"PYTHONPATH=/p", "PYTHONDONTWRITEBYTECODE=1", "VIRTUAL_ENV=/v"},
		},
		{
			name: "secrets that got through the old name filter stay home",
			env: []string{"PATH=/bin", "DATABASE_URL=postgres://u:pw@db/x", "SENTRY_DSN=https://k@sentry.io/1",
				"SLACK_WEBHOOK_URL=https://hooks.slack.com/x", "GH_PAT=ghp_x", "NPM_AUTH=x", "DOCKER_AUTH_CONFIG={}",
				"NODE_AUTH_TOKEN=npm_x", "AWS_ACCESS_KEY_ID=a", "KUBECONFIG=/k", "SSH_AUTH_SOCK=/s", "PGPASSWORD=p"},
			want: []string{"PATH=/bin"},
		},
		{
			name: "auth-like names under a toolchain prefix are dropped",
			env:  []string{"GOAUTH=netrc", "CARGO_REGISTRY_TOKEN=t", "CARGO_REGISTRIES_X_TOKEN=t", "NODE_AUTH_TOKEN=t", "PYTHON_KEYRING_BACKEND=k", "GOFLAGS=-v"},
			want: []string{"GOFLAGS=-v"},
		},
		{
			name: "names that only look like a toolchain's do not pass (GOOGLE alone is Go-shaped)",
			env:  []string{"GOOGLE_APPLICATION_CREDENTIALS=/c", "GOOGLE=x", "GO=x", "Go_x=1", "NODEJS_X=1", "path=/x", "OPENAI_API_KEY=k", "ANTHROPIC_BASE_URL=u", "USER=root", "EDITOR=vi"},
			want: []string{"GOOGLE=x"},
		},
		{
			name:  "env_allow passes names on purpose, secret-looking or not",
			env:   []string{"DATABASE_URL=postgres://db", "MY_TOKEN=t", "APP_MODE=x", "APP_LEVEL=y", "OTHER=z"},
			allow: []string{"DATABASE_URL", "MY_TOKEN", "APP_*"},
			want:  []string{"DATABASE_URL=postgres://db", "MY_TOKEN=t", "APP_MODE=x", "APP_LEVEL=y"},
		},
		{
			name:  "env_allow is exact: no case folding, a lone * allows nothing",
			env:   []string{"database_url=x", "SECRET=y"},
			allow: []string{"DATABASE_URL", "*"},
			want:  []string{},
		},
		{
			name: "malformed entries are dropped, last duplicate wins in first position",
			env:  []string{"=x", "NOEQUALS", "PATH=1", "HOME=2", "PATH=3", "TERM="},
			want: []string{"PATH=3", "HOME=2", "TERM="},
		},
		{
			name: "a secret-looking word in a value does not matter",
			env:  []string{"TERM=my TOKEN is secret"},
			want: []string{"TERM=my TOKEN is secret"},
		},
		{
			name:  "a URL with credentials in an allowed variable is dropped and named",
			env:   []string{"PATH=/bin", "GOPROXY=https://alice:s3cret@proxy.example.com,direct", "GONOSUMDB=example.com", "PYTHONINDEX=https://:tok@pypi.example/simple"},
			want:  []string{"PATH=/bin", "GONOSUMDB=example.com"},
			creds: []string{"GOPROXY", "PYTHONINDEX"},
		},
		{
			name:  "every URL of a GOPROXY list is checked; a later value with credentials removes the earlier one",
			env:   []string{"GOPROXY=https://proxy.golang.org|https://u:p%40ss@corp.example/go", "GOFLAGS=-v", "GOFLAGS=-x https://u:p@h"},
			want:  []string{},
			creds: []string{"GOFLAGS", "GOPROXY"},
		},
		{
			name: "a URL without a password, an e-mail address or a user alone passes",
			env:  []string{"GOPROXY=https://proxy.golang.org,direct", "GOPRIVATE=git@example.com", "CARGO_X=ssh://git@github.com/x", "NODE_X=https://user@host/"},
			want: []string{"GOPROXY=https://proxy.golang.org,direct", "GOPRIVATE=git@example.com", "CARGO_X=ssh://git@github.com/x", "NODE_X=https://user@host/"},
		},
		{
			name:  "env_allow passes a value with credentials: the configuration asked for it",
			env:   []string{"DATABASE_URL=postgres://u:pw@db/x", "GOPROXY=https://u:p@h"},
			allow: []string{"DATABASE_URL"},
			want:  []string{"DATABASE_URL=postgres://u:pw@db/x"},
			creds: []string{"GOPROXY"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.env)
			got, creds := FilterEnvNotes(tt.env, tt.allow)
			if !slices.Equal(got, tt.want) {
				t.Errorf("FilterEnv(%q, %q) = %q, want %q", tt.env, tt.allow, got, tt.want)
			}
			if !slices.Equal(creds, tt.creds) {
				t.Errorf("FilterEnvNotes(%q, %q) names %q as holding credentials, want %q", tt.env, tt.allow, creds, tt.creds)
			}
			if plain := FilterEnv(tt.env, tt.allow); !slices.Equal(plain, got) {
				t.Errorf("FilterEnv = %q, FilterEnvNotes = %q", plain, got)
			}
			if !slices.Equal(in, tt.env) {
				t.Errorf("input modified: %q", tt.env)
			}
		})
	}
}

// TestEnvNames: names only, sorted, once each.
func TestEnvNames(t *testing.T) {
	got := EnvNames([]string{"B=1", "A=secret value", "B=2", "broken", "=x"})
	if want := []string{"A", "B"}; !slices.Equal(got, want) {
		t.Errorf("EnvNames = %q, want %q", got, want)
	}
	if strings.Contains(strings.Join(got, ","), "secret") {
		t.Errorf("EnvNames leaked a value: %q", got)
	}
}

func TestMergeEnv(t *testing.T) {
	got := MergeEnv([]string{"A=1", "B=2", "C=3"}, map[string]string{"B": "x", "D": "y"})
	want := []string{"A=1", "C=3", "B=x", "D=y"}
	if !slices.Equal(got, want) {
		t.Errorf("MergeEnv = %q, want %q", got, want)
	}
	if v, ok := LookupEnv([]string{"P=1", "P=2"}, "P"); !ok || v != "2" {
		t.Errorf("LookupEnv = %q %v, want last value 2", v, ok)
	}
}

// TestHasURLCredentials: a password is found whatever it holds, an
// unencoded '/', '?', '#' or '@' included (a user pastes the password as
// it is; git and pip take such URLs), and a host with a port and an '@'
// in its path (an npm scope) is not a password.
func TestHasURLCredentials(t *testing.T) {
	tests := []struct {
		value string
		want  bool
	}{
		{"https://alice:s3cret@proxy.example.com,direct", true},
		{"https://:token@host/x", true},
		{"https://u:p%40ss@corp.example/go", true},
		{"https://user:pa/ss@host/repo", true},
		{"https://user:p#ss@host/x", true},
		{"https://user:p?ss@host/x", true},
		{"https://user:p@ss@host/x", true},
		{"https://user:/leading-slash@host", true},
		{"https://user:a/b/c#d?e@host:8443/x", true},
		{"https://:to/ken@host", true},
		{"https://:443/x@host", true}, // no host before the colon: a password
		{"https://proxy.golang.org|https://user:pa/ss@corp/go", true},
		{"direct,https://user:p#ss@corp/go", true},
		{"-x https://u:a/b@h", true},

		{"https://proxy.golang.org,direct", false},
		{"git@example.com", false},
		{"ssh://git@github.com/x", false},
		{"https://user@host/", false},
		{"https://user@host:8443/a@b", false},
		{"https://registry.example.com:8443/@types/node", false}, // host:port, '@' in the path
		{"https://registry.example.com:443#x@y", false},
		{"https://example.com/path:x@y", false}, // the colon is in the path
		{"https://user:@host", false},           // an empty password
		{"https://host:8080/x,https://y@z", false},
		{"user:pa/ss@host", false}, // no scheme: not a URL
	}
	for _, tt := range tests {
		if got := HasURLCredentials(tt.value); got != tt.want {
			t.Errorf("HasURLCredentials(%q) = %v, want %v", tt.value, got, tt.want)
		}
	}
}

// FuzzHasURLCredentials: a value said to hold credentials has a scheme
// and a userinfo with a password; a URL built with a user and a
// non-empty password (anything but the separators of a list and
// white space, and not a port: digits then '/', '?' or '#') is always
// found, wherever it sits in a list; the check never panics.
func FuzzHasURLCredentials(f *testing.F) {
	f.Add("https://alice:s3cret@proxy.example.com,direct", "alice", "s3cret")
	f.Add("https://proxy.golang.org|https://u:p%40ss@corp/go", "u", "pa/ss")
	f.Add("git@example.com", "", "p#ss")
	f.Add("x://:@", "bob", "a?b/c@d")
	f.Fuzz(func(t *testing.T, v, user, password string) {
		if HasURLCredentials(v) && (!strings.Contains(v, "://") || !strings.Contains(v, "@") || !strings.Contains(v, ":")) {
			t.Fatalf("%q said to hold credentials", v)
		}
		if password == "" || strings.ContainsAny(user, ":/?#@,| \t\n\v\f\r") || strings.ContainsAny(password, ",| \t\n\v\f\r") || looksLikePort(password) && user != "" {
			return
		}
		for _, u := range []string{
			"https://" + user + ":" + password + "@host/x",
			"https://proxy.golang.org," + "https://" + user + ":" + password + "@host|direct",
			"GOFLAGS -x git+ssh://" + user + ":" + password + "@h",
		} {
			if !HasURLCredentials(u) {
				t.Fatalf("HasURLCredentials(%q) = false: the password %q was missed", u, password)
			}
		}
	})
}

// looksLikePort reports whether password, after "host:", reads as a port
// and a path: one or more digits, then '/', '?' or '#'.
var looksLikePort = regexp.MustCompile(`^[0-9]+[/?#]`).MatchString
