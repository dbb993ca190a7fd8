// Package config reads .orch/config.toml. Every key is optional: a missing
// file, table or key takes the embedded default. Unknown keys, values of
// the wrong type and bad enums are errors naming the file, the key and
// what was expected.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/lazyre"
	"github.com/orchdev/orch/internal/visibility"
)

// FileName is the configuration file inside .orch/.
const FileName = "config.toml"

// maxBytes bounds the configuration file.
const maxBytes = 1 << 20

// Config is the whole configuration.
type Config struct {
	Test      Test                `toml:"test"`
	Providers map[string]Provider `toml:"providers"`
	Roles     Roles               `toml:"roles"`
	Review    Review              `toml:"review"`
	Context   Context             `toml:"context"`
	Tools     Tools               `toml:"tools"`
	Budgets   Budgets             `toml:"budgets"`
	// Prices override or extend the embedded price table: model name
	// prefix → USD per million tokens.
	Prices map[string]Price `toml:"prices"`
	// MaxOutputTokens caps the answer of a role ([max_output_tokens]
	// codegen = 32000); a role not named has [context] max_output_tokens.
	MaxOutputTokens map[string]int `toml:"max_output_tokens"`
	// ReasoningEffort of a role's model ([reasoning_effort] planner =
	// "high"): OpenAI's reasoning_effort, Anthropic's output_config
	// effort; a role not named has the model's default.
	ReasoningEffort map[string]string `toml:"reasoning_effort"`
	// MCP configures `orch mcp`.
	MCP MCP `toml:"mcp"`
	// Fleet is the Temporal service tasks are submitted to (orch
	// submit, orch worker; docs/fleet.md). Empty: no fleet, nothing of
	// Temporal is loaded.
	Fleet Fleet `toml:"fleet"`
}

// Fleet configures the fleet: how to reach its Temporal service and the
// shared remote that carries the tasks' refs.
type Fleet struct {
	// Address is the Temporal frontend's host:port; Namespace defaults
	// to "default".
	Address   string `toml:"address"`
	Namespace string `toml:"namespace"`
	// TLS turns TLS on (implied by an API key); CAFile, CertFile and
	// KeyFile are PEM files (relative to the repository), ServerName the
	// name the server's certificate is checked against.
	TLS        bool   `toml:"tls"`
	CAFile     string `toml:"ca_file"`
	CertFile   string `toml:"cert_file"`
	KeyFile    string `toml:"key_file"`
	ServerName string `toml:"server_name"`
	// APIKeyEnv is the NAME of the environment variable holding the API
	// key (Temporal Cloud); the key itself is never written in a file.
	APIKeyEnv string `toml:"api_key_env"`
	// Remote is the git remote shared by the machines (default "origin").
	Remote string `toml:"remote"`
	// Binary is the orch-fleet binary orch runs for the fleet's tasks
	// (relative to the repository); empty: orch-fleet next to orch, else
	// on PATH (internal/fleetlink).
	Binary string `toml:"binary"`
}

// Configured reports whether a fleet is configured.
func (f Fleet) Configured() bool { return f.Address != "" }

// ModelRoles are the roles that call models, as named in [roles],
// [max_output_tokens] and [reasoning_effort].
var ModelRoles = []string{"planner", "plan_reviewer", "codegen", "code_reviewer", "accept_advisor"}

// ReasoningEfforts are the accepted [reasoning_effort] values ("none" and
// "minimal" are OpenAI's; Anthropic gets "low" for them).
var ReasoningEfforts = []string{"none", "minimal", "low", "medium", "high", "xhigh", "max"}

// MaxOutputTokensMax bounds a configured output limit.
const MaxOutputTokensMax = 1_000_000

// OutputTokens is the output limit of role ("plan_reviewer:risk" is a
// plan_reviewer).
func (c Config) OutputTokens(role string) int {
	base, _, _ := strings.Cut(role, ":")
	if n, ok := c.MaxOutputTokens[base]; ok && n > 0 {
		return n
	}
	return c.Context.MaxOutputTokens
}

// Effort is the reasoning effort of role, "" for the model's default.
func (c Config) Effort(role string) string {
	base, _, _ := strings.Cut(role, ":")
	return c.ReasoningEffort[base]
}

// Budget bounds model use. Zero means no limit.
type Budget struct {
	Calls     int      `toml:"calls"`
	TokensIn  int64    `toml:"tokens_in"`
	TokensOut int64    `toml:"tokens_out"`
	CostUSD   float64  `toml:"cost_usd"`
	WallTime  Duration `toml:"wall_time"` // summed latency of model calls
}

// Budgets are the task's limits and, per phase, tighter ones.
type Budgets struct {
	Calls     int               `toml:"calls"`
	TokensIn  int64             `toml:"tokens_in"`
	TokensOut int64             `toml:"tokens_out"`
	CostUSD   float64           `toml:"cost_usd"`
	WallTime  Duration          `toml:"wall_time"`
	Phase     map[string]Budget `toml:"phase"`
}

// Task returns the task-wide budget.
func (b Budgets) Task() Budget {
	return Budget{Calls: b.Calls, TokensIn: b.TokensIn, TokensOut: b.TokensOut, CostUSD: b.CostUSD, WallTime: b.WallTime}
}

// Price is USD per million tokens. CachedInput (input read from a prompt
// cache) and CacheWrite (input written to it) default to Input.
type Price struct {
	Input       float64 `toml:"input"`
	Output      float64 `toml:"output"`
	CachedInput float64 `toml:"cached_input"`
	CacheWrite  float64 `toml:"cache_write"`
}

// Test configures the test phase.
type Test struct {
	// Sandbox is "auto" (bubblewrap, and orch test refuses when it is
	// unavailable), "bwrap" (the same) or "none" (the explicit opt-out,
	// recorded in the report).
	Sandbox string `toml:"sandbox"`
	// Timeout is the default per-suite timeout.
	Timeout Duration `toml:"timeout"`
	// EnvAllow names environment variables passed to suites besides the
	// built-in allow-list (PATH, HOME, the locale, the toolchains' own
	// variables), whatever they look like: exact names, or prefixes
	// ending in "*" ("MYAPP_*").
	EnvAllow []string `toml:"env_allow"`
	// MaxLogBytes caps each suite's log.
	MaxLogBytes int64 `toml:"max_log_bytes"`
	// MaxProcesses bounds the processes and threads of each suite.
	MaxProcesses int `toml:"max_processes"`
	// MaxMemory bounds the memory of each suite ("4GiB").
	MaxMemory ByteSize `toml:"max_memory"`
	// MaxWrite bounds what the suites of one run write together, in the
	// worktree, the caches, /tmp and the home ("2GiB"): more is "no space
	// left on device" in the sandbox and a report with status error.
	MaxWrite ByteSize `toml:"max_write"`
	// Setup are commands run in the test worktree, inside the sandbox,
	// before the suites (an offline install: "npm ci --offline").
	Setup []Command `toml:"setup"`
	// ReadOnlyPaths are shown read-only to the suites: an absolute or
	// "~/" path at its own place, a relative one (an untracked folder of
	// the working tree) at the same place in the test worktree.
	ReadOnlyPaths []string `toml:"read_only_paths"`
	// BuildCache keeps a warm test worktree (reset to exactly the base
	// commit each run) and build caches per repository and toolchain
	// under orch's cache folder (cargo's target folder, Gradle's home,
	// Go's build cache) between runs; false builds from scratch in a fresh
	// worktree every run.
	BuildCache bool    `toml:"build_cache"`
	Suites     []Suite `toml:"suites"`
}

// Suite is one configured test or lint suite.
type Suite struct {
	Name    string            `toml:"name"`
	Kind    string            `toml:"kind"` // test or lint
	Command Command           `toml:"command"`
	Format  string            `toml:"format"` // go-json, junit, libtest, tap, unittest or "" (exit code)
	Report  string            `toml:"report"` // JUnit XML file, folder or glob relative to the worktree
	Timeout Duration          `toml:"timeout"`
	Env     map[string]string `toml:"env"`
}

// Provider configures one model provider.
type Provider struct {
	Type      string  `toml:"type"` // openai, anthropic, command, script
	BaseURL   string  `toml:"base_url"`
	Model     string  `toml:"model"`
	APIKeyEnv string  `toml:"api_key_env"` // the NAME of the environment variable holding the key
	Command   Command `toml:"command"`
	// Tools turns tool calling on or off for an openai or anthropic
	// provider; unset means on, for any base URL (a server that refuses
	// tools is asked without them, and that is remembered).
	Tools *bool `toml:"tools"`
	// Protocol is the command protocol version a command provider
	// speaks: 1 (default) or 2 (tool calling; docs/command-protocol.md).
	Protocol   int      `toml:"protocol"`
	Script     string   `toml:"script"`
	Timeout    Duration `toml:"timeout"`
	MaxRetries int      `toml:"max_retries"`
}

// Roles names the provider (optionally "provider:model") serving each role.
type Roles struct {
	Planner       string `toml:"planner"`
	PlanReviewer  string `toml:"plan_reviewer"`
	Codegen       string `toml:"codegen"`
	CodeReviewer  string `toml:"code_reviewer"`
	AcceptAdvisor string `toml:"accept_advisor"`
}

// Review configures the reviewer personas.
type Review struct {
	PlanPersonas []string `toml:"plan_personas"`
	CodePersonas []string `toml:"code_personas"`
	// Calls is how a review panel asks its personas: "panel" (one model
	// conversation whose answer carries every persona's verdict) or
	// "per_persona" (one conversation each; the first warms the prompt
	// cache before the others are sent). "" means panel, except for a
	// script provider, whose scripts replay one answer per persona.
	Calls string `toml:"calls"`
}

// Review calls, [review] calls.
const (
	ReviewCallsPanel      = "panel"
	ReviewCallsPerPersona = "per_persona"
)

// Context bounds what agents put in a prompt.
type Context struct {
	MaxContextBytes int `toml:"max_context_bytes"`
	MaxOutputTokens int `toml:"max_output_tokens"`
	// AllowPaths names tracked files that look like secrets (.env.example,
	// test certificates) and may reach a model all the same: paths or
	// path.Match patterns (see visibility.CheckAllowPattern).
	AllowPaths []string `toml:"allow_paths"`
}

// Tools bounds the tool loop of one agent run (README, "Agents: tools, edits and context").
type Tools struct {
	// MaxTurns bounds the model turns of one role's run (each turn is a
	// model_call); the run fails when the model has not finished by then.
	MaxTurns int `toml:"max_turns"`
	// MaxTestRuns bounds codegen's run_tests calls per run; 0 leaves the
	// tool out.
	MaxTestRuns int `toml:"max_test_runs"`
}

// MCP configures the Model Context Protocol server (`orch mcp`).
type MCP struct {
	// Allow names the human gates an MCP client may take: accept, revert,
	// override, redo. Empty (the default): none is offered, so an agent
	// cannot approve its own work.
	Allow []string `toml:"allow"`
}

// MCPGates are the human gates [mcp] allow may name.
var MCPGates = []string{"accept", "revert", "override", "redo"}

// Allows reports whether [mcp] allow names gate.
func (m MCP) Allows(gate string) bool { return slices.Contains(m.Allow, gate) }

// Default returns the embedded defaults.
func Default() Config {
	return Config{
		Test: Test{Sandbox: "auto", Timeout: Duration(10 * time.Minute), MaxLogBytes: 10 << 20, MaxProcesses: 4096, MaxMemory: 4 << 30, MaxWrite: 2 << 30, BuildCache: true},
		Review: Review{
			PlanPersonas: []string{"product", "architecture", "implementation", "testing", "risk"},
			CodePersonas: []string{"correctness", "tests", "security", "maintainability"},
		},
		Context: Context{MaxContextBytes: 200_000, MaxOutputTokens: 16_000},
		// A one-file change takes a handful of turns (search, read, edit,
		// test, finish); 30 leaves room for a multi-file change while a
		// model that loops is stopped before it costs much.
		Tools: Tools{MaxTurns: 30, MaxTestRuns: 3},
		// What a careful user would allow one task: a few dozen rounds of
		// planning, review and codegen with a mid-size model.
		Budgets: Budgets{Calls: 300, TokensIn: 5_000_000, TokensOut: 1_000_000, CostUSD: 25, WallTime: Duration(2 * time.Hour)},
	}
}

// Error is a configuration error.
type Error struct {
	File string
	Key  string
	Msg  string
}

func (e *Error) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", e.File, e.Key, e.Msg)
}

// ErrInvalid is matched by every *Error.
var ErrInvalid = exit.NewSentinel(exit.Invalid, "invalid configuration")

// Is makes errors.Is(err, ErrInvalid) true.
func (e *Error) Is(target error) bool { return target == ErrInvalid }

// Load reads orchDir/config.toml over the defaults. A missing file is the
// defaults.
func Load(orchDir string) (Config, error) {
	path := filepath.Join(orchDir, FileName)
	cfg := Default()
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return cfg, nil
	case err != nil:
		return cfg, &Error{File: path, Msg: err.Error()}
	case !fi.Mode().IsRegular():
		return cfg, &Error{File: path, Msg: "expected a regular file"}
	case fi.Size() > maxBytes:
		return cfg, &Error{File: path, Msg: fmt.Sprintf("expected at most %d bytes, got %d", maxBytes, fi.Size())}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return cfg, &Error{File: path, Msg: err.Error()}
	}
	return Parse(path, data)
}

// Parse decodes configuration text over the defaults and validates it.
func Parse(file string, data []byte) (Config, error) {
	cfg := Default()
	md, err := toml.Decode(string(data), &cfg)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return cfg, &Error{File: file, Msg: fmt.Sprintf("line %d: %s", pe.Position.Line, pe.Message)}
		}
		return cfg, &Error{File: file, Msg: err.Error()}
	}
	if und := md.Undecoded(); len(und) > 0 {
		sort.Slice(und, func(i, j int) bool { return und[i].String() < und[j].String() })
		return cfg, &Error{File: file, Key: und[0].String(), Msg: unknownKeyMsg(und[0])}
	}
	return cfg, cfg.validate(file)
}

// envAllowRE is an entry of [test] env_allow: a name, or a non-empty
// prefix followed by "*".
var envAllowRE = lazyre.New(`^[A-Za-z_][A-Za-z0-9_]*\*?$`)

func (c *Config) validate(file string) error {
	bad := func(key, msg string) error { return &Error{File: file, Key: key, Msg: msg} }
	for i, g := range c.MCP.Allow {
		if !slices.Contains(MCPGates, g) {
			return bad(fmt.Sprintf("mcp.allow[%d]", i), fmt.Sprintf("expected one of %s, got %q", strings.Join(MCPGates, ", "), g))
		}
	}
	if err := c.Fleet.validate(bad); err != nil {
		return err
	}
	switch c.Test.Sandbox {
	case "auto", "bwrap", "none":
	default:
		return bad("test.sandbox", fmt.Sprintf("expected \"auto\", \"bwrap\" or \"none\", got %q", c.Test.Sandbox))
	}
	if c.Test.Timeout < 0 {
		return bad("test.timeout", "expected a positive duration")
	}
	if c.Test.MaxLogBytes < 0 {
		return bad("test.max_log_bytes", "expected a non-negative number")
	}
	if c.Test.MaxProcesses < MinProcesses || c.Test.MaxProcesses > MaxProcesses {
		return bad("test.max_processes", fmt.Sprintf("expected a number of processes from %d to %d, got %d", MinProcesses, MaxProcesses, c.Test.MaxProcesses))
	}
	if c.Test.MaxMemory < MinMemory {
		return bad("test.max_memory", fmt.Sprintf("expected at least %s, got %s", MinMemory, c.Test.MaxMemory))
	}
	if c.Test.MaxWrite < MinMemory {
		return bad("test.max_write", fmt.Sprintf("expected at least %s, got %s", MinMemory, c.Test.MaxWrite))
	}
	for i, cmd := range c.Test.Setup {
		if len(cmd) == 0 || cmd[0] == "" {
			return bad(fmt.Sprintf("test.setup[%d]", i), "expected a command (a string run by sh -c, or an array)")
		}
	}
	for i, p := range c.Test.ReadOnlyPaths {
		key := fmt.Sprintf("test.read_only_paths[%d]", i)
		clean := strings.TrimPrefix(p, "~/")
		switch {
		case strings.TrimSpace(p) == "" || strings.ContainsRune(p, 0):
			return bad(key, "expected a path, got an empty one")
		case filepath.IsAbs(p):
			if filepath.Clean(p) == "/" {
				return bad(key, "expected a folder or file, not the root folder")
			}
		case !filepath.IsLocal(clean):
			return bad(key, fmt.Sprintf("expected an absolute path, a path under ~/, or one relative to the repository that stays inside it, got %q", p))
		}
	}
	for i, name := range c.Test.EnvAllow {
		if !envAllowRE.MatchString(name) {
			return bad(fmt.Sprintf("test.env_allow[%d]", i), fmt.Sprintf("expected a variable name or a prefix ending in \"*\" (such as \"MYAPP_*\"), got %q; a lone \"*\" is refused, it would pass every secret", name))
		}
	}
	names := map[string]bool{}
	for i, s := range c.Test.Suites {
		key := fmt.Sprintf("test.suites[%d]", i)
		if strings.TrimSpace(s.Name) == "" || strings.ContainsAny(s.Name, "/\\ \x00") || s.Name == "." || s.Name == ".." {
			return bad(key+".name", fmt.Sprintf("expected a non-empty name without spaces or slashes, got %q", s.Name))
		}
		if names[s.Name] {
			return bad(key+".name", fmt.Sprintf("duplicate suite name %q", s.Name))
		}
		names[s.Name] = true
		switch s.Kind {
		case "":
			c.Test.Suites[i].Kind = "test"
		case "test", "lint":
		default:
			return bad(key+".kind", fmt.Sprintf("expected \"test\" or \"lint\", got %q", s.Kind))
		}
		if len(s.Command) == 0 {
			return bad(key+".command", "expected a command (a string run by sh -c, or an array)")
		}
		switch s.Format {
		case "", "go-json", "junit", "libtest", "tap", "unittest":
		default:
			return bad(key+".format", fmt.Sprintf("expected \"go-json\", \"junit\", \"libtest\", \"tap\", \"unittest\" or \"\" (judged by the exit code), got %q", s.Format))
		}
		if s.Format == "junit" && s.Report == "" {
			return bad(key+".report", "format junit needs the report path the command writes")
		}
		if s.Timeout < 0 {
			return bad(key+".timeout", "expected a positive duration")
		}
	}
	for name, p := range c.Providers {
		key := "providers." + name
		switch p.Type {
		case "openai", "anthropic":
		case "command":
			if len(p.Command) == 0 {
				return bad(key+".command", "a command provider needs a command")
			}
			if p.Protocol < 0 || p.Protocol > 2 {
				return bad(key+".protocol", fmt.Sprintf("expected command protocol version 1 or 2, got %d", p.Protocol))
			}
		case "script":
			if p.Script == "" {
				return bad(key+".script", "a script provider needs the script file's path")
			}
		default:
			return bad(key+".type", fmt.Sprintf("expected \"openai\", \"anthropic\", \"command\" or \"script\", got %q", p.Type))
		}
		if p.Tools != nil && p.Type != "openai" && p.Type != "anthropic" {
			return bad(key+".tools", "only an openai or anthropic provider has this switch (a command speaks tools with protocol = 2, a script when it replays tool calls)")
		}
		if p.Protocol != 0 && p.Type != "command" {
			return bad(key+".protocol", "only a command provider has a protocol version")
		}
		if p.APIKeyEnv != "" && strings.ContainsAny(p.APIKeyEnv, "= \t") {
			return bad(key+".api_key_env", "expected the NAME of an environment variable, not its value")
		}
		if p.MaxRetries < 0 {
			return bad(key+".max_retries", "expected a non-negative number")
		}
	}
	for role, ref := range map[string]string{"planner": c.Roles.Planner, "plan_reviewer": c.Roles.PlanReviewer, "codegen": c.Roles.Codegen, "code_reviewer": c.Roles.CodeReviewer, "accept_advisor": c.Roles.AcceptAdvisor} {
		if ref == "" {
			continue
		}
		name, _, _ := strings.Cut(ref, ":")
		if _, ok := c.Providers[name]; !ok {
			return bad("roles."+role, fmt.Sprintf("names provider %q, which is not defined under [providers]", name))
		}
	}
	for _, ps := range [][]string{c.Review.PlanPersonas, c.Review.CodePersonas} {
		seen := map[string]bool{}
		for _, p := range ps {
			if !validPersona(p) || seen[p] {
				return bad("review", fmt.Sprintf("personas must be unique names of lower-case letters, digits, '-' and '_' (they name files), got %q", p))
			}
			seen[p] = true
		}
	}
	switch c.Review.Calls {
	case "", ReviewCallsPanel, ReviewCallsPerPersona:
	default:
		return bad("review.calls", fmt.Sprintf("expected %q (one conversation for the whole panel) or %q (one per persona), got %q", ReviewCallsPanel, ReviewCallsPerPersona, c.Review.Calls))
	}
	if err := checkBudget(c.Budgets.Task(), "budgets", bad); err != nil {
		return err
	}
	for name, b := range c.Budgets.Phase {
		switch name {
		case "planning", "plan_review", "codegen", "review", "accept":
		default:
			return bad("budgets.phase."+name, "expected a phase that calls models: planning, plan_review, codegen, review or accept")
		}
		if err := checkBudget(b, "budgets.phase."+name, bad); err != nil {
			return err
		}
	}
	for model, p := range c.Prices {
		if strings.TrimSpace(model) == "" || !finiteNonNegative(p.Input) || !finiteNonNegative(p.Output) || !finiteNonNegative(p.CachedInput) || !finiteNonNegative(p.CacheWrite) {
			return bad("prices."+model, "expected a model name with non-negative input, output, cached_input and cache_write prices (USD per million tokens)")
		}
	}
	isRole := func(r string) bool {
		for _, m := range ModelRoles {
			if r == m {
				return true
			}
		}
		return false
	}
	for _, role := range sortedKeys(c.MaxOutputTokens) {
		n := c.MaxOutputTokens[role]
		if !isRole(role) {
			return bad("max_output_tokens."+role, fmt.Sprintf("expected a role: %s", strings.Join(ModelRoles, ", ")))
		}
		if n <= 0 || n > MaxOutputTokensMax {
			return bad("max_output_tokens."+role, fmt.Sprintf("expected a number of tokens from 1 to %d, got %d", MaxOutputTokensMax, n))
		}
	}
	for _, role := range sortedKeys(c.ReasoningEffort) {
		e := c.ReasoningEffort[role]
		if !isRole(role) {
			return bad("reasoning_effort."+role, fmt.Sprintf("expected a role: %s", strings.Join(ModelRoles, ", ")))
		}
		ok := false
		for _, v := range ReasoningEfforts {
			ok = ok || e == v
		}
		if !ok {
			return bad("reasoning_effort."+role, fmt.Sprintf("expected one of %s, got %q", strings.Join(ReasoningEfforts, ", "), e))
		}
	}
	if c.Context.MaxContextBytes < 0 || c.Context.MaxOutputTokens < 0 {
		return bad("context", "expected non-negative numbers")
	}
	for i, p := range c.Context.AllowPaths {
		if err := visibility.CheckAllowPattern(p); err != nil {
			return bad(fmt.Sprintf("context.allow_paths[%d]", i), err.Error())
		}
	}
	if c.Tools.MaxTurns < 1 || c.Tools.MaxTurns > 500 {
		return bad("tools.max_turns", fmt.Sprintf("expected a number of model turns from 1 to 500, got %d", c.Tools.MaxTurns))
	}
	if c.Tools.MaxTestRuns < 0 || c.Tools.MaxTestRuns > 100 {
		return bad("tools.max_test_runs", fmt.Sprintf("expected a number of test runs from 0 (no run_tests) to 100, got %d", c.Tools.MaxTestRuns))
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func checkBudget(b Budget, key string, bad func(key, msg string) error) error {
	switch {
	case b.Calls < 0:
		return bad(key+".calls", "expected a non-negative number (0 = no limit)")
	case b.TokensIn < 0:
		return bad(key+".tokens_in", "expected a non-negative number (0 = no limit)")
	case b.TokensOut < 0:
		return bad(key+".tokens_out", "expected a non-negative number (0 = no limit)")
	case !finiteNonNegative(b.CostUSD):
		return bad(key+".cost_usd", fmt.Sprintf("expected a non-negative number (0 = no limit), got %v", b.CostUSD))
	case b.WallTime < 0:
		return bad(key+".wall_time", "expected a non-negative duration (0 = no limit)")
	}
	return nil
}

// finiteNonNegative reports whether a price or a cost limit is a number
// from 0 up. TOML's nan and inf are refused: a NaN cost is never above a
// limit (a budget that never trips) and neither can be written to a
// transcript as JSON.
func finiteNonNegative(f float64) bool { return f >= 0 && !math.IsInf(f, 1) }

// validPersona reports whether p is a persona name: 1 to 40 lower-case
// letters, digits, '-' and '_', starting with a letter or digit. Checked
// by hand: every command validates the default personas, and a regular
// expression would be compiled for it on every start.
func validPersona(p string) bool {
	if p == "" || len(p) > 40 || p[0] == '-' || p[0] == '_' {
		return false
	}
	for _, c := range []byte(p) {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' && c != '_' {
			return false
		}
	}
	return true
}

// Duration is a time.Duration written as a string ("90s", "10m").
type Duration time.Duration

// UnmarshalText parses a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("expected a duration like \"90s\" or \"10m\", got %q", b)
	}
	*d = Duration(v)
	return nil
}

// MarshalText writes the duration as a string.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// Std returns the time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// Command is an argv, written in TOML as an array of strings or as one
// string that is run by `sh -c`.
type Command []string

// UnmarshalTOML accepts a string or an array of strings.
func (c *Command) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case string:
		if strings.TrimSpace(x) == "" {
			return errors.New("expected a non-blank command")
		}
		*c = Command{"sh", "-c", x}
	case []any:
		out := make(Command, 0, len(x))
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return fmt.Errorf("expected an array of strings, got an element of type %T", e)
			}
			out = append(out, s)
		}
		if len(out) == 0 || strings.TrimSpace(out[0]) == "" {
			return errors.New("expected a non-empty command array")
		}
		*c = out
	default:
		return fmt.Errorf("expected a string or an array of strings, got %T", v)
	}
	return nil
}

// String renders the command for people.
func (c Command) String() string {
	if len(c) == 3 && c[0] == "sh" && c[1] == "-c" {
		return c[2]
	}
	return strings.Join(c, " ")
}

// fleetAddressRE is [fleet] address: host:port.
var fleetAddressRE = lazyre.New(`^[A-Za-z0-9._\-\[\]:]+:[0-9]{1,5}$`)

// envNameRE is the name of an environment variable.
var envNameRE = lazyre.New(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (f Fleet) validate(bad func(key, msg string) error) error {
	if f.Address == "" {
		for _, kv := range [][2]string{{"namespace", f.Namespace}, {"ca_file", f.CAFile}, {"cert_file", f.CertFile}, {"key_file", f.KeyFile}, {"server_name", f.ServerName}, {"api_key_env", f.APIKeyEnv}, {"remote", f.Remote}, {"binary", f.Binary}} {
			if kv[1] != "" {
				return bad("fleet."+kv[0], "set without fleet.address: expected address = \"HOST:PORT\" of the Temporal service too")
			}
		}
		if f.TLS {
			return bad("fleet.tls", "set without fleet.address: expected address = \"HOST:PORT\" of the Temporal service too")
		}
		return nil
	}
	if !fleetAddressRE.MatchString(f.Address) {
		return bad("fleet.address", fmt.Sprintf("expected HOST:PORT of the Temporal frontend (e.g. \"127.0.0.1:7233\" or \"NS.ACCT.tmprl.cloud:7233\"), got %q", f.Address))
	}
	if f.APIKeyEnv != "" && !envNameRE.MatchString(f.APIKeyEnv) {
		return bad("fleet.api_key_env", "expected the NAME of an environment variable, not its value")
	}
	if (f.CertFile == "") != (f.KeyFile == "") {
		return bad("fleet.cert_file", "expected cert_file and key_file together (mutual TLS), or neither")
	}
	if (f.CAFile != "" || f.CertFile != "" || f.ServerName != "") && !f.TLS && f.APIKeyEnv == "" {
		return bad("fleet.tls", "expected tls = true with ca_file, cert_file or server_name")
	}
	return nil
}
