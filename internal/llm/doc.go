// Package llm is orch's model-provider layer.
//
// Agents call one small interface, [Provider], with a [Request] (a role, the
// messages and optionally a JSON schema for a structured answer) and get a
// [Response] back. orch decides the structure of the work in code; a model
// only produces content, and everything a model returns is untrusted input:
// [CompleteJSON] checks a structured answer with a caller-supplied validator
// and asks again, a bounded number of times, with the validation error.
//
// Four kinds of provider are built by [New] from a [Config]:
//
//   - "openai": any server speaking the OpenAI chat-completions API (OpenAI,
//     Ollama, vLLM, LM Studio, OpenRouter) through the official SDK.
//   - "anthropic": the Anthropic messages API through the official SDK.
//   - "command": any executable speaking the JSON protocol in docs/command-protocol.md
//     (one request object on stdin, one response object on stdout).
//   - "script": deterministic replay of scripted answers from a file, for
//     tests and demos.
//
// API keys are read from the environment variable named in the
// configuration, once, when the provider is built. A key never appears in an
// error, a log line or a [Response]; errors name the variable instead.
//
// HTTP providers retry 408, 429, 5xx answers and connection errors with
// exponential backoff and jitter, honouring Retry-After, up to
// Config.MaxRetries times (the SDKs' own retries are switched off so that
// one tested policy applies). Config.Timeout bounds one Complete call,
// retries and waits included. Cancelling the context aborts a call promptly.
package llm
