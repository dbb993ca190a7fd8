package llm

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/orchdev/orch/internal/exit"
)

// ErrNoProvider is returned by FromEnvironment when no environment variable
// selects a provider. Like a missing or rejected key it is a provider
// failure: exit 8 (README, "Exit codes").
var ErrNoProvider = exit.NewSentinel(exit.Provider, "no model provider configured")

// KeyError is a missing or rejected API key. It names the environment
// variable, never the key.
type KeyError struct {
	Provider string
	EnvVar   string
	// Rejected is true when the server refused the key (HTTP 401 or 403);
	// false when the variable was not set.
	Rejected   bool
	StatusCode int
}

func (e *KeyError) Error() string {
	if e.Rejected && e.EnvVar == "" {
		return fmt.Sprintf("provider %s: the server requires an API key (HTTP %d %s) and none is configured; name the environment variable holding it in the provider's configuration",
			e.Provider, e.StatusCode, http.StatusText(e.StatusCode))
	}
	if e.Rejected {
		return fmt.Sprintf("provider %s: the API key in environment variable %s was rejected (HTTP %d %s); check the key and its permissions",
			e.Provider, e.EnvVar, e.StatusCode, http.StatusText(e.StatusCode))
	}
	return fmt.Sprintf("provider %s: environment variable %s is not set", e.Provider, e.EnvVar)
}

// ConfigError is an unusable provider configuration or request.
type ConfigError struct {
	Provider string
	Msg      string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("provider %s: %s", e.Provider, e.Msg)
}

// APIError is an HTTP error answer of a model API other than a rejected
// key. Message is the server's explanation, shortened, with the key
// removed should the server have echoed it.
type APIError struct {
	Provider   string
	StatusCode int
	Message    string
	// RetryAfter is the wait the server asked for, 0 when it did not.
	RetryAfter time.Duration
	// Attempts is how many requests were made in total.
	Attempts int
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "provider %s: HTTP %d %s", e.Provider, e.StatusCode, http.StatusText(e.StatusCode))
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (after %d attempts)", e.Attempts)
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, " (server asked to retry after %s)", e.RetryAfter)
	}
	return b.String()
}

// Retryable reports whether the status is worth retrying.
func (e *APIError) Retryable() bool {
	return e.StatusCode == http.StatusRequestTimeout ||
		e.StatusCode == http.StatusTooManyRequests ||
		e.StatusCode >= 500
}

// ConnectionError is a failure to reach the API or a broken connection.
type ConnectionError struct {
	Provider string
	Msg      string // the transport error's text, key removed
	Attempts int
	Err      error
}

func (e *ConnectionError) Error() string {
	s := fmt.Sprintf("provider %s: connection failed: %s", e.Provider, e.Msg)
	if e.Attempts > 1 {
		s += fmt.Sprintf(" (after %d attempts)", e.Attempts)
	}
	return s
}

func (e *ConnectionError) Unwrap() error { return e.Err }

// TimeoutError is a call that did not finish within Config.Timeout. It
// matches context.DeadlineExceeded with errors.Is.
type TimeoutError struct {
	Provider string
	Timeout  time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("provider %s: no answer within %s; raise the provider's timeout or try again", e.Provider, e.Timeout)
}

func (e *TimeoutError) Unwrap() error { return context.DeadlineExceeded }

// RefusalError is a model declining to answer.
type RefusalError struct {
	Provider string
	Message  string // the model's explanation, when it gave one
}

func (e *RefusalError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("provider %s: the model refused to answer", e.Provider)
	}
	return fmt.Sprintf("provider %s: the model refused to answer: %s", e.Provider, e.Message)
}

// ProtocolError is an answer that does not have the shape the provider's
// protocol requires (no choices, a stream cut short, garbage on a
// command's stdout).
type ProtocolError struct {
	Provider string
	Msg      string
	Err      error
}

func (e *ProtocolError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("provider %s: %s: %v", e.Provider, e.Msg, e.Err)
	}
	return fmt.Sprintf("provider %s: %s", e.Provider, e.Msg)
}

func (e *ProtocolError) Unwrap() error { return e.Err }

// InvalidResponseError is returned by CompleteJSON when no attempt produced
// an answer that parsed and validated. Raw is the last raw answer, for the
// caller to keep in the task folder.
type InvalidResponseError struct {
	Raw      string
	Err      error
	Attempts int
}

// ExitCode: an answer that never became valid is exit 4.
func (e *InvalidResponseError) ExitCode() exit.Code { return exit.Invalid }

func (e *InvalidResponseError) Error() string {
	return fmt.Sprintf("the model's answer is still invalid after %d attempts: %v", e.Attempts, e.Err)
}

func (e *InvalidResponseError) Unwrap() error { return e.Err }

// CommandError is a command provider whose process failed.
type CommandError struct {
	Provider string
	Command  string // argv[0]
	// Status is the process's exit status, -1 when it was killed or did
	// not start.
	Status int
	Stderr string // the end of its stderr
	Err    error
}

func (e *CommandError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "provider %s: command %s", e.Provider, e.Command)
	switch {
	case e.Status >= 0:
		fmt.Fprintf(&b, " exited with status %d", e.Status)
	case e.Err != nil:
		fmt.Fprintf(&b, " failed: %v", e.Err)
	default:
		b.WriteString(" failed")
	}
	if s := strings.TrimSpace(e.Stderr); s != "" {
		fmt.Fprintf(&b, "; stderr:\n%s", s)
	}
	return b.String()
}

func (e *CommandError) Unwrap() error { return e.Err }

// ScriptExhaustedError is a script provider with no scripted answer left
// for a role.
type ScriptExhaustedError struct {
	Provider string
	File     string
	Role     string
	Used     int // answers already given to this role
}

func (e *ScriptExhaustedError) Error() string {
	return fmt.Sprintf("provider %s: script %s has no answer left for role %q (%d given); add entries with that role to its \"responses\" list",
		e.Provider, e.File, e.Role, e.Used)
}

// redact removes secret from s.
func redact(s, secret string) string {
	if secret == "" {
		return s
	}
	return strings.ReplaceAll(s, secret, "[REDACTED]")
}

// TruncatedError is an answer cut off at the output limit (OpenAI
// finish_reason "length", Anthropic stop_reason "max_tokens", or orch
// stopping a stream that ran past Request.MaxTokens). Sending the same
// request again would be cut again: the limit has to be raised.
type TruncatedError struct {
	Provider   string
	Role       string // the orch role, "plan_reviewer:risk" included
	MaxTokens  int    // the limit sent, 0 for the provider's default
	StopReason string
	// OutputTokens is what the answer used, as reported.
	OutputTokens int64
}

func (e *TruncatedError) Error() string {
	limit := "the provider's default output limit"
	if e.MaxTokens > 0 {
		limit = fmt.Sprintf("its output limit of %d tokens", e.MaxTokens)
	}
	role, _, _ := strings.Cut(e.Role, ":")
	if role == "" {
		role = "<role>"
	}
	return fmt.Sprintf("provider %s: the model's answer for %s was cut off at %s (stop reason %s, %d output tokens); it was not sent again: raise max_output_tokens.%s in .orch/config.toml ([max_output_tokens] %s = …) and run the phase again",
		e.Provider, roleLabel(e.Role), limit, e.StopReason, e.OutputTokens, role, role)
}

func roleLabel(role string) string {
	if role == "" {
		return "this call"
	}
	return "role " + role
}

// CheckTruncated returns a *TruncatedError when resp was cut off at the
// output limit of req, nil otherwise.
func CheckTruncated(req Request, resp Response) error {
	if !resp.Truncated() {
		return nil
	}
	return &TruncatedError{Provider: resp.Provider, Role: req.Role, MaxTokens: req.MaxTokens, StopReason: resp.StopReason, OutputTokens: resp.Usage.OutputTokens}
}
