// Package planner does the planning phase: it asks the planner role for a
// plan (in a tool loop with the read-only tools when the provider speaks
// them), checks it, keeps the person's answers to its questions, and
// stages planning.ai.json, plan.md, plan.files.json and the meeting log.
// AnswerQuestion records a person's answer between rounds.
package planner
