package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/task"
)

// fixture is a project with an MCP server and a connected in-memory
// client.
type fixture struct {
	t       *testing.T
	dir     string
	project *task.Project
	srv     *Server
	cs      *mcp.ClientSession

	mu       sync.Mutex
	progress []string
	updated  chan string
}

// newFixture seeds a repository, runs orch init, writes config (may be
// empty) and connects a client named "test-host".
func newFixture(t *testing.T, config string) *fixture {
	t.Helper()
	dir, _ := gittest.Seed(t, map[string]string{"README.md": "# demo\n", "main.go": "package main\n\nfunc main() {}\n"})
	p, _, err := task.InitProject(dir)
	if err != nil {
		t.Fatal(err)
	}
	if config != "" {
		if err := os.WriteFile(filepath.Join(p.Dir, "config.toml"), []byte(config), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return connect(t, dir, p)
}

func connect(t *testing.T, dir string, p *task.Project) *fixture {
	t.Helper()
	f := &fixture{t: t, dir: dir, project: p, updated: make(chan string, 100)}
	srv, err := New(Options{Dir: dir, Version: "test", Wait: 2 * time.Second, Poll: time.Hour, Environ: os.Environ, Getenv: os.Getenv})
	if err != nil {
		t.Fatal(err)
	}
	f.srv = srv
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	st, ct := mcp.NewInMemoryTransports()
	go func() { _ = srv.Run(ctx, st) }()
	client := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1.0"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.progress = append(f.progress, r.Params.Message)
		},
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			f.updated <- r.Params.URI
		},
	})
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	f.cs = cs
	return f
}

// call calls a tool and returns its structured result; a tool error fails
// the test.
func (f *fixture) call(name string, args map[string]any) map[string]any {
	f.t.Helper()
	res := f.callRaw(name, args)
	if res.IsError {
		f.t.Fatalf("%s(%v): tool error: %s", name, args, text(res))
	}
	var out map[string]any
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil {
		f.t.Fatalf("%s: structured content %s: %v", name, b, err)
	}
	return out
}

// refused calls a tool that must fail and returns the error text.
func (f *fixture) refused(name string, args map[string]any) string {
	f.t.Helper()
	res := f.callRaw(name, args)
	if !res.IsError {
		f.t.Fatalf("%s(%v) succeeded, want a refusal: %s", name, args, text(res))
	}
	return text(res)
}

func (f *fixture) callRaw(name string, args map[string]any) *mcp.CallToolResult {
	f.t.Helper()
	res, err := f.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		f.t.Fatalf("%s: %v", name, err)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// toolNames lists the tools the server offers.
func (f *fixture) toolNames() []string {
	f.t.Helper()
	var names []string
	for tool, err := range f.cs.Tools(context.Background(), nil) {
		if err != nil {
			f.t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	return names
}

// events returns the task's transcript events of kind.
func (f *fixture) events(id, kind string) []task.Event {
	f.t.Helper()
	tk, err := f.project.Open(id)
	if err != nil {
		f.t.Fatal(err)
	}
	evs, err := tk.Transcript()
	if err != nil {
		f.t.Fatal(err)
	}
	var out []task.Event
	for _, ev := range evs {
		if string(ev.Kind) == kind {
			out = append(out, ev)
		}
	}
	return out
}

// waitUpdated waits for a resources/updated notification of uri.
func (f *fixture) waitUpdated(uri string) {
	f.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case got := <-f.updated:
			if got == uri {
				return
			}
		case <-deadline:
			f.t.Fatalf("no resources/updated notification for %s", uri)
		}
	}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
