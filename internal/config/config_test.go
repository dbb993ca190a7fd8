package config

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/visibility"
)

func TestLoadMissingIsDefault(t *testing.T) {
	cfg, err := Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Test.Sandbox != "auto" || cfg.Test.Timeout.Std() != 10*time.Minute || len(cfg.Review.PlanPersonas) != 5 || len(cfg.Review.CodePersonas) != 4 {
		t.Errorf("defaults wrong: %+v", cfg)
	}
	if cfg.Test.MaxProcesses != 4096 || cfg.Test.MaxMemory != 4<<30 || cfg.Test.MaxLogBytes != 10<<20 {
		t.Errorf("test limits defaults wrong: %+v", cfg.Test)
	}
}

func TestParse(t *testing.T) {
	good := `
[test]
sandbox = "none"
timeout = "90s"
env_allow = ["MY_TOKEN", "MYAPP_*"]
max_processes = 512
max_memory = "2GiB"
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

	if cfg.Test.MaxProcesses != 512 || cfg.Test.MaxMemory != 2<<30 {
		t.Errorf("test limits: %+v", cfg.Test)
	}
	if cfg, err := Parse("config.toml", []byte("[context]\nallow_paths = [\".env.example\", \"certs/test-*.pem\"]\n")); err != nil || strings.Join(cfg.Context.AllowPaths, ",") != ".env.example,certs/test-*.pem" {
		t.Errorf("context.allow_paths: %v, %v", cfg.Context.AllowPaths, err)
	}
	if cfg, err := Parse("config.toml", []byte("[test]\nmax_memory = 100000000\n")); err != nil || cfg.Test.MaxMemory != 100_000_000 {
		t.Errorf("max_memory in bytes: %v, %v", cfg.Test.MaxMemory, err)
	}

	bad := []struct{ text, want string }{
		{"[test]\nmax_processes = 4", "test.max_processes: expected a number of processes from 8 to 4194304, got 4"},
		{"[test]\nmax_processes = 0", "test.max_processes: expected a number of processes from 8"},
		{"[test]\nmax_processes = 99999999", "got 99999999"},
		{"[test]\nmax_processes = \"many\"", "config.toml"},
		{"[test]\nmax_memory = \"4G\"", `expected a size like "512MiB"`},
		{"[test]\nmax_memory = \"1MiB\"", "test.max_memory: expected at least 16MiB, got 1MiB"},
		{"[test]\nmax_memory = -5", "non-negative number of bytes"},
		{"[test]\nmax_memory = 1.5", "expected a size"},
		{"[test]\nmax_memory = \"9999999999TiB\"", "too large"},
		{"[test]\nsandbox = \"docker\"", "test.sandbox: expected \"auto\", \"bwrap\" or \"none\", got \"docker\""},
		{"[test]\ntimeout = \"soon\"", "expected a duration"},
		{"[test]\nenv_allow = [\"A\", \"*\"]", `test.env_allow[1]: expected a variable name or a prefix ending in "*" (such as "MYAPP_*"), got "*"`},
		{"[test]\nenv_allow = [\"MY TOKEN\"]", "test.env_allow[0]"},
		{"[test]\nenv_allow = [\"A=b\"]", "test.env_allow[0]"},
		{"[test]\nenv_allow = [\"\"]", "test.env_allow[0]"},
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
		{"[providers.x]\ntype = \"command\"\ncommand = \"x\"\nprotocol = 3", "providers.x.protocol: expected command protocol version 1 or 2, got 3"},
		{"[providers.x]\ntype = \"openai\"\nprotocol = 2", "providers.x.protocol: only a command provider"},
		{"[max_output_tokens]\ncodgen = 100", "max_output_tokens.codgen: expected a role: planner, plan_reviewer, codegen"},
		{"[max_output_tokens]\ncodegen = 0", "max_output_tokens.codegen: expected a number of tokens from 1 to 1000000, got 0"},
		{"[max_output_tokens]\ncodegen = \"lots\"", "max_output_tokens"},
		{"[reasoning_effort]\nplanner = \"extreme\"", "reasoning_effort.planner: expected one of none, minimal, low, medium, high, xhigh, max, got \"extreme\""},
		{"[reasoning_effort]\nplaner = \"high\"", "reasoning_effort.planer: expected a role"},
		{"[providers.x]\ntype = \"script\"\nscript = \"s.json\"\ntools = true", "providers.x.tools: only an openai or anthropic provider"},
		{"[providers.x]\ntype = \"openai\"\ntools = \"yes\"", "providers"},
		{"[review]\ncalls = \"each\"", "review.calls: expected \"panel\" (one conversation for the whole panel) or \"per_persona\""},
		{"[test\n", "line 2: expected"},
		{"[context]\nallow_paths = [\"*\"]", "context.allow_paths[0]: \"*\" would allow every file of its folder"},
		{"[context]\nallow_paths = [\".env.example\", \"../x.pem\"]", "context.allow_paths[1]: expected a clean path"},
		{"[context]\nallow_paths = [\".git/config\"]", "context.allow_paths[0]: \".git/config\" names .git/"},
		{"[context]\nallow_paths = \".env\"", "config.toml"},
		{"[prices.\"m\"]\ninput = nan\noutput = 1.0", "prices.m: expected a model name with non-negative"},
		{"[prices.\"m\"]\ninput = 1.0\noutput = inf", "prices.m"},
		{"[budgets]\ncost_usd = nan", "budgets.cost_usd: expected a non-negative number (0 = no limit), got NaN"},
		{"[budgets.phase.codegen]\ncost_usd = -inf", "budgets.phase.codegen.cost_usd"},
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
	f.Add([]byte("[budgets]\ncost_usd = 2.5\n[budgets.phase.codegen]\ncost_usd = 1e0\n[prices.\"m\"]\ninput = 3.0\noutput = 15.0\ncached_input = 0.3\n"))
	f.Add([]byte("[context]\nallow_paths = [\".env.example\"]\n[test]\nmax_processes = 64\nread_only_paths = [\"~/.cache\"]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse("config.toml", data)
		if err != nil {
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "config.toml") {
				t.Fatalf("error %v does not name the file", err)
			}
			return
		}
		for _, s := range cfg.Test.Suites {
			if len(s.Command) == 0 || s.Name == "" {
				t.Fatalf("accepted an invalid suite: %+v", s)
			}
		}
		// Limits and prices are numbers a budget can compare and a
		// transcript can hold: no NaN, no infinity, nothing negative.
		finite := func(what string, v float64) {
			if !(v >= 0) || math.IsInf(v, 0) {
				t.Fatalf("accepted %s = %v", what, v)
			}
		}
		finite("budgets.cost_usd", cfg.Budgets.CostUSD)
		for name, b := range cfg.Budgets.Phase {
			finite("budgets.phase."+name+".cost_usd", b.CostUSD)
		}
		for model, p := range cfg.Prices {
			for _, v := range []float64{p.Input, p.Output, p.CachedInput, p.CacheWrite} {
				finite("prices."+model, v)
			}
		}
		if cfg.Test.MaxProcesses < MinProcesses || cfg.Test.MaxProcesses > MaxProcesses || cfg.Test.MaxMemory < MinMemory || cfg.Test.Timeout < 0 {
			t.Fatalf("accepted test limits %+v", cfg.Test)
		}
		if _, err := visibility.NewPolicy(cfg.Context.AllowPaths); err != nil {
			t.Fatalf("accepted allow_paths: %v", err)
		}
	})
}

func TestParseByteSize(t *testing.T) {
	tests := []struct {
		in   string
		want ByteSize
		err  bool
	}{
		{"4GiB", 4 << 30, false},
		{"512MiB", 512 << 20, false},
		{"512 MiB", 512 << 20, false},
		{"2GB", 2e9, false},
		{"100KB", 100e3, false},
		{"1TiB", 1 << 40, false},
		{"123B", 123, false},
		{"0B", 0, false},
		{"4G", 0, true},
		{"4gib", 0, true},
		{"GiB", 0, true},
		{"", 0, true},
		{"-1GiB", 0, true},
		{"1.5GiB", 0, true},
		{"4  GiB", 0, true},
		{" 4GiB", 0, true},
		{"4GiB ", 0, true},
		{"9999999999TiB", 0, true},
		{"1234567890123456789B", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseByteSize(tt.in)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ParseByteSize(%q) = %d, %v; want %d, error %v", tt.in, got, err, tt.want, tt.err)
		}
	}
	for _, b := range []ByteSize{4 << 30, 512 << 20, 1500, 3 << 40} {
		back, err := ParseByteSize(b.String())
		if err != nil || back != b {
			t.Errorf("%d → %q → %d, %v", b, b.String(), back, err)
		}
	}
}

func FuzzParseByteSize(f *testing.F) {
	f.Add("4GiB")
	f.Add("512 MB")
	f.Add("99999999999999999TiB")
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseByteSize(s)
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("ParseByteSize(%q) = %d, negative", s, n)
		}
		if back, err := ParseByteSize(n.String()); err != nil || back != n {
			t.Fatalf("%q → %d → %q → %d, %v", s, n, n.String(), back, err)
		}
	})
}

func TestPerRoleOutputAndEffort(t *testing.T) {
	cfg, err := Parse("config.toml", []byte("[context]\nmax_output_tokens = 8000\n[max_output_tokens]\ncodegen = 64000\nplan_reviewer = 4000\n[reasoning_effort]\nplanner = \"high\"\ncode_reviewer = \"low\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		role   string
		tokens int
		effort string
	}{
		{"codegen", 64000, ""},
		{"plan_reviewer:risk", 4000, ""},
		{"planner", 8000, "high"},
		{"code_reviewer:security", 8000, "low"},
		{"accept_advisor", 8000, ""},
	} {
		if got := cfg.OutputTokens(tc.role); got != tc.tokens {
			t.Errorf("OutputTokens(%s) = %d, want %d", tc.role, got, tc.tokens)
		}
		if got := cfg.Effort(tc.role); got != tc.effort {
			t.Errorf("Effort(%s) = %q, want %q", tc.role, got, tc.effort)
		}
	}
	if got := Default().OutputTokens("codegen"); got != 16000 {
		t.Errorf("default output tokens %d", got)
	}
}

// Keys lists the fixed tables' keys from the Config type, for completion
// and `orch config`.
func TestKeys(t *testing.T) {
	keys := Keys()
	for _, want := range []string{"test", "test.timeout", "review.plan_personas", "roles.codegen", "budgets.tokens_in", "providers", "tools.max_turns"} {
		if !slices.Contains(keys, want) {
			t.Errorf("Keys lacks %q: %v", want, keys)
		}
	}
	if !slices.IsSorted(keys) || len(slices.Compact(slices.Clone(keys))) != len(keys) {
		t.Errorf("Keys not sorted or repeated: %v", keys)
	}
	if msg := UnknownKey("test.timout"); !strings.Contains(msg, `did you mean "timeout"?`) {
		t.Errorf("UnknownKey(test.timout) = %q", msg)
	}
}
