package agenttest

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/llm/llmtest"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/task"
)

// KeyEnv and Key are the fake API key of the tests: no file under
// .orch/ may ever contain Key.
const (
	KeyEnv = "ORCH_TEST_CG_KEY"
	Key    = "sk-ant-test-7c1d9e2f4a6b8c0d"
)

// CodeEnv is a git repository with orch initialised and one task.
type CodeEnv struct {
	T    *testing.T
	Root string
	P    *task.Project
	O    *orchestrator.Orchestrator
	Task *task.Task
	ID   string
}

// Calc is the committed source of the fixture repository.
const Calc = "package calc\n\n// Add returns the sum of a and b.\nfunc Add(a, b int) int { return a - b }\n"

// CalcPlan plans an update of calc.go and a new calc_test.go.
const CalcPlan = `{"id":"fix","title":"Make Add add","brief":"make Add return the sum",
 "acceptance_criteria":["Add(2, 3) == 5"],
 "file_plan":[{"path":"calc.go","intent":"update","summary":"fix the operator"},
              {"path":"calc_test.go","intent":"create","summary":"test Add"}]}`

// NewCodeEnv makes the repository (calc.go, README.md, go.mod and any
// extra files), commits it, initialises orch and creates task "fix" with
// cgPlan, moved into codegen by override.
func NewCodeEnv(t *testing.T, extra map[string]string) *CodeEnv {
	t.Helper()
	root := t.TempDir()
	Git(t, root, "init", "-q")
	gittest.Write(t, root, "calc.go", Calc)
	gittest.Write(t, root, "go.mod", "module example.com/calc\n\ngo 1.22\n")
	gittest.Write(t, root, "README.md", "# calc\n\nArithmetic helpers.\n")
	for rel, content := range extra {
		gittest.Write(t, root, rel, content)
	}
	Git(t, root, "add", "-A")
	Git(t, root, "commit", "-qm", "base")
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
	f := &CodeEnv{T: t, Root: root, P: p, O: o, Task: tk, ID: "fix"}
	gittest.Write(t, tk.Dir, "planning/planning.ai.json", CalcPlan)
	f.Override(lifecycle.Codegen)
	return f
}

// NewCodeEnvWithLink is NewCodeEnv whose repository also holds "link", a
// committed symbolic link to /etc, and whose plan also names link,
// link/passwd and extra (as PlanWith takes them): an answer reaching out
// through the link gets past the file plan's checks to the ones behind.
func NewCodeEnvWithLink(t *testing.T, extra ...string) *CodeEnv {
	t.Helper()
	f := NewCodeEnv(t, nil)
	if err := os.Symlink("/etc", filepath.Join(f.Root, "link")); err != nil {
		t.Fatal(err)
	}
	Git(t, f.Root, "add", "link")
	Git(t, f.Root, "commit", "-qm", "link")
	f.PlanWith(append([]string{"link", "link/passwd"}, extra...)...)
	return f
}

// Override moves the task to phase without checking conditions.
func (f *CodeEnv) Override(to lifecycle.Phase) {
	f.T.Helper()
	reason := "test setup"
	if _, err := f.O.Next(context.Background(), f.ID, orchestrator.NextRequest{To: to, Override: &reason}); err != nil {
		f.T.Fatalf("override to %s: %v", to, err)
	}
}

// Next takes the suggested transition and returns where it went.
func (f *CodeEnv) Next() lifecycle.Phase {
	f.T.Helper()
	res, err := f.O.Next(context.Background(), f.ID, orchestrator.NextRequest{})
	if err != nil {
		f.T.Fatalf("orch next: %v", err)
	}
	return res.To
}

// Phase returns the task's Phase.
func (f *CodeEnv) Phase() string {
	f.T.Helper()
	st, err := f.Task.ReadState()
	if err != nil {
		f.T.Fatal(err)
	}
	return string(st.Phase)
}

// Read returns a task-relative file's content ("" when absent).
func (f *CodeEnv) Read(rel string) string {
	data, err := os.ReadFile(filepath.Join(f.Task.Dir, filepath.FromSlash(rel)))
	if err != nil {
		return ""
	}
	return string(data)
}

// Exists reports whether a task-relative path Exists.
func (f *CodeEnv) Exists(rel string) bool {
	_, err := os.Lstat(filepath.Join(f.Task.Dir, filepath.FromSlash(rel)))
	return err == nil
}

// Events returns the task's transcript.
func (f *CodeEnv) Events() []task.Event {
	f.T.Helper()
	evs, err := f.Task.Transcript()
	if err != nil {
		f.T.Fatal(err)
	}
	return evs
}

// ModelCalls returns the data of the model_call events.
func (f *CodeEnv) ModelCalls() []map[string]any {
	var out []map[string]any
	for _, ev := range f.Events() {
		if ev.Kind == "model_call" {
			out = append(out, ev.Data)
		}
	}
	return out
}

// Runtime builds a Runtime whose only provider is pc.
func (f *CodeEnv) Runtime(pc config.Provider) *agent.Runtime {
	cfg := config.Default()
	cfg.Providers = map[string]config.Provider{"default": pc}
	return agent.NewRuntime(f.P, cfg, func(k string) string {
		if k == KeyEnv {
			return Key
		}
		return ""
	})
}

// ScriptRuntime writes a script of answers (role, JSON value) and returns
// a runtime replaying it.
func (f *CodeEnv) ScriptRuntime(entries ...Entry) *agent.Runtime {
	f.T.Helper()
	type wire struct {
		Role string          `json:"role"`
		JSON json.RawMessage `json:"json"`
	}
	var resp []wire
	for _, e := range entries {
		resp = append(resp, wire{Role: e.Role, JSON: json.RawMessage(e.JSON)})
	}
	data, err := json.Marshal(map[string]any{"responses": resp})
	if err != nil {
		f.T.Fatal(err)
	}
	path := filepath.Join(f.T.TempDir(), "script.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		f.T.Fatal(err)
	}
	return f.Runtime(config.Provider{Type: "script", Script: path})
}

// Entry is one scripted answer.
type Entry struct{ Role, JSON string }

// NoKeyOnDisk fails when any file under .orch/ contains the fake key.
func (f *CodeEnv) NoKeyOnDisk() {
	f.T.Helper()
	err := filepath.WalkDir(f.P.Dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.Contains(string(data), Key) {
			f.T.Errorf("%s contains the API key", p)
		}
		return nil
	})
	if err != nil {
		f.T.Fatal(err)
	}
}

// AnthropicAPI is a fake Anthropic messages API: every request is answered by
// answer with the input of the forced tool; the requests are recorded.
type AnthropicAPI struct {
	srv *llmtest.Server
}

func NewAnthropicAPI(t *testing.T, answer func(n int, body map[string]any) any) *AnthropicAPI {
	return &AnthropicAPI{srv: llmtest.NewServer(t, func(w http.ResponseWriter, r *http.Request, req llmtest.Request) {
		if req.Path != "/v1/messages" || (req.Header.Get("X-Api-Key") != Key && req.Header.Get("Authorization") != "Bearer "+Key) {
			t.Errorf("request %s %s with key %q %v", req.Method, req.Path, req.Header.Get("X-Api-Key"), req.Header)
		}
		tool := "answer"
		if tools, ok := req.Body["tools"].([]any); ok && len(tools) == 1 {
			tool, _ = tools[0].(map[string]any)["name"].(string)
		}
		input := answer(req.N, req.Body)
		llmtest.JSON(w, http.StatusOK, map[string]any{
			"id": "msg_test", "type": "message", "role": "assistant", "model": "claude-test",
			"content":     []any{map[string]any{"type": "tool_use", "id": "toolu_test", "name": tool, "input": input}},
			"stop_reason": "tool_use", "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": 1200, "output_tokens": 300},
		})
	})}
}

// Requests returns the recorded request bodies.
func (a *AnthropicAPI) Requests() []map[string]any {
	var out []map[string]any
	for _, r := range a.srv.Requests() {
		out = append(out, r.Body)
	}
	return out
}

// UserText joins the text of a request's user messages.
func UserText(body map[string]any) string {
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

// Runtime returns a Runtime calling the fake API.
// The fake answers with the single tool of a structured answer: tool
// calling is off, so the agents take their single-answer path.
func (a *AnthropicAPI) Runtime(f *CodeEnv) *agent.Runtime {
	off := false
	rt := f.Runtime(config.Provider{Type: "anthropic", BaseURL: a.srv.URL, Model: "claude-test", APIKeyEnv: KeyEnv, MaxRetries: -1, Tools: &off})
	rt.Config.Prices = map[string]config.Price{"claude-test": {Input: 3, Output: 15}}
	return rt
}

// PlanWith rewrites the task's plan: cgPlan's files and extra entries
// ("path" or "path\tintent", intent update by default).
func (f *CodeEnv) PlanWith(extra ...string) {
	f.T.Helper()
	var plan map[string]any
	if err := json.Unmarshal([]byte(CalcPlan), &plan); err != nil {
		f.T.Fatal(err)
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
		f.T.Fatal(err)
	}
	gittest.Write(f.T, f.Task.Dir, "planning/planning.ai.json", string(data))
	// Back through plan review, so the gate records the plan codegen now
	// works from.
	f.Override(lifecycle.PlanReview)
	f.Override(lifecycle.Codegen)
}

const (
	CalcFixed = "package calc\n\n// Add returns the sum of a and b.\nfunc Add(a, b int) int { return a + b }\n"
	CalcTest  = "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"Add(2, 3) != 5\")\n\t}\n}\n"
)

func JSONString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// CodegenEntry is a scripted codegen answer fixing calc.go.
var CodegenEntry = Entry{Role: "codegen", JSON: `{"status":"completed","files":[{"path":"calc.go","content":` + JSONString(CalcFixed) + `},{"path":"calc_test.go","content":` + JSONString(CalcTest) + `}],"deletes":[]}`}
