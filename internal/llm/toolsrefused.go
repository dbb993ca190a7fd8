package llm

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// ToolsRefusedError is a server (or a command speaking protocol 2) that
// refused a request because it offered tools: the server or its model does
// not speak tool calling (Ollama's "does not support tools", vLLM started
// without --enable-auto-tool-choice, an OpenRouter route without tool
// support). The same request without tools may succeed; the agents then
// answer once per role and remember the refusal (see Runtime.ToolsFor).
type ToolsRefusedError struct {
	Provider string
	// Message is the server's explanation, shortened.
	Message string
	// Err is the underlying *APIError; nil for a command's answer.
	Err error
}

func (e *ToolsRefusedError) Error() string {
	return fmt.Sprintf("provider %s refused tool calling: %s", e.Provider, e.Message)
}

func (e *ToolsRefusedError) Unwrap() error { return e.Err }

// toolWords are what a refusal of tools says, lower-cased; a 4xx answer
// to a request with tools whose message has none of them is some other
// mistake (a wrong model name, a context too long) and stays an *APIError.
var toolWords = []string{"tool", "function call", "function_call", "functions"}

// refusedTools reports whether an HTTP error answer to a request offering
// tools is a refusal of tool calling: a client error other than a rejected
// key, a timeout or a rate limit, whose message (or body) speaks of tools.
func refusedTools(status int, message string) bool {
	switch status {
	case http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed,
		http.StatusUnprocessableEntity, http.StatusNotImplemented:
	default:
		return false
	}
	m := strings.ToLower(message)
	for _, w := range toolWords {
		if strings.Contains(m, w) {
			return true
		}
	}
	return false
}

// classifyToolsRefusal turns err, the failure of a request that offered
// tools, into a *ToolsRefusedError when the server refused the tools;
// body is the error answer's body as read (it holds the message where an
// SDK did not find one, as with vLLM's top-level "message").
func classifyToolsRefusal(err error, provider string, body string) error {
	var ae *APIError
	if !errors.As(err, &ae) {
		return err
	}
	msg := ae.Message
	if !refusedTools(ae.StatusCode, msg) {
		if !refusedTools(ae.StatusCode, body) {
			return err
		}
		msg = strings.TrimSpace(body)
	}
	if msg == "" {
		msg = fmt.Sprintf("HTTP %d", ae.StatusCode)
	}
	return &ToolsRefusedError{Provider: provider, Message: shortMessage(msg), Err: err}
}

// shortMessage bounds a server's message for an error text.
func shortMessage(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > maxErrorMessage {
		s = strings.ToValidUTF8(s[:maxErrorMessage], "") + "…"
	}
	return s
}
