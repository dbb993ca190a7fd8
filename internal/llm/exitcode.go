package llm

import "github.com/orchdev/orch/internal/exit"

// A provider that fails — no key, unreachable, an API error, a timeout, a
// refusal, a command that fails or prints no valid answer, a script that
// ran out — is exit 8 (exit.Provider), whichever command called it. An
// answer that arrived but never became valid is exit 4
// (InvalidResponseError).

// ExitCode: a missing API key is a provider failure (exit 8).
func (e *KeyError) ExitCode() exit.Code { return exit.Provider }

// ExitCode: an API error is a provider failure (exit 8).
func (e *APIError) ExitCode() exit.Code { return exit.Provider }

// ExitCode: an unreachable API is a provider failure (exit 8).
func (e *ConnectionError) ExitCode() exit.Code { return exit.Provider }

// ExitCode: a call that timed out is a provider failure (exit 8).
func (e *TimeoutError) ExitCode() exit.Code { return exit.Provider }

// ExitCode: a model that refused to answer is a provider failure (exit 8).
func (e *RefusalError) ExitCode() exit.Code { return exit.Provider }

// ExitCode: an answer that breaks the wire protocol is a provider failure
// (exit 8).
func (e *ProtocolError) ExitCode() exit.Code { return exit.Provider }

// ExitCode: a command provider whose process failed is a provider failure
// (exit 8).
func (e *CommandError) ExitCode() exit.Code { return exit.Provider }

// ExitCode: a script with no answer left is a provider failure (exit 8).
func (e *ScriptExhaustedError) ExitCode() exit.Code { return exit.Provider }
