package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// The command protocol, version 1. docs/command-protocol.md (at the repository top) says the
// same for people writing such a command.
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

// commandRequest is the object written to the command's stdin.
type commandRequest struct {
	Version     int             `json:"version"`
	Role        string          `json:"role"`
	Model       string          `json:"model"`
	Messages    []Message       `json:"messages"`
	Schema      json.RawMessage `json:"schema,omitempty"`
	SchemaName  string          `json:"schema_name,omitempty"`
	MaxTokens   int             `json:"max_tokens,omitempty"`
	Temperature *float64        `json:"temperature,omitempty"`
}

// commandProtocolVersion is the version field orch sends.
const commandProtocolVersion = 1

// commandResponse is the decoded stdout of a command.
type commandResponse struct {
	Text       string
	Usage      Usage
	Model      string
	StopReason string
	Refusal    string
}

type commandResponseWire struct {
	Text       json.RawMessage `json:"text"`
	JSON       json.RawMessage `json:"json"`
	Usage      *Usage          `json:"usage"`
	Model      *string         `json:"model"`
	StopReason *string         `json:"stop_reason"`
	Refusal    *string         `json:"refusal"`
}

// decodeCommandResponse parses a command's stdout. The data is untrusted.
func decodeCommandResponse(data []byte) (commandResponse, error) {
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
	case out.Refusal == "":
		return out, errors.New(`response has neither "text" nor "json"`)
	}
	if w.Usage != nil {
		if w.Usage.InputTokens < 0 || w.Usage.OutputTokens < 0 {
			return out, errors.New("response usage has a negative token count")
		}
		out.Usage = *w.Usage
	}
	if w.Model != nil {
		out.Model = *w.Model
	}
	if w.StopReason != nil {
		out.StopReason = *w.StopReason
	}
	return out, nil
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
