// Package testrun finds and runs a task's test and lint suites for orch's
// test phase and turns their results into the test/report.json artifact
// (artifact.TestReport).
//
// The caller hands over a prepared directory (a worktree with the patch
// applied) and the user's working tree. Detect guesses the suites of a
// project from its build files and says why (detect.go). Run executes the
// setup commands and then the suites one after another (run.go,
// runsuite.go), reads their results through package testreport's parsers
// (go test -json, JUnit XML from a file, folder or glob, libtest, TAP),
// and tells the runner's failures from the tests' (judge.go): a missing
// command, tests that could not be collected, a missing report or no test
// at all are status error or no_tests, never a failed test; a test module
// that does not import because of a file the change touches is the change's
// failure (blame.go, Options.Changed). deps.go makes
// the user's installed dependencies and caches visible read-only and keeps
// warm build caches per repository and toolchain.
//
// The suites run through package sandbox: under bubblewrap unless
// Options.Sandbox is "none" (an explicit opt-out, noted in RunInfo), with
// an environment filtered by sandbox.FilterEnv, held until their limits
// are in place, and stopped with every process they started. Its doc
// comment says what the sandbox guarantees and what it cannot.
package testrun
