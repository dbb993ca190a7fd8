package codegen

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/agent/tools"
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/gitx"
	"github.com/orchdev/orch/internal/work"
)

// RunTestsDir is the folder, below the repository's build cache folder
// (testphase.BuildCacheDir), of run_tests' own worktrees: the registry
// gives codegen a runner that makes them there.
const RunTestsDir = "run_tests"

// testRunner returns codegen's run_tests: the suites run by runner (the
// test phase's, injected by the registry: exactly as `orch test` runs
// them, on base with the edits' patch applied), logs under dir. nil when
// there is no runner or [tools] max_test_runs is 0.
func testRunner(rt *agent.Runtime, runner work.TestRunner, repo *gitx.Repo, taskID, base, dir string) tools.TestRunner {
	if runner == nil || rt.Config.Tools.MaxTestRuns <= 0 {
		return nil
	}
	var n atomic.Int32
	return func(ctx context.Context, patch []byte) (string, error) {
		folder := filepath.Join(dir, fmt.Sprintf("run-%d", n.Add(1)))
		rep, err := runner.Run(ctx, work.TestRun{Repo: repo, Task: taskID, Base: base, Patch: patch, LogDir: filepath.Join(folder, "test", "logs")})
		if err != nil {
			return "", err
		}
		return renderTestRun(rep.TestReport, rep.Notes, folder), nil
	}
}

// renderTestRun is what run_tests answers: the summary, then each failing
// suite with its failing cases' output and the end of its log.
func renderTestRun(r artifact.TestReport, notes []string, folder string) string {
	var b strings.Builder
	if r.Status != artifact.TestCompleted {
		fmt.Fprintf(&b, "The tests could not be run: %s\n", strings.TrimSpace(r.Error))
		return b.String()
	}
	s := r.Summary
	verdict := "PASS"
	if !r.OverallPass {
		verdict = "FAIL"
	}
	fmt.Fprintf(&b, "%s: %d passed, %d failed, %d skipped, %d errors in %d suite(s)\n", verdict, s.Passed, s.Failed, s.Skipped, s.Error, len(r.Suites))
	if r.OverallPass {
		return b.String()
	}
	var f agent.Failures
	agent.ReadTestFailures(&f, folder, r)
	for _, s := range f.Suites {
		agent.WriteFailingSuite(&b, s)
	}
	return b.String()
}
