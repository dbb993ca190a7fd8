package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/orchdev/orch/internal/agent/tools"
	"github.com/orchdev/orch/internal/clip"
)

// maxProgress bounds the progress notifications of one run: the agents'
// tool calls and the suites' output lines can be many.
const maxProgress = 500

// progress sends a run's progress notifications to the client that asked
// for them (a request with a progress token); without a token it is
// silent. Each message is one line: a phase's start and end, an agent's
// tool call ("codegen: edit textkit.go"), a line of the suites' output.
type progress struct {
	ctx   context.Context
	ss    *mcp.ServerSession
	token any

	mu   sync.Mutex
	n    int
	buf  bytes.Buffer
	lost int
}

func newProgress(ctx context.Context, req *mcp.CallToolRequest) *progress {
	pr := &progress{ctx: ctx}
	if req != nil && req.Params != nil {
		pr.token = req.Params.GetProgressToken()
		pr.ss = req.Session
	}
	return pr
}

// say sends one message.
func (pr *progress) say(msg string) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.sayLocked(msg)
}

func (pr *progress) sayLocked(msg string) {
	if pr.token == nil || pr.ss == nil {
		return
	}
	if pr.n >= maxProgress {
		pr.lost++
		return
	}
	pr.n++
	// A client that went away is not an error of the run.
	_ = pr.ss.NotifyProgress(context.WithoutCancel(pr.ctx), &mcp.ProgressNotificationParams{
		ProgressToken: pr.token, Progress: float64(pr.n), Message: clip.Head(msg, 500),
	})
}

// tool hears an agent's tool call (agent.Runtime.OnTool).
func (pr *progress) tool(role, name string, args json.RawMessage, refused bool) {
	line := role + ": " + tools.Describe(name, args)
	if refused {
		line += " (refused)"
	}
	pr.say(line)
}

// lines is a writer whose every complete line is a message (the suites'
// live output).
func (pr *progress) lines() io.Writer { return lineWriter{pr} }

type lineWriter struct{ pr *progress }

func (w lineWriter) Write(p []byte) (int, error) {
	pr := w.pr
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.buf.Write(p)
	for {
		line, err := pr.buf.ReadBytes('\n')
		if err != nil {
			// An incomplete line waits for its end (bounded).
			if len(line) > 4096 {
				pr.sayLocked(string(line))
			} else {
				pr.buf.Write(line)
			}
			return len(p), nil
		}
		if l := bytes.TrimRight(line, "\r\n"); len(l) > 0 {
			pr.sayLocked(string(l))
		}
	}
}
