package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLoadMissingIsDefault(t *testing.T) {
	cfg, err := Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Test.Sandbox != "auto" || cfg.Test.Timeout.Std() != 10*time.Minute || len(cfg.Review.PlanPersonas) != 5 || len(cfg.Review.CodePersonas) != 4 {
		t.Errorf("defaults wrong: %+v", cfg)
	}
}

func TestParse(t *testing.T) {
	good := `
[test]
sandbox = "none"
timeout = "90s"
env_allow = ["MY_TOKEN"]
[[test.suites]]
name = "unit"
command = "go test -json ./..."
format = "go-json"
[[test.suites]]
name = "lint"
kind = "lint"
command = ["go", "vet", "./..."]
timeout = "1m"
env = { CGO_ENABLED = "0" }
[providers.local]
type = "openai"
base_url = "http://localhost:11434/v1"
model = "qwen"
[roles]
planner = "local:bigger-model"
[review]
plan_personas = ["risk"]
`
	cfg, err := Parse("config.toml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Test.Suites
	if len(s) != 2 || s[0].Kind != "test" || strings.Join(s[0].Command, "|") != "sh|-c|go test -json ./..." ||
		strings.Join(s[1].Command, "|") != "go|vet|./..." || s[1].Timeout.Std() != time.Minute || s[1].Env["CGO_ENABLED"] != "0" {
		t.Errorf("suites: %+v", s)
	}
	if cfg.Test.Timeout.Std() != 90*time.Second || cfg.Roles.Planner != "local:bigger-model" || len(cfg.Review.PlanPersonas) != 1 || len(cfg.Review.CodePersonas) != 4 {
		t.Errorf("config: %+v", cfg)
	}

	bad := []struct{ text, want string }{
		{"[test]\nsandbox = \"docker\"", "test.sandbox: expected \"auto\", \"bwrap\" or \"none\", got \"docker\""},
		{"[test]\ntimeout = \"soon\"", "expected a duration"},
		{"[test]\nsandbox = 3", "config.toml"},
		{"[tset]\nx = 1", "tset"},
		{"[test]\nsandboxx = \"none\"", "test.sandboxx: unknown key"},
		{"[[test.suites]]\nname = \"a\"", "test.suites[0].command: expected a command"},
		{"[[test.suites]]\nname = \"a b\"\ncommand = \"x\"", "test.suites[0].name"},
		{"[[test.suites]]\nname = \"a\"\ncommand = \"x\"\n[[test.suites]]\nname = \"a\"\ncommand = \"y\"", "duplicate suite name"},
		{"[[test.suites]]\nname = \"a\"\ncommand = \"x\"\nkind = \"e2e\"", "test.suites[0].kind"},
		{"[[test.suites]]\nname = \"a\"\ncommand = \"x\"\nformat = \"junit\"", "report"},
		{"[[test.suites]]\nname = \"a\"\ncommand = [1]", "array of strings"},
		{"[providers.x]\ntype = \"gemini\"", "providers.x.type"},
		{"[providers.x]\ntype = \"openai\"\napi_key_env = \"sk-abc def\"", "NAME of an environment variable"},
		{"[roles]\nplanner = \"nope\"", "roles.planner: names provider \"nope\""},
		{"[test\n", "line 2: expected"},
	}
	for _, tt := range bad {
		_, err := Parse("config.toml", []byte(tt.text))
		if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, ErrInvalid) {
			t.Errorf("Parse(%q) error = %v, want one containing %q", tt.text, err, tt.want)
		}
	}
}

func TestLoadRefusesHugeAndFolder(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, FileName), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "regular file") {
		t.Errorf("folder: %v", err)
	}
	dir = t.TempDir()
	f, _ := os.Create(filepath.Join(dir, FileName))
	_ = f.Truncate(maxBytes + 1)
	f.Close()
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("huge: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("[test]\nsandbox = \"none\"\n"))
	f.Add([]byte("[[test.suites]]\nname = \"a\"\ncommand = [\"x\"]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse("config.toml", data)
		if err == nil {
			for _, s := range cfg.Test.Suites {
				if len(s.Command) == 0 || s.Name == "" {
					t.Fatalf("accepted an invalid suite: %+v", s)
				}
			}
		}
	})
}
