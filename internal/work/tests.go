package work

import (
	"context"
	"io"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/gitx"
)

// TestRunner runs the project's test suites the way `orch test` does (a
// worktree of its own, the sandbox, the configured or detected suites)
// for a worker whose work needs a test run besides the test phase's own:
// codegen's run_tests tool and accept's regression check after HEAD
// moved. The registry (internal/worker) injects the test phase's runner
// (testphase.Runner); a worker never calls the test phase itself, and a
// test can hand it another runner (docs/workers.md).
type TestRunner interface {
	// Ready refuses, before anything changes, when the suites could not
	// be run as configured (the sandbox is not available).
	Ready() error
	// Run runs the suites on the commit r.Base with r.Patch applied. A
	// failure to prepare is a report with status error, as in `orch test`;
	// err is a failure of orch itself.
	Run(ctx context.Context, r TestRun) (TestReport, error)
}

// TestRun is one request to a TestRunner.
type TestRun struct {
	// Repo is the repository, Task the task the run is for.
	Repo *gitx.Repo
	Task string
	// Base is the commit the suites run on; Patch is applied to it first
	// (nil: the commit as it is).
	Base  string
	Patch []byte
	// LogDir receives the suites' logs.
	LogDir string
}

// TestOptions are a test run's settings besides the configuration.
type TestOptions struct {
	// Keep leaves the worktree in place and reports its path.
	Keep bool
	// Sandbox overrides the configuration ("auto", "bwrap", "none"). Only
	// "none" runs without bubblewrap; otherwise a missing bwrap is a
	// refusal (status error), never a silent fallback.
	Sandbox string
	// Stream receives the suites' live output; may be nil.
	Stream io.Writer
	// Env is the base environment for suites (sanitized); nil means the
	// process's.
	Env []string
	// TempDir is where a fresh worktree's folder is made (codegen's
	// run_tests: the build cache's run_tests/); empty means the system's
	// temporary folder.
	TempDir string
}

// TestReport is test/report.json (and accept's regression report): the
// artifact's fields plus how the run was made.
type TestReport struct {
	artifact.TestReport
	Base     string   `json:"base"`
	Sandbox  string   `json:"sandbox"`
	Notes    []string `json:"notes,omitempty"`
	Worktree string   `json:"worktree,omitempty"`
	// RepoFingerprint is the repository's hooks, config and refs as they
	// were before the suites ran; RepoChanged what differed after them.
	// orch accept refuses when either shows a change.
	RepoFingerprint *gitx.Fingerprint `json:"repo_fingerprint,omitempty"`
	RepoChanged     []string          `json:"repo_changed,omitempty"`
}
