package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// A script file, replayed by the script provider:
//
//	{"responses": [
//	  {"role": "planner", "text": "free text answer"},
//	  {"role": "plan_reviewer", "json": {"ok": true}},
//	  {"role": "plan_reviewer:risk", "json": {"ok": false}},
//	  {"role": "codegen", "text": "Let me look first.",
//	   "tool_calls": [{"name": "read_file", "arguments": {"path": "calc.go"}}]},
//	  {"role": "codegen", "tool_calls": [{"id": "c2", "name": "run_tests", "arguments": {}}],
//	   "usage": {"input_tokens": 1200, "output_tokens": 40}},
//	  {"role": "codegen", "text": "{\"status\": \"comp", "stop_reason": "length"}
//	]}
//
// Each entry has a non-empty role and at least one of "text" (a string),
// "json" (any JSON value, returned compacted as the answer's text; not with
// "text") and "tool_calls". A tool call has a non-blank "name", "arguments"
// (a JSON object; missing means {}) and an optional "id" (default
// "script_<entry>_<call>", both counted from 0); ids are unique in the file.
// An entry with tool calls answers only a request that offers tools.
// "stop_reason" (default "tool_calls" for an entry with tool calls, "stop"
// otherwise) replays why the model stopped: "length" or "max_tokens"
// replays an answer cut off at the output limit. "usage" replays the token
// counts ({"input_tokens", "output_tokens", "cached_input_tokens",
// "cache_write_tokens"}, non-negative). Unknown fields are refused so that
// a typo does not go unnoticed.

// scriptEntry is one scripted answer.
type scriptEntry struct {
	Role       string
	Text       string
	ToolCalls  []ToolCall
	StopReason string
	Usage      Usage
}

type scriptFileWire struct {
	Responses []scriptEntryWire `json:"responses"`
}

type scriptEntryWire struct {
	Role       string               `json:"role"`
	Text       *string              `json:"text"`
	JSON       json.RawMessage      `json:"json"`
	ToolCalls  []scriptToolCallWire `json:"tool_calls"`
	StopReason *string              `json:"stop_reason"`
	Usage      *Usage               `json:"usage"`
}

type scriptToolCallWire struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// decodeScript parses a script file.
func decodeScript(data []byte) ([]scriptEntry, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var w scriptFileWire
	if err := dec.Decode(&w); err != nil {
		return nil, fmt.Errorf("not a script object {\"responses\": [...]}: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the script object")
	}
	// A script is UTF-8 text. What its answers hold is left alone (a
	// script may replay a hostile answer): CompleteJSON checks it.
	if err := checkUTF8(data); err != nil {
		return nil, err
	}
	if len(w.Responses) == 0 {
		return nil, errors.New(`"responses" is missing or empty`)
	}
	ids := map[string]string{}
	entries := make([]scriptEntry, 0, len(w.Responses))
	for i, e := range w.Responses {
		at := fmt.Sprintf("responses[%d]", i)
		if strings.TrimSpace(e.Role) == "" {
			return nil, fmt.Errorf("%s: \"role\" is missing or blank", at)
		}
		entry := scriptEntry{Role: e.Role}
		hasJSON := len(e.JSON) > 0 && !bytes.Equal(e.JSON, []byte("null"))
		switch {
		case e.Text != nil && hasJSON:
			return nil, fmt.Errorf("%s: has both \"text\" and \"json\"; give one", at)
		case e.Text != nil:
			entry.Text = *e.Text
		case hasJSON:
			text, err := compactJSON(e.JSON)
			if err != nil {
				return nil, fmt.Errorf("%s.json: %w", at, err)
			}
			entry.Text = text
		case len(e.ToolCalls) == 0:
			return nil, fmt.Errorf("%s: needs \"text\", \"json\" or \"tool_calls\"", at)
		}
		for k, c := range e.ToolCalls {
			cat := fmt.Sprintf("%s.tool_calls[%d]", at, k)
			if strings.TrimSpace(c.Name) == "" {
				return nil, fmt.Errorf("%s: \"name\" is missing or blank", cat)
			}
			args, err := toolArguments(c.Arguments)
			if err != nil {
				return nil, fmt.Errorf("%s.arguments: %w", cat, err)
			}
			id := c.ID
			if id == "" {
				id = fmt.Sprintf("script_%d_%d", i, k)
			}
			if prev, dup := ids[id]; dup {
				return nil, fmt.Errorf("%s: id %q is already used by %s; tool call ids must be unique", cat, id, prev)
			}
			ids[id] = cat
			entry.ToolCalls = append(entry.ToolCalls, ToolCall{ID: id, Name: c.Name, Arguments: args})
		}
		switch {
		case e.StopReason != nil && strings.TrimSpace(*e.StopReason) == "":
			return nil, fmt.Errorf("%s: \"stop_reason\" is blank; leave it out for the default", at)
		case e.StopReason != nil:
			entry.StopReason = *e.StopReason
		case len(entry.ToolCalls) > 0:
			entry.StopReason = "tool_calls"
		default:
			entry.StopReason = "stop"
		}
		if e.Usage != nil {
			if err := checkUsage(*e.Usage); err != nil {
				return nil, fmt.Errorf("%s.usage: %w", at, err)
			}
			entry.Usage = *e.Usage
		}
		entries = append(entries, entry)
	}
	return entries, nil
}

// toolArguments checks a tool call's arguments, which must be one JSON
// object; missing or null arguments are the empty object.
func toolArguments(raw json.RawMessage) (json.RawMessage, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return json.RawMessage("{}"), nil
	}
	if t[0] != '{' || !json.Valid(t) {
		return nil, errors.New("expected a JSON object")
	}
	s, err := compactJSON(t)
	if err != nil {
		return nil, err
	}
	return json.RawMessage(s), nil
}

// checkUsage refuses negative token counts.
func checkUsage(u Usage) error {
	if u.InputTokens < 0 || u.OutputTokens < 0 || u.CachedInputTokens < 0 || u.CacheWriteTokens < 0 {
		return errors.New("a token count is negative")
	}
	return nil
}

// roleMatches reports whether a script entry's role answers a request's
// role: equal, or equal to the request role's part before ':' (entry
// "plan_reviewer" answers "plan_reviewer:risk").
func roleMatches(entryRole, reqRole string) bool {
	if entryRole == reqRole {
		return true
	}
	base, _, found := strings.Cut(reqRole, ":")
	return found && entryRole == base
}
