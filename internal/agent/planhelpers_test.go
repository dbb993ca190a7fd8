package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/task"
)

// plEnv is a real git repository with .orch/ and one task in planning.
type plEnv struct {
	t    testing.TB
	root string
	p    *task.Project
	o    *orchestrator.Orchestrator
	id   string
	env  map[string]string
	tick *plClock
}

// plClock is a goroutine-safe fake clock advancing one second per reading.
type plClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *plClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Second)
	return c.now
}

// plRepoFiles is the repository the tests plan against.
var plRepoFiles = map[string]string{
	"README.md":      "# fetcher\n\nA tiny HTTP fetcher. Fetch retries nothing yet.\n",
	"go.mod":         "module example.com/fetcher\n\ngo 1.22\n",
	"fetch/fetch.go": "package fetch\n\n// Fetch gets a URL once.\nfunc Fetch(url string) error { return nil }\n",
}

const plBrief = "add retry with exponential backoff to Fetch"

// plNewEnv builds the repository (files over plRepoFiles), orch's project
// with configTOML as .orch/config.toml, and task "t1" with brief.
func plNewEnv(t testing.TB, files map[string]string, brief, configTOML string) *plEnv {
	t.Helper()
	root := t.TempDir()
	all := map[string]string{}
	for k, v := range plRepoFiles {
		all[k] = v
	}
	for k, v := range files {
		all[k] = v
	}
	for name, content := range all {
		path := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	plGit(t, root, "init", "-q")
	plGit(t, root, "add", "-A")
	plGit(t, root, "commit", "-q", "-m", "initial")
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
	clock := &plClock{now: time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)}
	if _, _, err := p.CreateTask("t1", brief, clock.Now()); err != nil {
		t.Fatal(err)
	}
	o := orchestrator.New(p)
	o.Now = clock.Now
	o.Wait = 5 * time.Second
	return &plEnv{t: t, root: root, p: p, o: o, id: "t1", env: map[string]string{}, tick: clock}
}

func plGit(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GIT_AUTHOR_NAME=orch test", "GIT_AUTHOR_EMAIL=test@orch.invalid",
		"GIT_COMMITTER_NAME=orch test", "GIT_COMMITTER_EMAIL=test@orch.invalid",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// runtime builds a fresh runtime (a new orch process, as the CLI does).
func (e *plEnv) runtime() *Runtime {
	e.t.Helper()
	cfg, err := config.Load(e.p.Dir)
	if err != nil {
		e.t.Fatal(err)
	}
	rt := NewRuntime(e.p, cfg, func(k string) string { return e.env[k] })
	rt.Now = e.tick.Now
	return rt
}

func (e *plEnv) taskDir() string { return filepath.Join(e.p.TasksDir(), e.id) }

func (e *plEnv) read(rel string) []byte {
	e.t.Helper()
	data, err := os.ReadFile(filepath.Join(e.taskDir(), filepath.FromSlash(rel)))
	if err != nil {
		e.t.Fatal(err)
	}
	return data
}

func (e *plEnv) exists(rel string) bool {
	_, err := os.Lstat(filepath.Join(e.taskDir(), filepath.FromSlash(rel)))
	return err == nil
}

func (e *plEnv) state() task.State {
	e.t.Helper()
	t, err := e.p.Open(e.id)
	if err != nil {
		e.t.Fatal(err)
	}
	st, err := t.ReadState()
	if err != nil {
		e.t.Fatal(err)
	}
	return st
}

// kinds returns the transcript's event kinds.
func (e *plEnv) events() []task.Event {
	e.t.Helper()
	t, err := e.p.Open(e.id)
	if err != nil {
		e.t.Fatal(err)
	}
	evs, err := t.Transcript()
	if err != nil {
		e.t.Fatal(err)
	}
	return evs
}

// writeScript writes a script provider file outside the repository and
// returns the configuration using it.
func plScriptConfig(t testing.TB, entries ...any) string {
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

// plEntry is one script response.
func plEntry(role string, v any) map[string]any { return map[string]any{"role": role, "json": v} }

// plPlan is a planner answer.
func plPlan(title string, files []map[string]any, questions ...map[string]any) map[string]any {
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

func plFile(path, intent string) map[string]any {
	return map[string]any{"path": path, "intent": intent, "summary": intent + " " + path}
}

func plQuestion(id, text string, blocking bool) map[string]any {
	return map[string]any{"id": id, "text": text, "blocking": blocking}
}

// plVerdict is a reviewer answer.
func plVerdict(ok bool, severity, decision string, issues ...string) map[string]any {
	if issues == nil {
		issues = []string{}
	}
	return map[string]any{"ok": ok, "severity": severity, "decision": decision,
		"blocking_issues": issues, "suggestions": []string{}, "summary": "verdict " + severity}
}

// plOpenAI is an OpenAI-compatible chat completions server: each request
// is answered by answer(body) with the assistant's content. It records the
// requests and the highest number of requests in flight at once.
type plOpenAI struct {
	srv    *httptest.Server
	answer func(body plChatRequest) string
	// barrier, when > 0, holds each request until that many are in
	// flight (or release is closed), to prove concurrency without timing.
	barrier int
	release chan struct{}
	latency time.Duration

	mu       sync.Mutex
	requests []plChatRequest
	headers  []http.Header
	inflight int
	peak     int
	arrived  chan struct{}
}

type plChatRequest struct {
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

func (r plChatRequest) system() string {
	for _, m := range r.Messages {
		if m.Role == "system" {
			return m.Content
		}
	}
	return ""
}

// all joins every message's text (a reviewer's persona comes last).
func (r plChatRequest) all() string {
	var b strings.Builder
	for _, m := range r.Messages {
		b.WriteString(m.Content)
		b.WriteString("\n")
	}
	return b.String()
}

func (r plChatRequest) user() string {
	for _, m := range r.Messages {
		if m.Role == "user" {
			return m.Content
		}
	}
	return ""
}

func newPLOpenAI(t testing.TB, answer func(plChatRequest) string) *plOpenAI {
	f := &plOpenAI{answer: answer, release: make(chan struct{}), arrived: make(chan struct{}, 100)}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *plOpenAI) serve(w http.ResponseWriter, r *http.Request) {
	data, err := io.ReadAll(r.Body)
	if err != nil || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	var body plChatRequest
	if err := json.Unmarshal(data, &body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.requests = append(f.requests, body)
	f.headers = append(f.headers, r.Header.Clone())
	f.inflight++
	f.peak = max(f.peak, f.inflight)
	reached := f.barrier > 0 && f.inflight >= f.barrier
	f.mu.Unlock()
	if reached {
		select {
		case <-f.release:
		default:
			close(f.release)
		}
	}
	if f.barrier > 0 {
		select {
		case <-f.release:
		case <-time.After(20 * time.Second):
		case <-r.Context().Done():
		}
	}
	if f.latency > 0 {
		time.Sleep(f.latency)
	}
	content := f.answer(body)
	f.mu.Lock()
	f.inflight--
	f.mu.Unlock()
	resp := map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion", "created": 1764064806, "model": "gpt-test",
		"choices": []map[string]any{{"index": 0, "message": map[string]any{"role": "assistant", "content": content, "refusal": nil}, "finish_reason": "stop"}},
		"usage":   map[string]any{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

func (f *plOpenAI) received() []plChatRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]plChatRequest(nil), f.requests...)
}

// config returns .orch/config.toml for this server with the key read from
// OPENAI_API_KEY.
func (f *plOpenAI) config() string {
	return fmt.Sprintf("[providers.default]\ntype = \"openai\"\nbase_url = %q\nmodel = \"gpt-test\"\napi_key_env = \"OPENAI_API_KEY\"\n", f.srv.URL+"/v1")
}

func plJSON(t testing.TB, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// plLoadPlan decodes the task's plan.
func (e *plEnv) plan() artifact.Plan {
	e.t.Helper()
	l := artifact.LoadPlan(e.taskDir())
	if !l.OK() {
		e.t.Fatalf("plan: present=%v err=%v", l.Present, l.Err)
	}
	return l.Value
}

var plBackground = context.Background()
