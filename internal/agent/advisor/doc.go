// Package advisor asks the accept advisor for a recommendation on a task
// in accept, from the evidence; it never decides (the person does, with
// orch accept).
package advisor
