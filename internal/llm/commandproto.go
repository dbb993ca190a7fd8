package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/orchdev/orch/internal/clip"
)

// The command protocol, versions 1 and 2. docs/command-protocol.md (at
// the repository top) says the same for people writing such a command.
//
// orch starts Config.Command (argv, no shell) in its own process group,
// writes ONE JSON object to its stdin and closes it:
//
//	{"version": 1,
//	 "role": "planner",                 // orch role making the call
//	 "model": "my-model",               // may be ""
//	 "messages": [{"role": "system"|"user"|"assistant", "content": "..."}],
//	 "schema": {...},                   // optional: JSON schema of a structured answer
//	 "schema_name": "plan",             // optional, with schema
//	 "max_tokens": 4096,                // optional
//	 "temperature": 0.2}                // optional
//
// and reads ONE JSON object from its stdout (at most 16 MiB, UTF-8, no key
// twice in one object even in another case, no escaped lone UTF-16
// surrogate; surrounding whitespace is allowed, anything else is not):
//
//	{"text": "...",                     // the answer; for a structured answer the JSON as a string
//	 "json": {...},                     // instead of "text": the structured answer as JSON
//	 "usage": {"input_tokens": 12, "output_tokens": 34},  // optional
//	 "model": "my-model",               // optional
//	 "stop_reason": "stop",             // optional
//	 "refusal": "..."}                  // optional: the model declined; no text needed
//
// Exactly one of "text" and "json" is required unless "refusal" is set.
// Unknown fields are ignored. A non-zero exit status is a failure whose
// message includes the end of stderr; stderr is otherwise only diagnostic.
// At the timeout or on cancellation the whole process group is killed.
//
// Version 2 (Config.CommandProtocol 2) carries tool calling in OpenAI's
// chat-completions shapes. The request has "version": 2 and may have
//
//	"tools": [{"type": "function", "function": {"name": "read_file",
//	           "description": "...", "parameters": {...}}}],
//	"cache_key": "...", "reasoning_effort": "high",
//
// and its messages may be assistant turns with "tool_calls": [{"id":
// "call_1", "type": "function", "function": {"name": "read_file",
// "arguments": "{\"path\":\"a.go\"}"}}] and tool results {"role": "tool",
// "tool_call_id": "call_1", "content": "...", "is_error": true}; a message
// may carry "cache_breakpoint": true. The response may have "tool_calls"
// in the same shape ("arguments" a string holding a JSON object, or the
// object itself; "id" defaults to "call_<n>", counted from 0), in which
// case "text" and "json" are optional. A version 2 command that cannot
// serve tool calling for a request (its model does not speak it) answers
// {"tools_refused": "why"}; orch then asks without tools and remembers.

// Command protocol versions.
const (
	CommandProtocolV1 = 1
	CommandProtocolV2 = 2
)

// commandRequest is the object written to the command's stdin.
type commandRequest struct {
	Version         int               `json:"version"`
	Role            string            `json:"role"`
	Model           string            `json:"model"`
	Messages        any               `json:"messages"` // []commandMessageV1 or []commandMessageV2
	Tools           []commandToolWire `json:"tools,omitempty"`
	Schema          json.RawMessage   `json:"schema,omitempty"`
	SchemaName      string            `json:"schema_name,omitempty"`
	MaxTokens       int               `json:"max_tokens,omitempty"`
	Temperature     *float64          `json:"temperature,omitempty"`
	CacheKey        string            `json:"cache_key,omitempty"`
	ReasoningEffort string            `json:"reasoning_effort,omitempty"`
}

type commandMessageV1 struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type commandMessageV2 struct {
	Role            string             `json:"role"`
	Content         string             `json:"content"`
	ToolCalls       []openaiToolCallWS `json:"tool_calls,omitempty"`
	ToolCallID      string             `json:"tool_call_id,omitempty"`
	IsError         bool               `json:"is_error,omitempty"`
	CacheBreakpoint bool               `json:"cache_breakpoint,omitempty"`
}

// openaiToolCallWS is a tool call in OpenAI's shape, arguments as a string.
type openaiToolCallWS struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type commandToolWire struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// encodeCommandRequest builds the request object of the given protocol
// version. Version 1 refuses what it cannot carry.
func encodeCommandRequest(version int, req Request, model string) (commandRequest, error) {
	out := commandRequest{
		Version: version, Role: req.Role, Model: model,
		Schema: req.Schema, SchemaName: req.SchemaName,
		MaxTokens: req.MaxTokens, Temperature: req.Temperature,
	}
	if version == CommandProtocolV1 {
		if len(req.Tools) > 0 {
			return out, errors.New("the request offers tools, which protocol version 1 cannot carry; set the provider's protocol = 2 if the command speaks version 2 (docs/command-protocol.md)")
		}
		msgs := make([]commandMessageV1, 0, len(req.Messages))
		for i, m := range req.Messages {
			if m.Role == RoleTool || len(m.ToolCalls) > 0 {
				return out, fmt.Errorf("message %d carries tool calls or results, which protocol version 1 cannot carry", i)
			}
			msgs = append(msgs, commandMessageV1{Role: m.Role, Content: m.Content})
		}
		out.Messages = msgs
		return out, nil
	}
	out.CacheKey, out.ReasoningEffort = req.CacheKey, req.ReasoningEffort
	msgs := make([]commandMessageV2, 0, len(req.Messages))
	for _, m := range req.Messages {
		w := commandMessageV2{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, IsError: m.IsError, CacheBreakpoint: m.CacheBreakpoint}
		for _, c := range m.ToolCalls {
			w.ToolCalls = append(w.ToolCalls, toOpenAIToolCall(c))
		}
		msgs = append(msgs, w)
	}
	out.Messages = msgs
	for _, t := range req.Tools {
		var w commandToolWire
		w.Type = "function"
		w.Function.Name, w.Function.Description, w.Function.Parameters = t.Name, t.Description, toolParameters(t.Parameters)
		out.Tools = append(out.Tools, w)
	}
	return out, nil
}

func toOpenAIToolCall(c ToolCall) openaiToolCallWS {
	var w openaiToolCallWS
	w.ID, w.Type = c.ID, "function"
	w.Function.Name = c.Name
	w.Function.Arguments = string(toolParameters(c.Arguments))
	return w
}

// toolParameters returns raw, or the empty object when raw is empty.
func toolParameters(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage("{}")
	}
	return raw
}

// commandResponse is the decoded stdout of a command.
type commandResponse struct {
	Text       string
	Usage      Usage
	Model      string
	StopReason string
	Refusal    string
	ToolCalls  []ToolCall
	// ToolsRefused is, in version 2, why the command cannot serve a
	// request that offers tools ("" when it can).
	ToolsRefused string
}

type commandResponseWire struct {
	Text       json.RawMessage   `json:"text"`
	JSON       json.RawMessage   `json:"json"`
	Usage      *Usage            `json:"usage"`
	Model      *string           `json:"model"`
	StopReason *string           `json:"stop_reason"`
	Refusal    *string           `json:"refusal"`
	ToolCalls  []json.RawMessage `json:"tool_calls"`
	// ToolsRefused (version 2): the command cannot serve tool calling.
	ToolsRefused *string `json:"tools_refused"`
}

// maxToolCalls bounds the tool calls of one answer.
const maxToolCalls = 256

// decodeCommandResponse parses a command's stdout for protocol version
// 1 (which ignores "tool_calls" like any unknown field) or 2. The data is
// untrusted.
func decodeCommandResponse(data []byte, version int) (commandResponse, error) {
	var out commandResponse
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return out, errors.New("stdout is empty; expected one JSON object")
	}
	if trimmed[0] != '{' {
		return out, errors.New("stdout does not start with a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	var w commandResponseWire
	if err := dec.Decode(&w); err != nil {
		return out, fmt.Errorf("stdout is not a valid response object: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return out, errors.New("stdout has more than one JSON value")
	}
	if err := checkJSONText(trimmed); err != nil {
		return out, fmt.Errorf("stdout: %w", err)
	}
	if w.Refusal != nil {
		out.Refusal = *w.Refusal
	}
	if version >= CommandProtocolV2 {
		calls, err := decodeToolCalls(w.ToolCalls)
		if err != nil {
			return out, err
		}
		out.ToolCalls = calls
		if w.ToolsRefused != nil {
			if strings.TrimSpace(*w.ToolsRefused) == "" {
				return out, errors.New(`response field "tools_refused" is blank: say why the tools cannot be served, or leave the field out`)
			}
			out.ToolsRefused = *w.ToolsRefused
			return out, nil
		}
	}
	hasText := len(w.Text) > 0 && !bytes.Equal(w.Text, []byte("null"))
	hasJSON := len(w.JSON) > 0 && !bytes.Equal(w.JSON, []byte("null"))
	switch {
	case hasText && hasJSON:
		return out, errors.New(`response has both "text" and "json"; give one`)
	case hasText:
		if err := json.Unmarshal(w.Text, &out.Text); err != nil {
			return out, errors.New(`response field "text" is not a string`)
		}
	case hasJSON:
		text, err := compactJSON(w.JSON)
		if err != nil {
			return out, fmt.Errorf(`response field "json": %w`, err)
		}
		out.Text = text
	case out.Refusal == "" && len(out.ToolCalls) == 0:
		if version >= CommandProtocolV2 {
			return out, errors.New(`response has none of "text", "json" and "tool_calls"`)
		}
		return out, errors.New(`response has neither "text" nor "json"`)
	}
	if w.Usage != nil {
		if err := checkUsage(*w.Usage); err != nil {
			return out, fmt.Errorf("response usage: %w", err)
		}
		out.Usage = *w.Usage
	}
	if w.Model != nil {
		out.Model = *w.Model
	}
	if w.StopReason != nil {
		out.StopReason = *w.StopReason
	}
	if out.StopReason == "" && len(out.ToolCalls) > 0 {
		out.StopReason = "tool_calls"
	}
	return out, nil
}

// decodeToolCalls reads tool calls in OpenAI's shape; arguments may be a
// string holding a JSON object or the object itself.
func decodeToolCalls(raws []json.RawMessage) ([]ToolCall, error) {
	if len(raws) > maxToolCalls {
		return nil, fmt.Errorf("response has %d tool calls; at most %d are accepted", len(raws), maxToolCalls)
	}
	var calls []ToolCall
	seen := map[string]bool{}
	for i, raw := range raws {
		at := fmt.Sprintf("tool_calls[%d]", i)
		var w struct {
			ID       string `json:"id"`
			Type     string `json:"type"`
			Function *struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			} `json:"function"`
		}
		if err := json.Unmarshal(raw, &w); err != nil {
			return nil, fmt.Errorf(`%s: expected {"id", "type": "function", "function": {"name", "arguments"}}`, at)
		}
		if w.Type != "" && w.Type != "function" {
			return nil, fmt.Errorf(`%s.type: expected "function", got %q`, at, clip.Bytes(w.Type, 40))
		}
		if w.Function == nil || strings.TrimSpace(w.Function.Name) == "" {
			return nil, fmt.Errorf("%s.function.name: missing or blank", at)
		}
		args := bytes.TrimSpace(w.Function.Arguments)
		if len(args) > 0 && args[0] == '"' {
			var s string
			if err := json.Unmarshal(args, &s); err != nil {
				return nil, fmt.Errorf("%s.function.arguments: %w", at, err)
			}
			if strings.TrimSpace(s) == "" {
				s = "{}"
			}
			if !json.Valid([]byte(s)) {
				return nil, fmt.Errorf("%s.function.arguments: the string is not JSON", at)
			}
			if err := checkJSONText([]byte(s)); err != nil {
				return nil, fmt.Errorf("%s.function.arguments: %w", at, err)
			}
			args = []byte(s)
		}
		obj, err := toolArguments(args)
		if err != nil {
			return nil, fmt.Errorf("%s.function.arguments: %w", at, err)
		}
		id := w.ID
		if id == "" {
			id = fmt.Sprintf("call_%d", i)
		}
		if seen[id] {
			return nil, fmt.Errorf("%s.id: %q is used twice", at, clip.Bytes(id, 40))
		}
		seen[id] = true
		calls = append(calls, ToolCall{ID: id, Name: w.Function.Name, Arguments: obj})
	}
	return calls, nil
}

// compactJSON returns raw without insignificant space. Its callers have
// refused invalid UTF-8 (checkUTF8), which encoding/json would let
// through in a RawMessage.
func compactJSON(raw json.RawMessage) (string, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return "", err
	}
	return buf.String(), nil
}
