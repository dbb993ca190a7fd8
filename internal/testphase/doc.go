// Package testphase is the test phase's work: code/diff.patch applied in a
// worktree of the base commit (a warm one per repository in the user's
// cache, reset before each run), the configured or detected suites run
// there through package testrun (sandboxed by package sandbox), and
// test/report.json written. The user's working tree is never touched.
//
// Run is the phase worker (`orch test`); RunPatch runs the same suites
// without a phase run, for codegen's run_tests and accept's regression
// check. Like every worker it follows the orchestrator's RunPhase protocol:
// the phase is marked running under the task's lock, the work happens
// without the lock into a staging folder, and the report is committed under
// the lock after a revision check.
package testphase
