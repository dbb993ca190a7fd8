package agent

import (
	"context"
	"encoding/json"
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

	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/task"
)

// cgKeyEnv and cgKey are the fake API key of the tests: no file under
// .orch/ may ever contain cgKey.
const (
	cgKeyEnv = "ORCH_TEST_CG_KEY"
	cgKey    = "sk-ant-test-7c1d9e2f4a6b8c0d"
)

// cgFixture is a git repository with orch initialised and one task.
type cgFixture struct {
	t    *testing.T
	root string
	p    *task.Project
	o    *orchestrator.Orchestrator
	tk   *task.Task
	id   string
}

// cgGit runs git in dir with a neutral configuration.
func cgGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=orch test", "GIT_AUTHOR_EMAIL=test@orch.invalid",
		"GIT_COMMITTER_NAME=orch test", "GIT_COMMITTER_EMAIL=test@orch.invalid")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// cgWrite writes content to dir/rel, creating folders.
func cgWrite(t *testing.T, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// cgCalc is the committed source of the fixture repository.
const cgCalc = "package calc\n\n// Add returns the sum of a and b.\nfunc Add(a, b int) int { return a - b }\n"

// cgPlan plans an update of calc.go and a new calc_test.go.
const cgPlan = `{"id":"fix","title":"Make Add add","brief":"make Add return the sum",
 "acceptance_criteria":["Add(2, 3) == 5"],
 "file_plan":[{"path":"calc.go","intent":"update","summary":"fix the operator"},
              {"path":"calc_test.go","intent":"create","summary":"test Add"}]}`

// newCGFixture makes the repository (calc.go, README.md, go.mod and any
// extra files), commits it, initialises orch and creates task "fix" with
// cgPlan, moved into codegen by override.
func newCGFixture(t *testing.T, extra map[string]string) *cgFixture {
	t.Helper()
	root := t.TempDir()
	cgGit(t, root, "init", "-q")
	cgWrite(t, root, "calc.go", cgCalc)
	cgWrite(t, root, "go.mod", "module example.com/calc\n\ngo 1.22\n")
	cgWrite(t, root, "README.md", "# calc\n\nArithmetic helpers.\n")
	for rel, content := range extra {
		cgWrite(t, root, rel, content)
	}
	cgGit(t, root, "add", "-A")
	cgGit(t, root, "commit", "-qm", "base")
	p, _, err := task.InitProject(root)
	if err != nil {
		t.Fatal(err)
	}
	tk, _, err := p.CreateTask("fix", "make Add return the sum", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	o := orchestrator.New(p)
	o.Wait = 5 * time.Second
	f := &cgFixture{t: t, root: root, p: p, o: o, tk: tk, id: "fix"}
	cgWrite(t, tk.Dir, "planning/planning.ai.json", cgPlan)
	f.override(lifecycle.Codegen)
	return f
}

// override moves the task to phase without checking conditions.
func (f *cgFixture) override(to lifecycle.Phase) {
	f.t.Helper()
	reason := "test setup"
	if _, err := f.o.Next(context.Background(), f.id, orchestrator.NextRequest{To: to, Override: &reason}); err != nil {
		f.t.Fatalf("override to %s: %v", to, err)
	}
}

// next takes the suggested transition and returns where it went.
func (f *cgFixture) next() lifecycle.Phase {
	f.t.Helper()
	res, err := f.o.Next(context.Background(), f.id, orchestrator.NextRequest{})
	if err != nil {
		f.t.Fatalf("orch next: %v", err)
	}
	return res.To
}

// phase returns the task's phase.
func (f *cgFixture) phase() string {
	f.t.Helper()
	st, err := f.tk.ReadState()
	if err != nil {
		f.t.Fatal(err)
	}
	return string(st.Phase)
}

// read returns a task-relative file's content ("" when absent).
func (f *cgFixture) read(rel string) string {
	data, err := os.ReadFile(filepath.Join(f.tk.Dir, filepath.FromSlash(rel)))
	if err != nil {
		return ""
	}
	return string(data)
}

// exists reports whether a task-relative path exists.
func (f *cgFixture) exists(rel string) bool {
	_, err := os.Lstat(filepath.Join(f.tk.Dir, filepath.FromSlash(rel)))
	return err == nil
}

// events returns the task's transcript.
func (f *cgFixture) events() []task.Event {
	f.t.Helper()
	evs, err := f.tk.Transcript()
	if err != nil {
		f.t.Fatal(err)
	}
	return evs
}

// modelCalls returns the data of the model_call events.
func (f *cgFixture) modelCalls() []map[string]any {
	var out []map[string]any
	for _, ev := range f.events() {
		if ev.Kind == "model_call" {
			out = append(out, ev.Data)
		}
	}
	return out
}

// runtime builds a runtime whose only provider is pc.
func (f *cgFixture) runtime(pc config.Provider) *Runtime {
	cfg := config.Default()
	cfg.Providers = map[string]config.Provider{"default": pc}
	return NewRuntime(f.p, cfg, func(k string) string {
		if k == cgKeyEnv {
			return cgKey
		}
		return ""
	})
}

// scriptRuntime writes a script of answers (role, JSON value) and returns
// a runtime replaying it.
func (f *cgFixture) scriptRuntime(entries ...cgEntry) *Runtime {
	f.t.Helper()
	type wire struct {
		Role string          `json:"role"`
		JSON json.RawMessage `json:"json"`
	}
	var resp []wire
	for _, e := range entries {
		resp = append(resp, wire{Role: e.role, JSON: json.RawMessage(e.json)})
	}
	data, err := json.Marshal(map[string]any{"responses": resp})
	if err != nil {
		f.t.Fatal(err)
	}
	path := filepath.Join(f.t.TempDir(), "script.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		f.t.Fatal(err)
	}
	return f.runtime(config.Provider{Type: "script", Script: path})
}

// cgEntry is one scripted answer.
type cgEntry struct{ role, json string }

// noKeyOnDisk fails when any file under .orch/ contains the fake key.
func (f *cgFixture) noKeyOnDisk() {
	f.t.Helper()
	err := filepath.WalkDir(f.p.Dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.Contains(string(data), cgKey) {
			f.t.Errorf("%s contains the API key", p)
		}
		return nil
	})
	if err != nil {
		f.t.Fatal(err)
	}
}

// cgAPI is a fake Anthropic messages API: every request is answered by
// answer with the input of the forced tool; the requests are recorded.
type cgAPI struct {
	t      *testing.T
	srv    *httptest.Server
	answer func(n int, body map[string]any) any

	mu   sync.Mutex
	reqs []map[string]any
}

func newCGAPI(t *testing.T, answer func(n int, body map[string]any) any) *cgAPI {
	a := &cgAPI{t: t, answer: answer}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *cgAPI) serve(w http.ResponseWriter, r *http.Request) {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if r.URL.Path != "/v1/messages" || (r.Header.Get("X-Api-Key") != cgKey && r.Header.Get("Authorization") != "Bearer "+cgKey) {
		a.t.Errorf("request %s %s with key %q %v", r.Method, r.URL.Path, r.Header.Get("X-Api-Key"), r.Header)
	}
	var body map[string]any
	if err := json.Unmarshal(data, &body); err != nil {
		a.t.Errorf("request body: %v", err)
	}
	a.mu.Lock()
	a.reqs = append(a.reqs, body)
	n := len(a.reqs)
	a.mu.Unlock()
	tool := "answer"
	if tools, ok := body["tools"].([]any); ok && len(tools) == 1 {
		tool, _ = tools[0].(map[string]any)["name"].(string)
	}
	input := a.answer(n, body)
	msg := map[string]any{
		"id": "msg_test", "type": "message", "role": "assistant", "model": "claude-test",
		"content":     []any{map[string]any{"type": "tool_use", "id": "toolu_test", "name": tool, "input": input}},
		"stop_reason": "tool_use", "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 1200, "output_tokens": 300},
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(msg)
}

// requests returns the recorded request bodies.
func (a *cgAPI) requests() []map[string]any {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]map[string]any(nil), a.reqs...)
}

// userText joins the text of a request's user messages.
func userText(body map[string]any) string {
	var b strings.Builder
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		mm, _ := m.(map[string]any)
		if mm["role"] != "user" {
			continue
		}
		blocks, _ := mm["content"].([]any)
		for _, bl := range blocks {
			if s, ok := bl.(map[string]any)["text"].(string); ok {
				b.WriteString(s)
				b.WriteString("\n")
			}
		}
	}
	return b.String()
}

// runtime returns a runtime calling the fake API.
// The fake answers with the single tool of a structured answer: tool
// calling is off, so the agents take their single-answer path.
func (a *cgAPI) runtime(f *cgFixture) *Runtime {
	off := false
	return f.runtime(config.Provider{Type: "anthropic", BaseURL: a.srv.URL, Model: "claude-test", APIKeyEnv: cgKeyEnv, MaxRetries: -1, Tools: &off})
}

// planWith rewrites the task's plan: cgPlan's files and extra entries
// ("path" or "path\tintent", intent update by default).
func (f *cgFixture) planWith(extra ...string) {
	f.t.Helper()
	var plan map[string]any
	if err := json.Unmarshal([]byte(cgPlan), &plan); err != nil {
		f.t.Fatal(err)
	}
	files := plan["file_plan"].([]any)
	for _, e := range extra {
		p, intent, ok := strings.Cut(e, "\t")
		if !ok {
			intent = "update"
		}
		files = append(files, map[string]any{"path": p, "intent": intent})
	}
	plan["file_plan"] = files
	data, err := json.Marshal(plan)
	if err != nil {
		f.t.Fatal(err)
	}
	cgWrite(f.t, f.tk.Dir, "planning/planning.ai.json", string(data))
	// Back through plan review, so the gate records the plan codegen now
	// works from.
	f.override(lifecycle.PlanReview)
	f.override(lifecycle.Codegen)
}
