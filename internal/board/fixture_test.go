package board

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/task"
)

// TestMain isolates git's configuration (gittest.Main gives HOME a fresh
// folder) but keeps the caches: the browser test runs the demo, whose
// sandboxed go test would otherwise build the standard library from
// scratch (orch's cache lives under the user's cache folder).
func TestMain(m *testing.M) {
	if os.Getenv(standinRoot) != "" {
		// This binary runs as orch-fleet for the fleet's tests
		// (fleetstandin_test.go).
		os.Exit(fleetStandin(os.Args[1:], os.Stdout, os.Stderr))
	}
	if os.Getenv("XDG_CACHE_HOME") == "" {
		if dir, err := os.UserCacheDir(); err == nil {
			os.Setenv("XDG_CACHE_HOME", dir)
		}
	}
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		if os.Getenv(k) == "" {
			if out, err := exec.Command("go", "env", k).Output(); err == nil {
				os.Setenv(k, strings.TrimSpace(string(out)))
			}
		}
	}
	os.Exit(gittest.Main(m))
}

// Fixture is a git repository with .orch/ and hand-made tasks: what the
// board's tests (and its browser tests, in package board_test) look at.
type Fixture struct {
	T    testing.TB
	Root string
	P    *task.Project
	O    *orchestrator.Orchestrator
}

// NewFixture creates the repository, with one committed file, and .orch/.
func NewFixture(t testing.TB) *Fixture {
	t.Helper()
	root, _ := gittest.Seed(t, map[string]string{"README.md": "# sample\n"})
	p, _, err := task.InitProject(root)
	if err != nil {
		t.Fatal(err)
	}
	gittest.CommitAll(t, root, "orch init")
	return &Fixture{T: t, Root: root, P: p, O: orchestrator.New(p)}
}

// Task creates task id in planning.
func (f *Fixture) Task(id, brief string) string {
	f.T.Helper()
	if _, _, err := f.P.CreateTask(id, brief, time.Now().UTC()); err != nil {
		f.T.Fatal(err)
	}
	return id
}

// Dir is the task's folder.
func (f *Fixture) Dir(id string) string { return filepath.Join(f.P.TasksDir(), id) }

// Write writes a task file.
func (f *Fixture) Write(id, rel, content string) {
	f.T.Helper()
	gittest.Write(f.T, f.Dir(id), rel, content)
}

// Plan writes planning.ai.json with title, one question (open unless
// answer is given) and a file plan creating hello.txt.
func (f *Fixture) Plan(id, title, question string, answer *string) {
	f.T.Helper()
	plan := map[string]any{"id": id, "title": title, "brief": "brief of " + id,
		"file_plan": []map[string]any{{"path": "hello.txt", "intent": "create", "summary": "a greeting"}}}
	if question != "" {
		plan["questions"] = []map[string]any{{"id": "q1", "text": question, "blocking": true, "answer": answer}}
	}
	b, err := json.MarshalIndent(plan, "", " ")
	if err != nil {
		f.T.Fatal(err)
	}
	f.Write(id, "planning/planning.ai.json", string(b))
}

// Move takes task id to phase by override (what a person may do from the
// CLI), failing the test when it is refused.
func (f *Fixture) Move(id string, to lifecycle.Phase) {
	f.T.Helper()
	reason := "test setup"
	if _, err := f.O.Next(context.Background(), id, orchestrator.NextRequest{To: to, Override: &reason}); err != nil {
		f.T.Fatal(err)
	}
}

// Next takes the edge that holds.
func (f *Fixture) Next(id string) orchestrator.NextResult {
	f.T.Helper()
	res, err := f.O.Next(context.Background(), id, orchestrator.NextRequest{})
	if err != nil {
		f.T.Fatal(err)
	}
	return res
}

// Hello is the change of the fixture's tasks: hello.txt created.
const Hello = "diff --git a/hello.txt b/hello.txt\nnew file mode 100644\n--- /dev/null\n+++ b/hello.txt\n@@ -0,0 +1 @@\n+hello\n"

// ToAccept brings a task with an answered plan titled title to accept: the
// change (hello.txt), reviews that pass and a passing test report.
func (f *Fixture) ToAccept(id, title string) {
	f.T.Helper()
	f.ToTest(id, title)
	f.Write(id, "test/report.json", `{"status": "completed", "overall_pass": true, "summary": {"passed": 1, "failed": 0, "skipped": 0, "error": 0}, "suites": [{"id": "go", "kind": "test", "command": "go test ./...", "exit_code": 0, "overall_pass": true, "summary": {"passed": 1, "failed": 0, "skipped": 0, "error": 0}, "cases": [{"name": "TestHello", "status": "pass"}]}]}`)
	f.Next(id) // → accept
}

// ToTest brings a task to test: an answered plan titled title, the change
// (hello.txt) and reviews that pass.
func (f *Fixture) ToTest(id, title string) {
	f.T.Helper()
	a := "yes"
	f.Plan(id, title, "Shall we greet?", &a)
	f.Next(id) // planning → plan_review
	f.Write(id, "review/plan-review.json", `{"ok": true, "blocked": false, "reviewers": [{"id": "architecture", "ok": true, "severity": "info", "summary": "fine"}]}`)
	f.Next(id) // → codegen
	f.Write(id, "code/files/hello.txt", "hello\n")
	f.Write(id, "code/diff.patch", Hello)
	f.Next(id) // → review
	f.Write(id, "review/code-review.json", `{"ok": true, "issues": [{"severity": "minor", "kind": "style", "file": "hello.txt", "line": 1, "message": "say more"}]}`)
	f.Next(id) // → test
}

// Phase reads the task's committed phase.
func (f *Fixture) Phase(id string) lifecycle.Phase {
	f.T.Helper()
	v, err := f.O.Status(id)
	if err != nil {
		f.T.Fatal(err)
	}
	return v.Phase
}

// Board starts a board over the fixture on a test server; the address in
// its Host check is the server's.
func (f *Fixture) Board(opt Options) (*Server, *httptest.Server) {
	f.T.Helper()
	ts := httptest.NewUnstartedServer(nil)
	opt.Project, opt.Addr = f.P, ts.Listener.Addr().String()
	if opt.Decider == "" {
		opt.Decider = "tester"
	}
	s, err := New(opt)
	if err != nil {
		f.T.Fatal(err)
	}
	ts.Config.Handler = s.Handler()
	ts.Start()
	s.Start()
	f.T.Cleanup(func() {
		s.Close()
		ts.Close()
	})
	return s, ts
}

// client is an HTTP client that does not follow redirects and keeps no
// cookies: each test says what it sends.
func client() *http.Client {
	return &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// get fetches path with the board's cookie.
func get(t *testing.T, s *Server, ts *httptest.Server, path string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", ts.URL+path, nil)
	req.AddCookie(&http.Cookie{Name: s.guard.cookie, Value: s.Token()})
	return do(t, req)
}

// post submits a form with the board's cookie and CSRF token.
func post(t *testing.T, s *Server, ts *httptest.Server, path string, form url.Values) (int, string, *http.Response) {
	t.Helper()
	if form.Get(csrfField) == "" {
		form.Set(csrfField, s.guard.csrf)
	}
	// A form of a freshly loaded page names the task's revision; a test
	// that sets the field (even empty) posts what it set.
	if parts := strings.Split(path, "/"); len(parts) == 4 && parts[1] == "task" {
		if _, set := form["revision"]; !set {
			if v, err := s.orch.Status(parts[2]); err == nil {
				form.Set("revision", strconv.FormatInt(v.Revision, 10))
			}
		}
	}
	req, _ := http.NewRequest("POST", ts.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(&http.Cookie{Name: s.guard.cookie, Value: s.Token()})
	return send(t, req)
}

func do(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	code, body, _ := send(t, req)
	return code, body
}

// send makes a request without following a redirect.
func send(t *testing.T, req *http.Request) (int, string, *http.Response) {
	t.Helper()
	res, err := client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b := new(strings.Builder)
	_, _ = io.Copy(b, res.Body)
	return res.StatusCode, b.String(), res
}

// httptestServer names the test server for helpers that take it.
type httptestServer struct{ Server *httptest.Server }
