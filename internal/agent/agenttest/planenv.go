package agenttest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/llm/llmtest"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/task"
)

// PlanEnv is a real git repository with .orch/ and one task in planning.
type PlanEnv struct {
	T     testing.TB
	Root  string
	P     *task.Project
	O     *orchestrator.Orchestrator
	ID    string
	Env   map[string]string
	Clock *Clock
}

// Clock is a goroutine-safe fake clock advancing one second per reading.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Second)
	return c.now
}

// RepoFiles is the repository the tests plan against.
var RepoFiles = map[string]string{
	"README.md":      "# fetcher\n\nA tiny HTTP fetcher. Fetch retries nothing yet.\n",
	"go.mod":         "module example.com/fetcher\n\ngo 1.22\n",
	"fetch/fetch.go": "package fetch\n\n// Fetch gets a URL once.\nfunc Fetch(url string) error { return nil }\n",
}

const Brief = "add retry with exponential backoff to Fetch"

// NewPlanEnv builds the repository (files over plRepoFiles), orch's project
// with configTOML as .orch/config.toml, and task "t1" with brief.
func NewPlanEnv(t testing.TB, files map[string]string, brief, configTOML string) *PlanEnv {
	t.Helper()
	root := t.TempDir()
	all := map[string]string{}
	for k, v := range RepoFiles {
		all[k] = v
	}
	for k, v := range files {
		all[k] = v
	}
	gittest.WriteFiles(t, root, all)
	Git(t, root, "init", "-q")
	Git(t, root, "add", "-A")
	Git(t, root, "commit", "-q", "-m", "initial")
	p, _, err := task.InitProject(root)
	if err != nil {
		t.Fatal(err)
	}
	// The script provider keeps its cursors in .orch/cache/, which nothing
	// creates yet (reported to the runtime's owner).
	if err := os.MkdirAll(filepath.Join(p.Dir, "cache"), 0o755); err != nil {
		t.Fatal(err)
	}
	if configTOML != "" {
		if err := os.WriteFile(filepath.Join(p.Dir, config.FileName), []byte(configTOML), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	clock := &Clock{now: time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)}
	if _, _, err := p.CreateTask("t1", brief, clock.Now()); err != nil {
		t.Fatal(err)
	}
	o := orchestrator.New(p)
	o.Now = clock.Now
	o.Wait = 5 * time.Second
	return &PlanEnv{T: t, Root: root, P: p, O: o, ID: "t1", Env: map[string]string{}, Clock: clock}
}

// Git runs git in dir with a fixed identity, isolated from the host's
// configuration (gittest.Git).
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	return gittest.Git(t, dir, args...)
}

// Runtime builds a fresh Runtime (a new orch process, as the CLI does).
func (e *PlanEnv) Runtime() *agent.Runtime {
	e.T.Helper()
	cfg, err := config.Load(e.P.Dir)
	if err != nil {
		e.T.Fatal(err)
	}
	rt := agent.NewRuntime(e.P, cfg, func(k string) string { return e.Env[k] })
	rt.Now = e.Clock.Now
	// orch's user cache (servers that refused tools) is the
	// environment's, never the machine's.
	rt.UserCache = filepath.Join(e.Root+".usercache", "orch")
	return rt
}

func (e *PlanEnv) TaskDir() string { return filepath.Join(e.P.TasksDir(), e.ID) }

func (e *PlanEnv) Read(rel string) []byte {
	e.T.Helper()
	data, err := os.ReadFile(filepath.Join(e.TaskDir(), filepath.FromSlash(rel)))
	if err != nil {
		e.T.Fatal(err)
	}
	return data
}

func (e *PlanEnv) Exists(rel string) bool {
	_, err := os.Lstat(filepath.Join(e.TaskDir(), filepath.FromSlash(rel)))
	return err == nil
}

func (e *PlanEnv) State() task.State {
	e.T.Helper()
	t, err := e.P.Open(e.ID)
	if err != nil {
		e.T.Fatal(err)
	}
	st, err := t.ReadState()
	if err != nil {
		e.T.Fatal(err)
	}
	return st
}

// kinds returns the transcript's event kinds.
func (e *PlanEnv) Events() []task.Event {
	e.T.Helper()
	t, err := e.P.Open(e.ID)
	if err != nil {
		e.T.Fatal(err)
	}
	evs, err := t.Transcript()
	if err != nil {
		e.T.Fatal(err)
	}
	return evs
}

// writeScript writes a script provider file outside the repository and
// returns the configuration using it.
func ScriptConfig(t testing.TB, entries ...any) string {
	t.Helper()
	data, err := json.Marshal(map[string]any{"responses": entries})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("[providers.default]\ntype = \"script\"\nscript = %q\n", path)
}

// ScriptEntry is one script response.
func ScriptEntry(role string, v any) map[string]any { return map[string]any{"role": role, "json": v} }

// PlannerAnswer is a planner answer.
func PlannerAnswer(title string, files []map[string]any, questions ...map[string]any) map[string]any {
	if files == nil {
		files = []map[string]any{}
	}
	if questions == nil {
		questions = []map[string]any{}
	}
	return map[string]any{
		"title": title, "goals": []string{"Fetch survives transient failures"},
		"scope": map[string]any{"in_scope": []string{"Fetch"}, "out_of_scope": []string{"other packages"}},
		"work":  map[string]any{"tasks": []map[string]any{{"title": "add the retry loop", "detail": "wrap the call"}}},
		"risks": []string{"retry storms"}, "assumptions": []string{"errors are transient"},
		"acceptance_criteria": []string{"a failing server is retried"},
		"test_plan":           map[string]any{"strategy": "unit tests with a fake server", "cases": []string{"retries then succeeds"}},
		"file_plan":           files,
		"questions":           questions,
	}
}

func FileEntry(path, intent string) map[string]any {
	return map[string]any{"path": path, "intent": intent, "summary": intent + " " + path}
}

func Question(id, text string, blocking bool) map[string]any {
	return map[string]any{"id": id, "text": text, "blocking": blocking}
}

// PlanPersonas are the default plan reviewers, in configuration order.
var PlanPersonas = []string{"product", "architecture", "implementation", "testing", "risk"}

// PanelAnswer is a review panel's answer (one conversation for the whole
// panel): verdict(persona) for each persona, tagged with it.
func PanelAnswer(personas []string, verdict func(persona string) map[string]any) map[string]any {
	var reviews []any
	for _, p := range personas {
		v := map[string]any{"persona": p}
		for k, x := range verdict(p) {
			v[k] = x
		}
		reviews = append(reviews, v)
	}
	return map[string]any{"reviews": reviews}
}

// Verdict is a reviewer answer.
func Verdict(ok bool, severity, decision string, issues ...string) map[string]any {
	if issues == nil {
		issues = []string{}
	}
	return map[string]any{"ok": ok, "severity": severity, "decision": decision,
		"blocking_issues": issues, "suggestions": []string{}, "summary": "verdict " + severity}
}

// OpenAIAPI is an OpenAI-compatible chat completions server: each request
// is answered by answer(body) with the assistant's content. It records the
// requests and the highest number of requests in flight at once.
type OpenAIAPI struct {
	srv    *llmtest.Server
	answer func(body ChatRequest) string
	// Barrier, when > 0, holds each request until that many are in
	// flight (or release is closed), to prove concurrency without timing.
	Barrier int
	// Warm is how many first requests are answered without waiting at
	// the barrier (a panel asked persona by persona sends its first call
	// alone).
	Warm    int
	Release chan struct{}
	Latency time.Duration

	mu       sync.Mutex
	inflight int
	peak     int
}

type ChatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	ResponseFormat struct {
		JSONSchema struct {
			Name string `json:"name"`
		} `json:"json_schema"`
	} `json:"response_format"`
}

func (r ChatRequest) System() string {
	for _, m := range r.Messages {
		if m.Role == "system" {
			return m.Content
		}
	}
	return ""
}

// All joins every message's text (a reviewer's persona comes last).
func (r ChatRequest) All() string {
	var b strings.Builder
	for _, m := range r.Messages {
		b.WriteString(m.Content)
		b.WriteString("\n")
	}
	return b.String()
}

func (r ChatRequest) User() string {
	for _, m := range r.Messages {
		if m.Role == "user" {
			return m.Content
		}
	}
	return ""
}

func NewOpenAIAPI(t testing.TB, answer func(ChatRequest) string) *OpenAIAPI {
	f := &OpenAIAPI{answer: answer, Release: make(chan struct{})}
	f.srv = llmtest.NewServer(t, f.serve)
	return f
}

func (f *OpenAIAPI) serve(w http.ResponseWriter, r *http.Request, req llmtest.Request) {
	var body ChatRequest
	if req.Path != "/v1/chat/completions" || json.Unmarshal(req.Raw, &body) != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.inflight++
	f.peak = max(f.peak, f.inflight)
	reached := f.Barrier > 0 && f.inflight >= f.Barrier
	hold := f.Barrier > 0 && req.N > f.Warm
	f.mu.Unlock()
	if reached {
		select {
		case <-f.Release:
		default:
			close(f.Release)
		}
	}
	if hold {
		select {
		case <-f.Release:
		case <-time.After(20 * time.Second):
		case <-r.Context().Done():
		}
	}
	if f.Latency > 0 {
		time.Sleep(f.Latency)
	}
	content := f.answer(body)
	f.mu.Lock()
	f.inflight--
	f.mu.Unlock()
	llmtest.JSON(w, http.StatusOK, map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion", "created": 1764064806, "model": "gpt-test",
		"choices": []map[string]any{{"index": 0, "message": map[string]any{"role": "assistant", "content": content, "refusal": nil}, "finish_reason": "stop"}},
		"usage":   map[string]any{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
	})
}

// Received returns the chat requests received, in order.
func (f *OpenAIAPI) Received() []ChatRequest {
	var out []ChatRequest
	for _, r := range f.srv.Requests() {
		var body ChatRequest
		if json.Unmarshal(r.Raw, &body) == nil {
			out = append(out, body)
		}
	}
	return out
}

// Config returns .orch/Config.toml for this server with the key read from
// OPENAI_API_KEY. The server answers in text only, so tool calling is off
// (tools = false): the roles answer once each.
func (f *OpenAIAPI) Config() string {
	return fmt.Sprintf("[providers.default]\ntype = \"openai\"\nbase_url = %q\nmodel = \"gpt-test\"\napi_key_env = \"OPENAI_API_KEY\"\ntools = false\n\n[prices.\"gpt-test\"]\ninput = 1.0\noutput = 1.0\n", f.srv.URL+"/v1")
}

func JSONOf(t testing.TB, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// plLoadPlan decodes the task's Plan.
func (e *PlanEnv) Plan() artifact.Plan {
	e.T.Helper()
	l := artifact.LoadPlan(e.TaskDir())
	if !l.OK() {
		e.T.Fatalf("plan: present=%v err=%v", l.Present, l.Err)
	}
	return l.Value
}

var Ctx = context.Background()

// ReadyPlan is a plan ready for review, written by hand.
const ReadyPlan = `{"id":"t1","title":"Retry Fetch","brief":"add retry","file_plan":[{"path":"fetch/fetch.go","intent":"update"}],"questions":[]}
`

// WriteTaskFile writes content to rel inside the task's folder.
func (e *PlanEnv) WriteTaskFile(rel string, content string) {
	e.T.Helper()
	gittest.Write(e.T, e.TaskDir(), rel, content)
}

// PeakInFlight is the highest number of requests that were in flight at
// once.
func (f *OpenAIAPI) PeakInFlight() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.peak
}

// ReceivedHeaders returns the headers of the requests received, in order.
func (f *OpenAIAPI) ReceivedHeaders() []http.Header {
	var out []http.Header
	for _, r := range f.srv.Requests() {
		out = append(out, r.Header)
	}
	return out
}
