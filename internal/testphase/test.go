package testphase

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/evidence"
	"github.com/orchdev/orch/internal/gitx"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/patch"
	"github.com/orchdev/orch/internal/sandbox"
	"github.com/orchdev/orch/internal/testrun"
	"github.com/orchdev/orch/internal/work"
)

// Options are a test run's settings besides the configuration
// (work.TestOptions).
type Options = work.TestOptions

// Report is test/report.json: the contract's fields plus how the run was
// made (work.TestReport).
type Report = work.TestReport

// Result is what `orch test` reports.
type Result struct {
	Report   Report
	Worktree string // set when kept
}

// Worker is the test phase's worker: a detached worktree of the base
// commit, code/diff.patch applied there, the configured (or detected)
// suites run in it, test/report.json written. The user's working tree is
// never touched.
type Worker struct {
	Config  config.Config
	Options Options
}

// Phase returns lifecycle.Test.
func (Worker) Phase() lifecycle.Phase { return lifecycle.Test }

// Check refuses nothing: a test run that cannot start is reported as a
// report with status error.
func (Worker) Check(ctx context.Context, in work.Input) error { return nil }

// Work runs the suites.
func (w Worker) Work(ctx context.Context, in work.Input) (work.Result[Result], error) {
	var res work.Result[Result]
	rep, wt, err := runTests(ctx, w.Config, in, w.Options)
	res.Value.Report, res.Value.Worktree = rep, wt
	if err != nil {
		return res, err
	}
	if err := in.Out.WriteJSON(artifact.TestReportFile, rep); err != nil {
		return res, err
	}
	status := lifecycle.Status(rep.Status)
	if rep.Status == artifact.TestCompleted {
		status = lifecycle.TestFailed
		if rep.OverallPass {
			status = lifecycle.TestPassed
		}
	}
	res.Output = work.Output{Status: status, Summary: &event.PhaseSummary{
		Status: string(rep.Status), OverallPass: event.Ref(rep.OverallPass), Tests: event.Ref(rep.Summary), Sandbox: rep.Sandbox, Base: rep.Base,
	}}
	return res, nil
}

// runTests prepares the worktree and runs the suites. A failure to prepare
// (no base, the patch does not apply) is reported as a report with status
// error, never as a test failure.
func runTests(ctx context.Context, cfg config.Config, run work.Input, opt Options) (Report, string, error) {
	rep := Report{TestReport: artifact.TestReport{Status: artifact.TestError, Suites: []artifact.Suite{}}}
	fail := func(format string, args ...any) (Report, string, error) {
		rep.Error = fmt.Sprintf(format, args...)
		return rep, "", nil
	}
	repo, err := gitx.Open(ctx, run.Root)
	if err != nil {
		return rep, "", err
	}
	base := ""
	if cg := artifact.LoadCodegen(run.Dir); cg.OK() {
		base = cg.Value.Base
	} else if cg.Err != nil {
		return fail("cannot read the base commit: %v", cg.Err)
	}
	if base == "" {
		if base, err = repo.Head(ctx); err != nil {
			return fail("no base commit: %s has none and HEAD cannot be read: %v", artifact.CodegenFile, err)
		}
		rep.Notes = append(rep.Notes, "code/codegen.json has no base commit: tested against HEAD")
	}
	if base, err = repo.ResolveCommit(ctx, base); err != nil {
		return fail("base commit %s: %v", base, err)
	}
	rep.Base = base
	patch, err := artifact.ReadPatch(run.Dir)
	if err != nil {
		return fail("%v", err)
	}
	if len(patch) > 0 {
		// The report says which patch the suites ran on (contract
		// section 6): these very bytes are what git applies below.
		rep.DiffSHA256 = evidence.SHA256Hex(patch)
	}

	logDir, err := run.Out.Path(artifact.TestLogsDir + "/.keep")
	if err != nil {
		return rep, "", err
	}
	logDir = filepath.Dir(logDir)
	_ = os.Remove(filepath.Join(logDir, ".keep"))
	return testCommit(ctx, repo, cfg, run.Task, rep, patch, logDir, opt)
}

// changedPaths are the repository paths patch touches (both paths of a
// rename); nil when it does not parse (it applied, so that is unexpected,
// and then no test module's import error is laid at the change's door).
func changedPaths(p []byte) []string {
	d, err := patch.Parse(bytes.NewReader(p))
	if err != nil {
		return nil
	}
	var paths []string
	for _, f := range d.Files {
		for _, q := range []string{f.OldPath, f.NewPath} {
			if q != "" {
				paths = append(paths, q)
			}
		}
	}
	return paths
}

// testCommit runs the suites in a detached worktree of rep.Base with patch
// applied (none when empty), writing logs to logDir: the repository's warm
// test worktree, reset to exactly rep.Base, or a fresh one (testWorktree).
func testCommit(ctx context.Context, repo *gitx.Repo, cfg config.Config, id string, rep Report, patch []byte, logDir string, opt Options) (Report, string, error) {
	fail := func(format string, args ...any) (Report, string, error) {
		rep.Status = artifact.TestError
		rep.Error = fmt.Sprintf(format, args...)
		return rep, "", nil
	}
	// The sandbox fails closed: refuse before preparing anything when it
	// is needed and unavailable (the error says how to install bubblewrap
	// or opt out).
	mode := sandboxMode(cfg, opt)
	if err := sandbox.Check(mode); err != nil {
		return fail("refusing to run the suites without a sandbox: %v", err)
	}
	// A suite that a killed orch left running (one without the sandbox
	// runs on) writes into the worktree this run is about to reset: stop
	// it first, not only when the next suite starts (the kill test of
	// orch test found its marker file in the reset worktree).
	rep.Notes = append(rep.Notes, sandbox.ReapStale(sandbox.ReadCgroups())...)
	cacheRoot := ""
	if dir, err := BuildCacheDir(repo.Dir); err == nil && cfg.Test.BuildCache {
		cacheRoot = dir
	}
	wt, wtDir, release, wtNotes, err := testWorktree(ctx, repo, id, rep.Base, cacheRoot, opt.TempDir, opt.Keep)
	if err != nil {
		return fail("create a worktree of %s: %v", rep.Base, err)
	}
	defer release()
	rep.Notes = append(rep.Notes, wtNotes...)
	kept := ""
	if opt.Keep {
		kept = wtDir
		rep.Worktree = wtDir
	}
	if len(patch) > 0 {
		if err := wt.Apply(ctx, patch, gitx.ApplyOptions{}); err != nil {
			return fail("code/diff.patch does not apply to %.12s: %v", rep.Base, err)
		}
	}

	suites, notes, err := suitesFor(cfg, wtDir, repo.Dir)
	if err != nil {
		return fail("%v", err)
	}
	rep.Notes = append(rep.Notes, notes...)
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return rep, kept, fmt.Errorf("create %s: %w", logDir, err)
	}
	env := opt.Env
	if env == nil {
		env = os.Environ()
	}
	cache, buildCache := "", ""
	if dir, err := os.UserCacheDir(); err == nil && cfg.Test.BuildCache {
		cache = filepath.Join(dir, "orch", "sandbox-gocache")
		_ = os.MkdirAll(cache, 0o755)
		buildCache = cacheRoot
	}
	runOpt := testrun.Options{
		Dir: wtDir, LogDir: logDir, Sandbox: mode, Stream: opt.Stream, Env: env,
		AllowEnv: cfg.Test.EnvAllow, MaxLogBytes: cfg.Test.MaxLogBytes, GoCacheDir: cache,
		MaxProcesses: cfg.Test.MaxProcesses, MaxMemory: int64(cfg.Test.MaxMemory),
		MaxWrite: int64(cfg.Test.MaxWrite), Hide: []string{repo.Dir},
		Deps: repo.Dir, BuildCache: buildCache, Changed: changedPaths(patch),
	}
	for _, c := range cfg.Test.Setup {
		runOpt.Setup = append(runOpt.Setup, testrun.Suite{Command: c, Timeout: cfg.Test.Timeout.Std()})
	}
	home, _ := os.UserHomeDir()
	for _, p := range cfg.Test.ReadOnlyPaths {
		switch {
		case strings.HasPrefix(p, "~/") && home != "":
			runOpt.ReadOnly = append(runOpt.ReadOnly, filepath.Join(home, p[2:]))
		case filepath.IsAbs(p):
			runOpt.ReadOnly = append(runOpt.ReadOnly, p)
		default:
			runOpt.ReadOnlyInDir = append(runOpt.ReadOnlyInDir, p)
		}
	}
	// The suites must not change the repository's hooks, config, links or
	// refs (a planted hook would run outside the sandbox): testrun
	// fingerprints the worktree's repository before the suites and checks
	// it after each one and after the run (gitx.Fingerprint).
	tr, info, err := testrun.Run(ctx, suites, runOpt)
	diffSHA := rep.DiffSHA256
	rep.TestReport = tr
	rep.DiffSHA256 = diffSHA
	rep.RepoFingerprint = info.Git
	rep.RepoChanged = info.GitChanged
	if len(rep.RepoChanged) > 0 {
		rep.Notes = append(rep.Notes, "the repository changed while the suites ran ("+strings.Join(rep.RepoChanged, ", ")+"): orch accept refuses this run")
	}
	if rep.Suites == nil {
		rep.Suites = []artifact.Suite{}
	}
	rep.Sandbox = info.Sandbox
	rep.Notes = append(rep.Notes, info.Notes...)
	if err != nil && errors.Is(err, context.Canceled) {
		return rep, kept, err
	}
	if err != nil && rep.Status != artifact.TestError {
		rep.Status = artifact.TestError
		rep.Error = err.Error()
	}
	return rep, kept, nil
}

// sandboxMode is the sandbox a run uses: the option, else the
// configuration's (whose default "auto" means bwrap or refuse).
func sandboxMode(cfg config.Config, opt Options) string {
	if opt.Sandbox != "" {
		return opt.Sandbox
	}
	return cfg.Test.Sandbox
}

// SandboxReady reports whether the tests of a run with these options
// could be sandboxed as configured: nil, or the refusal (with how to
// install bubblewrap or opt out).
func SandboxReady(cfg config.Config, opt Options) error {
	return sandbox.Check(sandboxMode(cfg, opt))
}

// suitesFor returns the configured suites, or detected ones with notes.
// deps is the user's working tree (its virtualenv and node_modules).
func suitesFor(cfg config.Config, dir, deps string) ([]testrun.Suite, []string, error) {
	if len(cfg.Test.Suites) == 0 {
		suites, notes, err := testrun.Detect(dir, testrun.DetectOptions{Deps: deps})
		if err != nil {
			return nil, nil, fmt.Errorf("detect test suites: %w", err)
		}
		for i := range suites {
			if suites[i].Timeout == 0 {
				suites[i].Timeout = cfg.Test.Timeout.Std()
			}
		}
		return suites, append([]string{"no suites in .orch/config.toml: detected from the repository"}, notes...), nil
	}
	var out []testrun.Suite
	for _, s := range cfg.Test.Suites {
		timeout := s.Timeout.Std()
		if timeout == 0 {
			timeout = cfg.Test.Timeout.Std()
		}
		format := s.Format
		if format == "" {
			format = testrun.FormatExitCode
		}
		out = append(out, testrun.Suite{Name: s.Name, Kind: s.Kind, Command: s.Command, Timeout: timeout, Env: s.Env, Report: s.Report, Format: format})
	}
	return out, nil, nil
}

// BuildCacheDir is the folder of the repository at repoDir in the user's
// cache (~/.cache/orch/build/<repository key>/): the warm test worktree
// and codegen's run_tests worktrees live below it.
func BuildCacheDir(repoDir string) (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "orch", "build", testrun.RepoKey(repoDir)), nil
}

// Runner is the test phase's work.TestRunner: RunPatch with the
// configuration and options it holds. The registry gives it to codegen
// (run_tests, with OwnWorktrees) and to accept (the regression check).
type Runner struct {
	Config  config.Config
	Options Options
	// OwnWorktrees, when set, puts a worktree of the run's own (the warm
	// one being busy or off) in this folder below the repository's build
	// cache folder (BuildCacheDir), not in the system's temporary folder.
	OwnWorktrees string
}

// Ready refuses when the suites could not be sandboxed as configured.
func (r Runner) Ready() error { return SandboxReady(r.Config, r.Options) }

// Run runs the suites on req.Base with req.Patch applied (RunPatch).
func (r Runner) Run(ctx context.Context, req work.TestRun) (Report, error) {
	opt := r.Options
	if r.OwnWorktrees != "" {
		if cache, err := BuildCacheDir(req.Repo.Dir); err == nil {
			opt.TempDir = filepath.Join(cache, r.OwnWorktrees)
		}
	}
	return RunPatch(ctx, req.Repo, r.Config, req.Task, req.Base, req.Patch, req.LogDir, opt)
}

// RunPatch runs the suites exactly as `orch test` does — a detached
// worktree of base, patch applied (none when empty), the configured or
// detected suites in the sandbox — without a phase run: codegen's run_tests
// uses it on its edits so far, accept on the commit it made when HEAD had
// moved since the base. Logs go to logDir. A failure to prepare is a report with status
// error, as in Test.
func RunPatch(ctx context.Context, repo *gitx.Repo, cfg config.Config, id, base string, patch []byte, logDir string, opt Options) (Report, error) {
	rep := Report{TestReport: artifact.TestReport{Status: artifact.TestError, Suites: []artifact.Suite{}}, Base: base}
	opt.Keep = false
	rep, _, err := testCommit(ctx, repo, cfg, id, rep, patch, logDir, opt)
	return rep, err
}
