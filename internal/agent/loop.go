package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/orchdev/orch/internal/agent/tools"
	"github.com/orchdev/orch/internal/clip"
	"github.com/orchdev/orch/internal/llm"
)

// TurnLimitError: a role's tool loop used every turn [tools] max_turns
// allows without calling finish.
type TurnLimitError struct {
	Role  string
	Turns int
}

func (e *TurnLimitError) Error() string {
	return fmt.Sprintf("orch: the %s used %d model turns, the limit of [tools] max_turns, without finishing: raise it in .orch/config.toml or narrow the task, and run the phase again", e.Role, e.Turns)
}

// Ask asks role for its structured answer. When ws is given and the
// role's provider speaks tool calling, the model works in a tool loop
// (Loop); otherwise it answers once (JSON), re-prompted with validation
// errors.
func Ask[T any](ctx context.Context, c *Call, req llm.Request, ws *tools.Workspace, finish string, validate func([]byte) (T, error)) (T, error) {
	if ws != nil {
		if _, _, _, err := c.rt.Provider(req.Role); err != nil {
			var zero T
			return zero, err
		}
		if c.rt.ToolsFor(req.Role) {
			v, err := Loop(ctx, c, req, ws, finish, validate)
			if !IsToolsRefused(err) {
				return v, err
			}
			// The server refused the tools (remembered by now): the
			// same request answered once, its context in the prompt.
		}
	}
	return JSON(ctx, c, req, validate)
}

// ToolsFor reports whether role's provider speaks tool calling and has
// not refused it (see toolsmemory.go).
func (rt *Runtime) ToolsFor(role string) bool {
	p, cfg, model, err := rt.Provider(role)
	return err == nil && llm.SupportsTools(p) && !rt.toolsRefused(cfg, model)
}

// Loop runs one role's tool loop: each model turn is a model_call
// (budgeted before it is sent, cached by the conversation so far); the
// tools the model calls run in ws and their results (errors included) go
// back to it; the loop ends when finish is called with arguments validate
// accepts — the role's answer — or after [tools] max_turns turns.
// finish describes the finish tool; its parameters are req.Schema.
func Loop[T any](ctx context.Context, c *Call, req llm.Request, ws *tools.Workspace, finish string, validate func([]byte) (T, error)) (T, error) {
	var zero T
	p, err := c.provider(req.Role)
	if err != nil {
		return zero, err
	}
	maxTurns := c.rt.Config.Tools.MaxTurns
	if maxTurns <= 0 {
		maxTurns = 30
	}
	schema := req.Schema
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	r := req
	r.Schema, r.SchemaName = nil, ""
	r.Tools = append(ws.Definitions(), tools.FinishTool(finish, schema))
	msgs := append([]llm.Message(nil), req.Messages...)
	reads := staleReads{}
	for turn := 1; turn <= maxTurns; turn++ {
		r.Messages = movingBreakpoint(msgs)
		resp, err := p.Complete(ctx, r)
		if err != nil {
			return zero, err
		}
		calls := append([]llm.ToolCall(nil), resp.ToolCalls...)
		for i := range calls {
			if calls[i].ID == "" {
				calls[i].ID = fmt.Sprintf("call_%d_%d", turn, i+1)
			}
		}
		// The answer goes back as it came (Anthropic's thinking blocks
		// included, which must precede the tool calls they led to).
		turnMsg := resp.AssistantMessage()
		turnMsg.ToolCalls = calls
		msgs = append(msgs, turnMsg)
		if len(calls) == 0 {
			// An answer in text instead of finish: accepted when it is a
			// valid answer, else the model is told how to answer.
			if v, verr := llm.CheckAnswer(resp.Text, validate); verr == nil {
				p.keep()
				return v, nil
			}
			p.keep()
			msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: "Work with the tools offered, and give your answer by calling " + tools.Finish + " with it as the arguments."})
			continue
		}
		left := maxTurns - turn
		finished, ok := false, true
		var result T
		for _, tc := range calls {
			if tc.Name == tools.Finish {
				if problem, bad := tools.ArgsProblem(tc.Arguments); bad {
					ok = false
					msgs = append(msgs, toolResult(tc.ID, "Your answer was not accepted: "+problem+"\nCall "+tools.Finish+" again with the answer as one JSON object.", true, left))
					continue
				}
				v, verr := validate(tc.Arguments)
				if verr == nil {
					finished, result = true, v
					break
				}
				ok = false
				msgs = append(msgs, toolResult(tc.ID, "Your answer was not accepted: "+clip.Bytes(verr.Error(), 2000)+"\nCall "+tools.Finish+" again with a corrected answer.", true, left))
				continue
			}
			out, isErr, err := ws.Call(ctx, tc.Name, tc.Arguments)
			if err != nil {
				return zero, fmt.Errorf("%s: tool %s: %w", req.Role, tc.Name, err)
			}
			if c.rt.OnTool != nil {
				c.rt.OnTool(req.Role, tc.Name, tc.Arguments, isErr)
			}
			msgs = append(msgs, toolResult(tc.ID, out, isErr, left))
			if !isErr {
				reads.track(msgs, tc.Name, tc.Arguments, len(msgs)-1)
			}
		}
		if finished {
			p.keep()
			return result, nil
		}
		if ok {
			p.keep()
		}
	}
	return zero, &TurnLimitError{Role: req.Role, Turns: maxTurns}
}

// staleReads remembers, per path, the read_file results in the
// conversation; when a later call edits, writes or deletes the file, they
// are replaced by a short note, so that the conversation re-sent every
// turn carries neither lines that are no longer true nor their tokens.
type staleReads map[string][]int

// StaleReadNote replaces a read_file result that a later edit made stale.
const StaleReadNote = "(This read_file result was removed: you changed %s afterwards. read_file shows it as edited, if you need its lines again.)"

// track records the result at msgs[i] of a successful call name(args).
func (s staleReads) track(msgs []llm.Message, name string, args json.RawMessage, i int) {
	var a struct {
		Path string `json:"path"`
	}
	if json.Unmarshal(args, &a) != nil || a.Path == "" {
		return
	}
	p := path.Clean(strings.TrimPrefix(a.Path, "./"))
	switch name {
	case tools.ReadFile:
		s[p] = append(s[p], i)
	case tools.EditFile, tools.WriteFile, tools.DeleteFile:
		for _, k := range s[p] {
			msgs[k].Content = fmt.Sprintf(StaleReadNote, p)
		}
		delete(s, p)
	}
}

// movingBreakpoint returns msgs with a cache breakpoint on the last
// message, besides the stable prefix's own: each turn writes the whole
// conversation so far into the provider's prompt cache, and the next turn
// reads it back instead of paying for the earlier tool results again
// (Anthropic; a command speaking protocol 2 gets cache_breakpoint). Only
// the newest message carries the moving mark, so a request has at most the
// prefix's marks and one more (Anthropic allows four).
func movingBreakpoint(msgs []llm.Message) []llm.Message {
	out := append([]llm.Message(nil), msgs...)
	if n := len(out); n > 0 {
		out[n-1].CacheBreakpoint = true
	}
	return out
}

// toolResult is the message answering one tool call; near the turn limit
// it says how many turns are left.
func toolResult(id, content string, isErr bool, left int) llm.Message {
	if left <= 2 {
		content += fmt.Sprintf("\n(%d model turn(s) left in this run: call %s soon)", left, tools.Finish)
	}
	return llm.Message{Role: llm.RoleTool, ToolCallID: id, Content: content, IsError: isErr}
}
