// Package view holds the read-only pictures of a project that orch's
// front ends print or serve: a task's status with the command that moves
// it on, the task list, and the model-call costs. The CLI (`orch status
// --json`, `orch list --json`, `orch cost --json`) and the MCP server
// (internal/mcpserver) build them here, so both say the same thing.
package view
