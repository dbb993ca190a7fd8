package sandbox

import (
	"slices"
	"testing"
)

func TestSanitizeEnv(t *testing.T) {
	tests := []struct {
		name  string
		env   []string
		allow []string
		want  []string
	}{
		{
			name: "plain variables pass",
			env:  []string{"PATH=/bin", "HOME=/root", "GOFLAGS=-mod=mod"},
			want: []string{"PATH=/bin", "HOME=/root", "GOFLAGS=-mod=mod"},
		},
		{
			name: "secret-looking names are dropped, any case",
			env: []string{"PATH=/bin", "FAKE_API_KEY=k", "GITHUB_TOKEN=t", "db_password=p", "MySecret=s",
				"AWS_SECRET_ACCESS_KEY=a", "NPM_PASSWD=x", "GOOGLE_APPLICATION_CREDENTIALS=/c", "KEEP=1"},
			want: []string{"PATH=/bin", "KEEP=1"},
		},
		{
			name: "provider variables are dropped whatever their name",
			env:  []string{"OPENAI_BASE_URL=http://x", "ANTHROPIC_MODEL=m", "OLLAMA_HOST=h", "openai_org=o", "MY_OPENAI_URL=u"},
			want: []string{"MY_OPENAI_URL=u"},
		},
		{
			name: "agent sockets are dropped",
			env:  []string{"SSH_AUTH_SOCK=/run/ssh", "GPG_AGENT_INFO=x", "TERM=xterm"},
			want: []string{"TERM=xterm"},
		},
		{
			name:  "allowed names pass even if they look secret",
			env:   []string{"GITHUB_TOKEN=t", "FAKE_API_KEY=k", "OLLAMA_HOST=h"},
			allow: []string{"GITHUB_TOKEN", "OLLAMA_HOST"},
			want:  []string{"GITHUB_TOKEN=t", "OLLAMA_HOST=h"},
		},
		{
			name:  "allow is exact, not case-insensitive",
			env:   []string{"github_token=t"},
			allow: []string{"GITHUB_TOKEN"},
			want:  []string{},
		},
		{
			name: "malformed entries are dropped, last duplicate wins in first position",
			env:  []string{"=x", "NOEQUALS", "A=1", "B=2", "A=3", "EMPTY="},
			want: []string{"A=3", "B=2", "EMPTY="},
		},
		{
			name: "values do not matter, only names",
			env:  []string{"NOTE=my TOKEN is secret"},
			want: []string{"NOTE=my TOKEN is secret"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.env)
			got := SanitizeEnv(tt.env, tt.allow)
			if !slices.Equal(got, tt.want) {
				t.Errorf("SanitizeEnv(%q, %q) = %q, want %q", tt.env, tt.allow, got, tt.want)
			}
			if !slices.Equal(in, tt.env) {
				t.Errorf("input modified: %q", tt.env)
			}
		})
	}
}

func TestMergeEnv(t *testing.T) {
	got := MergeEnv([]string{"A=1", "B=2", "C=3"}, map[string]string{"B": "x", "D": "y"})
	want := []string{"A=1", "C=3", "B=x", "D=y"}
	if !slices.Equal(got, want) {
		t.Errorf("mergeEnv = %q, want %q", got, want)
	}
	if v, ok := LookupEnv([]string{"P=1", "P=2"}, "P"); !ok || v != "2" {
		t.Errorf("lookupEnv = %q %v, want last value 2", v, ok)
	}
}
