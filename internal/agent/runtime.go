package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/durable"
	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/llm"
	"github.com/orchdev/orch/internal/visibility"
	"github.com/orchdev/orch/internal/work"
)

// Roles of the agents, as used in config [roles] and llm.Request.Role.
const (
	RolePlanner       = "planner"
	RolePlanReviewer  = "plan_reviewer"
	RoleCodegen       = "codegen"
	RoleCodeReviewer  = "code_reviewer"
	RoleAcceptAdvisor = "accept_advisor"
)

// Runtime is what every agent shares. It is safe for concurrent use by the
// goroutines of one phase run (reviewers run concurrently).
type Runtime struct {
	Project Project
	Config  config.Config
	Getenv  func(string) string
	// Fresh bypasses the call cache.
	Fresh bool
	// OnToken, when set, receives streamed tokens with the role.
	OnToken func(role, token string)
	// OnTool, when set, hears of every tool call of a role's tool loop
	// after it ran: its name, its arguments and whether it was refused.
	// Called from the goroutine running the loop.
	OnTool func(role, name string, args json.RawMessage, refused bool)
	// Notes collects remarks for the user (which provider was chosen…).
	Notes []string
	// Options are passed to llm.New (tests inject an HTTP client, a clock).
	Options []llm.Option
	// Now is the clock for transcript events.
	Now func() time.Time
	// UserCache is orch's folder in the user cache (~/.cache/orch): it
	// remembers the servers that refused tool calling. "" remembers them
	// for this process only.
	UserCache string
	// Stderr hears what is said to the user once (a server refusing
	// tools); nil means os.Stderr.
	Stderr io.Writer
	// MapProgress, when set, receives the repository map's progress line
	// during a first index that takes more than a second (repomap's
	// Options.Progress): the CLI sets it in a terminal, not with --json.
	MapProgress io.Writer

	mu        sync.Mutex
	providers map[string]resolved
	spent     map[string]*spend // per task and run, guarded by mu
	refused   map[string]bool   // toolsKey → tools refused, guarded by mu
}

type resolved struct {
	p     llm.Provider
	cfg   llm.Config
	model string
}

// NewRuntime builds a runtime for project p.
func NewRuntime(p Project, cfg config.Config, getenv func(string) string) *Runtime {
	rt := &Runtime{Project: p, Config: cfg, Getenv: getenv, Now: time.Now, providers: map[string]resolved{}, spent: map[string]*spend{}, refused: map[string]bool{}}
	rt.UserCache = userCache(getenv)
	return rt
}

// userCache is orch's folder in the user cache, as os.UserCacheDir finds
// it on Unix but from getenv: $XDG_CACHE_HOME/orch, else
// $HOME/.cache/orch; "" without either.
func userCache(getenv func(string) string) string {
	if getenv == nil {
		return ""
	}
	if d := getenv("XDG_CACHE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "orch")
	}
	if h := getenv("HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".cache", "orch")
	}
	return ""
}

// roleRef returns the [roles] entry of a role ("plan_reviewer:risk" looks
// up plan_reviewer).
func (rt *Runtime) roleRef(role string) string {
	base, _, _ := strings.Cut(role, ":")
	r := rt.Config.Roles
	return map[string]string{
		RolePlanner: r.Planner, RolePlanReviewer: r.PlanReviewer, RoleCodegen: r.Codegen,
		RoleCodeReviewer: r.CodeReviewer, RoleAcceptAdvisor: r.AcceptAdvisor,
	}[base]
}

// Provider returns the provider and model serving role: [roles] names a
// provider of [providers] (optionally "name:model"); without one, a
// provider named "default", the only configured provider, or one chosen
// from the environment (ANTHROPIC_API_KEY, OPENAI_API_KEY, OLLAMA_HOST).
func (rt *Runtime) Provider(role string) (llm.Provider, llm.Config, string, error) {
	ref := rt.roleRef(role)
	name, model, _ := strings.Cut(ref, ":")
	if name == "" {
		switch {
		case rt.Config.Providers["default"].Type != "":
			name = "default"
		case len(rt.Config.Providers) == 1:
			for n := range rt.Config.Providers {
				name = n
			}
		}
	}
	key := name + "\x00" + model
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if r, ok := rt.providers[key]; ok {
		return r.p, r.cfg, r.model, nil
	}
	var lc llm.Config
	if name == "" {
		c, note, err := llm.FromEnvironment(rt.Getenv)
		if err != nil {
			return nil, lc, "", err
		}
		lc = c
		rt.Notes = append(rt.Notes, note)
	} else {
		pc, ok := rt.Config.Providers[name]
		if !ok {
			return nil, lc, "", &config.Error{File: filepath.Join(rt.Project.OrchDir(), config.FileName), Key: "roles", Msg: fmt.Sprintf("provider %q is not defined", name)}
		}
		lc = llm.Config{Type: pc.Type, Name: name, BaseURL: pc.BaseURL, Model: pc.Model, APIKeyEnv: pc.APIKeyEnv,
			Command: pc.Command, CommandProtocol: pc.Protocol, Tools: pc.Tools, ScriptFile: rt.projectPath(pc.Script), Timeout: pc.Timeout.Std(), MaxRetries: pc.MaxRetries}
		if lc.Type == llm.TypeScript {
			// The cursors belong to one script: a changed script starts
			// over instead of inheriting the old one's positions.
			sum := sha256.New()
			if data, err := os.ReadFile(lc.ScriptFile); err == nil {
				sum.Write(data)
			}
			lc.ScriptStateFile = filepath.Join(rt.Project.OrchDir(), "cache", fmt.Sprintf("script-state-%s-%x.json", name, sum.Sum(nil)[:6]))
		}
	}
	if err := os.MkdirAll(filepath.Join(rt.Project.OrchDir(), "cache"), 0o755); err != nil {
		return nil, lc, "", fmt.Errorf("create the cache folder: %w", err)
	}
	if name != "" && (lc.Type == llm.TypeOpenAI || lc.Type == llm.TypeAnthropic) {
		// The model the provider will use, resolved here so that the
		// cache key and the prices see it, and said to the user.
		choice := llm.ChooseModel(lc, rt.Getenv)
		lc.Model = choice.Model
		if model != "" {
			rt.Notes = append(rt.Notes, fmt.Sprintf("provider %s: model %s for role %s, from [roles]", name, model, role))
		} else if n := choice.Note(name); n != "" {
			rt.Notes = append(rt.Notes, n)
		}
	}
	p, err := llm.New(lc, rt.Getenv, rt.Options...)
	if err != nil {
		return nil, lc, "", err
	}
	priced := model
	if priced == "" {
		priced = lc.Model
	}
	if n := llm.UnpricedNote(priced, priceOverrides(rt.Config.Prices), rt.hasCostBudget()); n != "" {
		rt.Notes = append(rt.Notes, n)
	}
	rt.providers[key] = resolved{p: p, cfg: lc, model: model}
	return p, lc, model, nil
}

// SetProvider makes p, described by cfg, the provider that the name of
// [providers] serves roles with, in place of what the configuration says
// ("default" serves every role [roles] does not assign). For tests and
// programs embedding orch with a model of their own.
func (rt *Runtime) SetProvider(name string, p llm.Provider, cfg llm.Config) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.providers[name+"\x00"] = resolved{p: p, cfg: cfg}
}

// Limits fills in what req leaves unset of its role's output limit
// ([max_output_tokens], else [context] max_output_tokens) and reasoning
// effort ([reasoning_effort]).
func (rt *Runtime) Limits(req *llm.Request) {
	if req.MaxTokens == 0 {
		req.MaxTokens = rt.Config.OutputTokens(req.Role)
	}
	if req.ReasoningEffort == "" {
		req.ReasoningEffort = rt.Config.Effort(req.Role)
	}
}

// Policy is the visibility policy of the configuration: which tracked
// files may reach a model.
func (rt *Runtime) Policy() (visibility.Policy, error) {
	p, err := visibility.NewPolicy(rt.Config.Context.AllowPaths)
	if err != nil {
		return p, &config.Error{File: filepath.Join(rt.Project.OrchDir(), config.FileName), Key: "context.allow_paths", Msg: err.Error()}
	}
	return p, nil
}

// projectPath resolves a path from the configuration against the
// repository's top level.
func (rt *Runtime) projectPath(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(rt.Project.RootDir(), p)
}

// Project is what the runtime uses of orch's project (a *task.Project):
// its folders. A task's spend comes in each run's work.Input.
type Project interface {
	// RootDir is the repository's folder; OrchDir orch's folder in it.
	RootDir() string
	OrchDir() string
}

// Call is one model call of a phase run: cached by a hash of (provider,
// model, messages, schema) unless Fresh, and logged as a model_call event.
type Call struct {
	rt  *Runtime
	run *work.Input
}

// For returns the caller for the run in.
func (rt *Runtime) For(in work.Input) *Call { return &Call{rt: rt, run: &in} }

// Runtime returns the runtime c belongs to.
func (c *Call) Runtime() *Runtime { return c.rt }

// loggedProvider wraps a provider with the cache and the transcript.
type loggedProvider struct {
	c     *Call
	inner llm.Provider
	cfg   llm.Config
	model string
	// last is the newest uncached answer, cached only once the caller has
	// accepted it (an answer that fails validation is never replayed).
	mu   sync.Mutex
	last *pending
}

type pending struct {
	key  string
	resp llm.Response
}

func (lp *loggedProvider) Name() string { return lp.inner.Name() }

func (lp *loggedProvider) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	defer firstCallDone(ctx)
	req = lp.prepare(req)
	if req.OnToken == nil && lp.c.rt.OnToken != nil {
		role := req.Role
		req.OnToken = func(tok string) { lp.c.rt.OnToken(role, tok) }
	}
	// The script provider replays a file: caching it would stop the
	// script from advancing.
	cacheable := lp.cfg.Type != llm.TypeScript
	key := cacheKey(lp.cfg, req)
	if cacheable && !lp.c.rt.Fresh {
		if resp, ok := lp.c.rt.cacheGet(key); ok {
			lp.c.log(ctx, lp.inner.Name(), req, resp, nil, true)
			return resp, nil
		}
	}
	var booked CostLine
	if run := lp.c.run; run != nil {
		model := req.Model
		if model == "" {
			model = lp.cfg.Model
		}
		if err := lp.c.rt.checkPriced(lp.cfg, model); err != nil {
			lp.c.logBudget(ctx, req, err)
			return llm.Response{}, err
		}
		b, err := lp.c.rt.Reserve(*run, model, req)
		if err != nil {
			lp.c.logBudget(ctx, req, err)
			return llm.Response{}, err
		}
		booked = b
	}
	resp, err := lp.inner.Complete(ctx, req)
	if resp.Provider == "" {
		resp.Provider = lp.inner.Name()
	}
	if err == nil {
		// Cut off by the output limit: not a format mistake to re-send,
		// and never cached.
		err = llm.CheckTruncated(req, resp)
	}
	if e, ok := isToolsRefused(err); ok && len(req.Tools) > 0 {
		lp.c.rt.rememberToolsRefused(lp.cfg, req.Model, e)
	}
	if run := lp.c.run; run != nil {
		lp.c.rt.Settle(*run, booked, resp)
	}
	lp.c.log(ctx, lp.inner.Name(), req, resp, err, false)
	if err == nil && cacheable {
		lp.mu.Lock()
		lp.last = &pending{key: key, resp: resp}
		lp.mu.Unlock()
	}
	return resp, err
}

// firstCallKey holds, in a context, what to do once its first model call
// is answered (WithFirstCall).
type firstCallKey struct{}

// WithFirstCall returns ctx whose first model call, once answered (from the
// provider or the cache) or failed, calls done; later calls do not. A
// review panel asked persona by persona sends the other personas then, so
// that they read the shared prompt from the provider's cache the first
// call wrote.
func WithFirstCall(ctx context.Context, done func()) context.Context {
	var once sync.Once
	return context.WithValue(ctx, firstCallKey{}, func() { once.Do(done) })
}

func firstCallDone(ctx context.Context) {
	if f, ok := ctx.Value(firstCallKey{}).(func()); ok {
		f()
	}
}

// keep caches the newest answer: the caller accepted it.
func (lp *loggedProvider) keep() {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	if lp.last != nil {
		lp.c.rt.cachePut(lp.last.key, lp.last.resp)
		lp.last = nil
	}
}

// keepFor caches resp, the answer accepted after re-prompting, as the
// answer to the original request too: the same request next time is
// answered from the cache without repeating the retries.
func (lp *loggedProvider) keepFor(orig llm.Request, resp llm.Response) {
	if lp.cfg.Type == llm.TypeScript {
		return
	}
	lp.c.rt.cachePut(cacheKey(lp.cfg, lp.prepare(orig)), resp)
}

// prepare completes req as it is sent and cached: the role's model, and
// its output limit and reasoning effort ([max_output_tokens],
// [reasoning_effort]) where req leaves them unset.
func (lp *loggedProvider) prepare(req llm.Request) llm.Request {
	if req.Model == "" {
		req.Model = lp.model
	}
	lp.c.rt.Limits(&req)
	return req
}

// Text asks for a free-text answer.
func (c *Call) Text(ctx context.Context, req llm.Request) (llm.Response, error) {
	p, err := c.provider(req.Role)
	if err != nil {
		return llm.Response{}, err
	}
	resp, err := p.Complete(ctx, req)
	if err == nil {
		p.keep()
	}
	return resp, err
}

func (c *Call) provider(role string) (*loggedProvider, error) {
	p, cfg, model, err := c.rt.Provider(role)
	if err != nil {
		return nil, err
	}
	return &loggedProvider{c: c, inner: p, cfg: cfg, model: model}, nil
}

// JSON asks for a structured answer validated by validate, re-prompting
// with the validation error (bounded). On final failure the model's last
// raw answer is staged under <phase>/raw/ so it is kept with the failed
// run, and the error says where.
func JSON[T any](ctx context.Context, c *Call, req llm.Request, validate func([]byte) (T, error)) (T, error) {
	p, err := c.provider(req.Role)
	if err != nil {
		var zero T
		return zero, err
	}
	v, resps, err := llm.CompleteJSON(ctx, p, req, validate, llm.DefaultJSONAttempts)
	if err == nil {
		p.keep()
		if len(resps) > 1 {
			p.keepFor(req, resps[len(resps)-1])
		}
	}
	var ie *llm.InvalidResponseError
	if errors.As(err, &ie) && c.run != nil {
		name := fmt.Sprintf("%s/raw/%s.txt", c.run.Phase, strings.ReplaceAll(req.Role, ":", "-"))
		if c.run.Out.Write(name, []byte(ie.Raw)) == nil {
			// The orchestrator picks the failed run's folder when it
			// keeps the output; the command that ran the phase names it.
			err = fmt.Errorf("%w (the model's last answer is kept with the failed run's output, as %s)", err, name)
		}
	}
	return v, err
}

// log appends a model_call event; failures to log are reported on the
// event of the phase (they never hide the model's answer).
func (c *Call) log(ctx context.Context, provider string, req llm.Request, resp llm.Response, callErr error, cached bool) {
	if c.run == nil {
		return
	}
	c.run.Record(c.rt.ModelCallEvent(c.run.Phase, provider, req, resp, callErr, cached))
}

// ModelCallEvent is the model_call event of a call of phase answered by
// resp (or failed with callErr), from the cache or not; provider names
// the provider where resp does not.
func (rt *Runtime) ModelCallEvent(phase lifecycle.Phase, provider string, req llm.Request, resp llm.Response, callErr error, cached bool) event.ModelCall {
	call := event.ModelCall{
		Phase: phase, Role: req.Role, Cached: cached,
		Provider: resp.Provider, Model: resp.Model,
		TokensIn: resp.Usage.InputTokens, TokensOut: resp.Usage.OutputTokens,
		LatencyMS: resp.Latency.Milliseconds(),
	}
	if call.Provider == "" {
		call.Provider = provider
	}
	call.CachedTokensIn, call.CacheWriteTokens = resp.Usage.CachedInputTokens, resp.Usage.CacheWriteTokens
	if len(req.Tools) > 0 {
		// One turn of a tool loop: which turn, and what the model asked.
		call.Turn = 1
		for _, m := range req.Messages {
			if m.Role == llm.RoleAssistant {
				call.Turn++
			}
		}
		call.ToolCalls = make([]string, len(resp.ToolCalls))
		for i, tc := range resp.ToolCalls {
			call.ToolCalls[i] = tc.Name
		}
	}
	var te *llm.TruncatedError
	call.Truncated = errors.As(callErr, &te)
	if call.Model == "" {
		call.Model = req.Model
	}
	if !cached {
		if cost, ok := rt.Cost(call.Model, resp.Usage); ok {
			call.CostUSD = &cost
		}
	}
	if callErr != nil {
		call.Error = callErr.Error()
	}
	return call
}

// logBudget records a call refused by a budget.
func (c *Call) logBudget(ctx context.Context, req llm.Request, err error) {
	if c.run == nil {
		return
	}
	c.run.Record(BudgetEvent(c.run.Phase, req.Role, err))
}

// BudgetEvent is the budget_exceeded event of a refused call.
func BudgetEvent(phase lifecycle.Phase, role string, err error) event.BudgetExceeded {
	ev := event.BudgetExceeded{Phase: phase, Role: role, Error: err.Error()}
	var be *BudgetError
	if errors.As(err, &be) {
		ev.BudgetLimit = &event.BudgetLimit{Scope: be.Scope, Limit: be.Limit, Spent: be.Spent, Max: be.Max, Key: be.Key}
	}
	return ev
}

// cacheKey hashes what determines an answer. The key never contains a
// secret: the config holds the NAME of the key variable only.
func cacheKey(cfg llm.Config, req llm.Request) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	fields := []any{cfg.Type, cfg.Name, cfg.BaseURL, cfg.Model, cfg.Command, req.Model, req.Role, req.Messages, string(req.Schema), req.SchemaName, req.MaxTokens, req.Temperature}
	// Tools and the reasoning effort change the answer; requests without
	// them keep the keys they always had.
	if len(req.Tools) > 0 || req.ReasoningEffort != "" {
		fields = append(fields, req.Tools, req.ReasoningEffort)
	}
	_ = enc.Encode(fields)
	return hex.EncodeToString(h.Sum(nil))
}

type cached struct {
	Text      string         `json:"text"`
	ToolCalls []llm.ToolCall `json:"tool_calls,omitempty"`
	// ProviderState goes back with the answer in the next turn (Anthropic's
	// thinking blocks): a replayed turn keeps it.
	ProviderState json.RawMessage `json:"provider_state,omitempty"`
	Usage         llm.Usage       `json:"usage"`
	Model         string          `json:"model"`
	Provider      string          `json:"provider"`
}

func (rt *Runtime) cachePath(key string) string {
	return filepath.Join(rt.Project.OrchDir(), "cache", "llm", key[:2], key+".json")
}

func (rt *Runtime) cacheGet(key string) (llm.Response, bool) {
	data, err := os.ReadFile(rt.cachePath(key))
	if err != nil {
		return llm.Response{}, false
	}
	var c cached
	if json.Unmarshal(data, &c) != nil {
		return llm.Response{}, false
	}
	return llm.Response{Text: c.Text, ToolCalls: c.ToolCalls, ProviderState: c.ProviderState, Usage: c.Usage, Model: c.Model, Provider: c.Provider, StopReason: "cached"}, true
}

func (rt *Runtime) cachePut(key string, resp llm.Response) {
	path := rt.cachePath(key)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return
	}
	data, err := json.Marshal(cached{Text: resp.Text, ToolCalls: resp.ToolCalls, ProviderState: resp.ProviderState, Usage: resp.Usage, Model: resp.Model, Provider: resp.Provider})
	if err != nil {
		return
	}
	_ = durable.WriteFile(path, data, 0o644)
}
