// Package testrun runs a task's test and lint suites for orch's test phase
// and turns their results into the test/report.json artifact
// (artifact.TestReport).
//
// The caller hands over a prepared directory (a worktree with the patch
// applied); this package knows nothing about git. Detect guesses the suites
// of a project from its build files, Run executes them one after another,
// each in its own process group (and, when bubblewrap works here, inside a
// bwrap sandbox with no network and a read-only view of the machine), and
// the parsers turn `go test -json` streams and JUnit XML reports into cases.
//
// Guarantees of Run:
//   - output of a suite goes live to Options.Stream and to
//     LogDir/<suite>.log, capped at Options.MaxLogBytes; the rest is dropped
//     with a marker and a count, never buffered in memory;
//   - at a timeout or a cancelled context the whole process group gets
//     SIGTERM, then SIGKILL after a grace period, and Run returns only when
//     no process of the group is left;
//   - the environment is sanitized (SanitizeEnv) before any suite sees it.
//
// Limits: the sandbox keeps the whole filesystem readable (a suite can read
// files in $HOME and print them into its log); under bwrap SIGTERM ends the
// sandbox at once, because bwrap does not forward it, so the grace period
// only matters without a sandbox; without a sandbox a process that leaves
// the process group (setsid) escapes the kill, and orch only stops reading
// its output.
package testrun
