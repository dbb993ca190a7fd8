// Package agenttest holds the fixtures of the agents' tests: a git
// repository with a task in planning (PlanEnv) or in codegen (CodeEnv),
// fake OpenAI and Anthropic APIs speaking the real wire format, scripted
// models that speak tool calling (ToolModel), and golden files. It is
// imported by tests only.
package agenttest
