// Package mcpserver is `orch mcp`: the lifecycle as a Model Context
// Protocol server, built on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk). An agent host (Claude Code,
// Codex, VS Code, …) gets tools that read a task, write the artifacts an
// author writes (checked by the same strict decoders as `orch next`), run
// a phase's worker from the one registry (internal/worker), and take the
// transitions; the human gates (accept, revert, override, redo) are
// offered only when .orch/config.toml's [mcp] allow names them. Each
// task's artifacts are resources (orch://task/<id>/<path>) with change
// notifications.
//
// Every tool goes through the code path of the CLI command it mirrors
// (same lock, checks, events and messages), and every tool that acts on a
// task is logged in its transcript as an mcp_call event naming the client.
// docs/mcp.md's tool table is generated from Tools (see doc.go).
package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/llm"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/task"
)

// Options configure a server.
type Options struct {
	// Dir is where .orch/ is searched from (the project or a folder in it).
	Dir string
	// Getenv and Environ are the environment for providers and suites
	// (nil: empty, and the process's own for suites).
	Getenv  func(string) string
	Environ func() []string
	// Now is the clock of transcript events (nil: time.Now).
	Now func() time.Time
	// LLMOptions are passed to model providers (tests inject HTTP clients).
	LLMOptions []llm.Option
	// Version is orch's version, told to clients.
	Version string
	// Wait bounds how long a tool waits for a task's lock (0: 10 s).
	Wait time.Duration
	// Transport names the transport in mcp_call events: "stdio" or "http".
	Transport string
	// Poll is how often artifacts are checked for changes while a session
	// is connected (0: one second). Changes made through a tool are
	// noticed at once.
	Poll time.Duration
	// Log receives the server's remarks (nil: discarded).
	Log io.Writer
	// Hooks are test-only crash points of the task store.
	Hooks task.Hooks
}

// Server serves one project.
type Server struct {
	opt     Options
	project *task.Project
	cfg     config.Config
	mcp     *mcp.Server
	watch   *watcher
	// life is the context of the running Run: when it ends (SIGINT or
	// SIGTERM to orch mcp), the requests in flight are cancelled, as
	// Ctrl-C cancels an orch command. The SDK does not pass the end of
	// Run's context on to the handlers by itself.
	life atomic.Pointer[context.Context]

	// acted, when set (tests), hears every tool that acted on a task,
	// once its mcp_call event is logged and its result or refusal made.
	acted func(tool, id string, err error)
}

// New finds the project from opt.Dir, reads its configuration and builds
// the server with its tools and resources.
func New(opt Options) (*Server, error) {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Getenv == nil {
		opt.Getenv = func(string) string { return "" }
	}
	if opt.Wait == 0 {
		opt.Wait = 10 * time.Second
	}
	if opt.Transport == "" {
		opt.Transport = "stdio"
	}
	if opt.Poll == 0 {
		opt.Poll = time.Second
	}
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	p, err := task.FindProject(opt.Dir)
	if err != nil {
		return nil, err
	}
	cfg, err := config.Load(p.Dir)
	if err != nil {
		return nil, err
	}
	s := &Server{opt: opt, project: p, cfg: cfg}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "orch", Title: "orch: gated code-change lifecycle", Version: opt.Version}, &mcp.ServerOptions{
		Instructions: instructions,
		// Subscriptions are tracked by the SDK; orch notifies every
		// subscriber of a changed artifact.
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		Capabilities: &mcp.ServerCapabilities{
			Tools:     &mcp.ToolCapabilities{ListChanged: true},
			Resources: &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
		},
	})
	s.mcp.AddReceivingMiddleware(s.endWithLife)
	for _, t := range s.tools() {
		if t.gate != "" && !cfg.MCP.Allows(t.gate) {
			continue
		}
		t.add(s.mcp)
	}
	s.watch = newWatcher(s)
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:        "artifact",
		Title:       "a task's artifact",
		URITemplate: uriTemplate,
		Description: "a file of a task folder's artifact areas (planning/, review/, code/, test/, accept/, revert/)",
	}, s.readResource)
	s.watch.scan(context.Background())
	return s, nil
}

// instructions tell the client's model how to work with orch.
const instructions = `orch drives a code change through planning → plan_review → codegen → review → test → accept → done, deciding each transition from the task's artifacts. Start with list_tasks or status; every result's "next" says which tool (or which orch command a person runs) moves the task on. You may write the plan (write_artifact), answer questions, write the code in codegen (submit_code, checked against the reviewed file plan), run phases (run_phase) and take transitions (next). The accept decision belongs to a person unless the project allows it.`

// MCP returns the SDK server (to serve it over any transport).
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Run serves one session over transport t until the client leaves or ctx
// is done, watching the artifacts for changes meanwhile.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.life.Store(&ctx)
	go s.watch.loop(ctx, s.opt.Poll)
	return s.mcp.Run(ctx, t)
}

// endWithLife cancels a request when Run's context ends.
func (s *Server) endWithLife(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		life := s.life.Load()
		if life == nil {
			return next(ctx, method, req)
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(*life, cancel)()
		return next(ctx, method, req)
	}
}

// Watch checks the artifacts for changes every opt.Poll until ctx is done
// (for transports that serve sessions themselves, like HTTP).
func (s *Server) Watch(ctx context.Context) { s.watch.loop(ctx, s.opt.Poll) }

// orchestrator builds an orchestrator for the project, as the CLI does.
func (s *Server) orchestrator() *orchestrator.Orchestrator {
	o := orchestrator.New(s.project)
	o.Now = s.opt.Now
	o.Wait = s.opt.Wait
	o.Hooks = s.opt.Hooks
	return o
}

// settle finishes or undoes an accept or revert killed in its git
// effect, as every CLI command does first (landing.RecoverGit).
func (s *Server) settle(ctx context.Context) {
	settled, err := orchestrator.RecoverGit(ctx, s.project, 2*time.Second)
	for _, st := range settled {
		fmt.Fprintln(s.opt.Log, st.String())
	}
	if err != nil {
		fmt.Fprintf(s.opt.Log, "orch: warning: %v\n", err)
	}
}

// config re-reads .orch/config.toml: a gate removed from [mcp] allow
// while the server runs is refused from then on.
func (s *Server) config() (config.Config, error) { return config.Load(s.project.Dir) }

// clientName is how the client introduced itself: "name version".
func clientName(req *mcp.CallToolRequest) string {
	if req == nil {
		return "unknown client"
	}
	info := req.ClientInfo()
	if info == nil || strings.TrimSpace(info.Name) == "" {
		return "unknown client"
	}
	return strings.TrimSpace(info.Name + " " + info.Version)
}

// logCall appends the mcp_call event of a tool that acted on task id. A
// task that does not exist (a refused new_task, a bad id) has no
// transcript to log in.
func (s *Server) logCall(ctx context.Context, req *mcp.CallToolRequest, tool, id string, args map[string]string, callErr error) {
	if task.ValidID(id) != nil {
		return
	}
	t, err := s.project.Open(id)
	if err != nil {
		return
	}
	ev := event.MCPCall{Client: clientName(req), Transport: s.opt.Transport, Tool: tool, Args: args, Outcome: "ok"}
	if callErr != nil {
		ev.Outcome, ev.Error = outcomeOf(callErr), exit.Format(callErr) // as the client was shown it
	}
	// The log must not be lost because the client went away.
	ctx = context.WithoutCancel(ctx)
	lock, err := t.Lock(ctx, s.opt.Wait)
	if err != nil {
		fmt.Fprintf(s.opt.Log, "orch: could not log the %s call in task %s: %v\n", tool, id, err)
		return
	}
	defer lock.Unlock()
	if err := t.Append(task.Event{TS: s.opt.Now().UTC().Truncate(time.Millisecond), Payload: ev}); err != nil {
		fmt.Fprintf(s.opt.Log, "orch: could not log the %s call in task %s: %v\n", tool, id, err)
	}
}

// summarize keeps an argument as it is when it is short, one line and
// not content; otherwise its sha256 and length stand for it.
func summarize(k, v string, content bool) (string, string) {
	if !content && len(v) <= 200 && !strings.ContainsAny(v, "\n\r") {
		return k, v
	}
	sum := sha256.Sum256([]byte(v))
	return k, fmt.Sprintf("sha256:%s (%d bytes)", hex.EncodeToString(sum[:]), len(v))
}

// argMap builds an mcp_call's args from key/value pairs, leaving out
// empty values; keys listed in content are always hashed.
func argMap(content []string, kv ...string) map[string]string {
	out := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			continue
		}
		k, v := summarize(kv[i], kv[i+1], slices.Contains(content, kv[i]))
		out[k] = v
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
