// Package testrun runs a task's test and lint suites for orch's test phase
// and turns their results into the test/report.json artifact
// (artifact.TestReport).
//
// The caller hands over a prepared directory (a worktree with the patch
// applied). Detect guesses the suites of a project from its build files,
// Run executes them one after another, and the parsers turn `go test -json`
// streams and JUnit XML reports into cases.
//
// The suites run through package sandbox: under bubblewrap unless
// Options.Sandbox is "none" (an explicit opt-out, noted in RunInfo), with
// an environment filtered by sandbox.SanitizeEnv, held until their limits
// are in place, and stopped with every process they started. Its doc
// comment says what the sandbox guarantees and what it cannot.
package testrun
