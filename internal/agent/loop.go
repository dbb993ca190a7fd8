package agent

import (
	"context"
	"encoding/json"
	"errors"
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
	return fmt.Sprintf("the %s used %d model turns, the limit of [tools] max_turns, without finishing: raise it in .orch/config.toml or narrow the task, and run the phase again", e.Role, e.Turns)
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
	// An answer cut at the output limit is continued: the role's output
	// limit bounds the whole answer, its cut parts and their continuations
	// together (spent counts their output tokens); the answer fails only
	// when that is used up. partial is the text of the cut parts so far.
	limit := req.MaxTokens
	if limit <= 0 {
		limit = c.rt.Config.OutputTokens(req.Role)
	}
	var spent int64
	partial := ""
	for turn := 1; turn <= maxTurns; turn++ {
		r.Messages = movingBreakpoint(msgs)
		r.MaxTokens = req.MaxTokens
		if spent > 0 && limit > 0 {
			r.MaxTokens = limit - int(spent)
		}
		resp, err := p.Complete(ctx, r)
		var cut *llm.TruncatedError
		if errors.As(err, &cut) {
			// A cut answer whose usage is not reported used the whole
			// limit it was sent with.
			used := resp.Usage.OutputTokens
			if used <= 0 {
				used = int64(limit) - spent
			}
			if limit > 0 && spent+used < int64(limit) && turn < maxTurns {
				spent += used
				msgs = append(msgs, continuation(resp, &partial)...)
				continue
			}
			// The role's whole output limit is spent: the error names it.
			cut.MaxTokens = limit
		}
		if err != nil {
			return zero, err
		}
		spent = 0
		if len(resp.ToolCalls) == 0 && partial != "" {
			resp.Text = partial + resp.Text
		}
		partial = ""
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

// ContinueNote asks the model to go on with an answer cut at the output
// limit; ShorterCallNote asks it to repeat a cut tool call in smaller
// parts. The cut part is in the conversation (the text as the model's
// turn, a cut call's arguments quoted in the note).
const (
	ContinueNote    = "Your answer was cut off at the output limit. Continue it exactly where it stopped: do not repeat what you already wrote."
	ShorterCallNote = "Your call of %s was cut off at the output limit, so it was not run; its arguments so far were:\n%s\nCall it again with less in one call: edit smaller ranges, write a large file in parts, give a shorter answer."
)

// continuation is what goes back to the model after a turn cut at the
// output limit (see Loop). A cut text answer is kept as the model's turn
// and added to *partial, the answer so far, and the model is asked to
// continue it; a cut tool call, whose arguments are not whole JSON, is
// never run: the model is told so, shown the cut arguments, and asked to
// call again with less.
func continuation(resp llm.Response, partial *string) []llm.Message {
	var out []llm.Message
	if resp.Text != "" {
		out = append(out, llm.Message{Role: llm.RoleAssistant, Content: resp.Text})
	}
	if n := len(resp.ToolCalls); n > 0 {
		*partial = ""
		tc := resp.ToolCalls[n-1]
		return append(out, llm.Message{Role: llm.RoleUser, Content: fmt.Sprintf(ShorterCallNote, tc.Name, clip.Bytes(string(tc.Arguments), 2000))})
	}
	*partial += resp.Text
	return append(out, llm.Message{Role: llm.RoleUser, Content: ContinueNote})
}
