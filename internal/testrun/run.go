package testrun

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/clip"
	"github.com/orchdev/orch/internal/gitx"
	"github.com/orchdev/orch/internal/sandbox"
	"github.com/orchdev/orch/internal/testreport"
)

// Run executes the setup commands (Options.Setup) and then the suites one
// after another in opt.Dir and returns the test report.
//
// Status is "completed" when every suite ran (passed or failed);
// OverallPass is true only when every suite passed and a test ran. The
// summary counts the test suites' cases (a lint suite's are in its own
// summary). Runner failures are never test failures:
//   - "no_tests" when there is no suite (Error NoTestsMessage), or when no
//     test suite ran a test and nothing failed;
//   - "error" when a setup command failed, or a suite could not run: its
//     program does not exist (also exit 127 from a shell or script), its
//     tests could not be collected, it wrote no report, its tool stopped
//     before building or running anything, or the sandbox did not start.
//     Error says which suite and what to configure.
//
// The error is non-nil only when nothing useful could be run (bad options,
// an invalid suite, no working bwrap while the sandbox is not "none", an
// unwritable log folder) or when ctx was cancelled; the report then has
// Status "error" and Error set too, and holds whatever suites finished.
func Run(ctx context.Context, suites []Suite, opt Options) (report artifact.TestReport, info RunInfo, err error) {
	report = artifact.TestReport{Status: artifact.TestRunning, Suites: []artifact.Suite{}}
	fail := func(err error) (artifact.TestReport, RunInfo, error) {
		report.Status = artifact.TestError
		report.OverallPass = false
		report.Error = err.Error()
		return report, info, err
	}
	if len(suites) == 0 {
		if opt.Sandbox == SandboxNone {
			info.Sandbox = SandboxNone // nothing ran, but the opt-out stands
		}
		report.Status = artifact.TestNoTests
		report.Error = NoTestsMessage
		return report, info, nil
	}
	if err := validateSuites(suites); err != nil {
		return fail(fmt.Errorf("run tests: %w", err))
	}
	setup, err := setupSuites(opt.Setup, suites)
	if err != nil {
		return fail(fmt.Errorf("run tests: %w", err))
	}
	for _, s := range suites {
		if w := sandbox.GoWarmup(s.Command); w != nil {
			opt.goWarm = append(opt.goWarm, sandbox.Warmup{Dir: s.Dir, Argv: w})
		}
	}
	r, notes, err := newRunner(ctx, opt)
	info.Notes = append(info.Notes, notes...)
	if err != nil {
		return fail(fmt.Errorf("run tests: %w", err))
	}
	info.Env = sandbox.EnvNames(r.env)
	info.Notes = append(info.Notes, "environment passed to the suites (names only; the allow-list plus env_allow): "+strings.Join(info.Env, " "))
	defer func() {
		if err := r.close(); err != nil {
			info.Notes = append(info.Notes, "cleanup: "+err.Error())
		}
	}()
	info.Sandbox = SandboxNone
	if r.sandbox != nil {
		info.Sandbox = SandboxBwrap
	}

	var problems []string
	for _, s := range setup {
		if ctx.Err() != nil {
			break
		}
		res := r.runSuite(ctx, s)
		for _, n := range res.notes {
			info.Notes = append(info.Notes, fmt.Sprintf("setup %s: %s", s.Name, n))
		}
		switch {
		case res.problem != "":
			problems = append(problems, fmt.Sprintf("setup command %s (%s) could not run: %s; see %s", s.Name, res.suite.Command, res.problem, res.suite.Log))
		case !res.suite.OverallPass:
			problems = append(problems, fmt.Sprintf("setup command %s (%s) failed with exit status %d: no suite was run; see %s and fix [test] setup in .orch/config.toml", s.Name, res.suite.Command, res.suite.ExitCode, res.suite.Log))
		default:
			info.Notes = append(info.Notes, fmt.Sprintf("setup %s (%s) done; its log is %s", s.Name, res.suite.Command, res.suite.Log))
		}
		if len(problems) > 0 {
			break
		}
	}
	setupFailed := len(problems) > 0
	for _, s := range suites {
		if ctx.Err() != nil || setupFailed {
			break
		}
		res := r.runSuite(ctx, s)
		r.checkGit(ctx, &res)
		report.Suites = append(report.Suites, res.suite)
		if s.Kind == KindTest {
			report.Summary = testreport.Add(report.Summary, res.suite.Summary)
		}
		for _, n := range res.notes {
			info.Notes = append(info.Notes, fmt.Sprintf("suite %s: %s", s.Name, n))
		}
		if res.problem != "" {
			problems = append(problems, fmt.Sprintf("suite %s: %s (the runner's output is in %s; to reproduce, run %s at the top of the checkout)", s.Name, res.problem, res.suite.Log, res.suite.Command))
		}
	}
	r.finishGit(&info)
	info.Limits = r.limitsInfo()
	if r.limitsSeen {
		info.Notes = append(info.Notes, info.Limits.Describe())
	}

	if err := ctx.Err(); err != nil {
		return fail(fmt.Errorf("run tests: cancelled after %d of %d suites: %w", len(report.Suites), len(suites), err))
	}
	if len(problems) > 0 {
		report.Status = artifact.TestError
		report.Error = strings.Join(problems, "; ")
		return report, info, nil
	}
	report.Status = artifact.TestCompleted
	report.OverallPass = len(report.Suites) > 0
	failed, tests, ran := false, 0, 0
	for _, s := range report.Suites {
		report.OverallPass = report.OverallPass && s.OverallPass
		failed = failed || !s.OverallPass
		if s.Kind == KindTest {
			tests++
			if n := s.Summary.Passed + s.Summary.Failed + s.Summary.Skipped + s.Summary.Error; n > 0 {
				ran++
			}
		}
	}
	if tests > 0 && ran == 0 && !failed {
		report.Status = artifact.TestNoTests
		report.OverallPass = false
		report.Error = fmt.Sprintf("the test suites ran no test (%d suite(s), 0 tests): nothing was tested. Check the suites' commands and test paths under [[test.suites]] in .orch/config.toml", tests)
	}
	return report, info, nil
}

// NoTestsMessage is the report's Error when there is no suite.
const NoTestsMessage = "no tests configured: no test suite was found or configured, so nothing was tested. Add [[test.suites]] to .orch/config.toml (see the README's test phase section), then run orch test again"

// setupSuites checks the setup commands and names them setup-1, setup-2...
// (names no suite may take).
func setupSuites(setup []Suite, suites []Suite) ([]Suite, error) {
	out := make([]Suite, len(setup))
	for i, s := range setup {
		s.Name = fmt.Sprintf("setup-%d", i+1)
		s.Kind = KindTest
		s.Format, s.Report = FormatExitCode, ""
		if err := validateSuite(s); err != nil {
			return nil, fmt.Errorf("setup command %d: %w", i+1, err)
		}
		if slices.ContainsFunc(suites, func(x Suite) bool { return x.Name == s.Name }) {
			return nil, fmt.Errorf("%w: suite name %q is taken by the setup commands", ErrInvalidSuite, s.Name)
		}
		out[i] = s
	}
	return out, nil
}

// runner holds what every suite of one Run shares.
type runner struct {
	dir      string
	logDir   string
	env      []string
	stream   io.Writer
	maxLog   int64
	grace    time.Duration    // between SIGTERM and SIGKILL
	sandbox  *sandbox.Sandbox // nil: no sandbox
	maxProcs int
	maxMem   int64
	cgroups  sandbox.Cgroups
	// git is the directory's repository and gitBefore its fingerprint
	// before the first suite (git nil: not a git checkout). A suite after
	// which the hooks, config or links changed got out of its sandbox.
	git       *gitx.Repo
	gitBefore gitx.Fingerprint
	// gitChanged is what changed, once seen (reported once).
	gitChanged []string
	// changed are Options.Changed as a set.
	changed map[string]bool
	// limits are the mechanisms of the first suite that started.
	limits     Limits
	limitsSeen bool
}

// close removes what the sandbox made for the run.
func (r *runner) close() error {
	if r.sandbox == nil {
		return nil
	}
	return r.sandbox.Close()
}

// newRunner checks the options and prepares directories, environment,
// limits and the sandbox.
func newRunner(ctx context.Context, opt Options) (*runner, []string, error) {
	var notes []string
	if opt.Dir == "" {
		return nil, nil, fmt.Errorf("%w: no directory", ErrInvalidOptions)
	}
	dir, err := filepath.Abs(opt.Dir)
	if err == nil {
		dir, err = filepath.EvalSymlinks(dir)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%w: directory %s: %v", ErrInvalidOptions, opt.Dir, err)
	}
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return nil, nil, fmt.Errorf("%w: %s is not a directory", ErrInvalidOptions, dir)
	}
	if opt.LogDir == "" {
		return nil, nil, fmt.Errorf("%w: no log directory", ErrInvalidOptions)
	}
	maxLog := cmp.Or(opt.MaxLogBytes, DefaultMaxLogBytes)
	maxProcs := cmp.Or(opt.MaxProcesses, DefaultMaxProcesses)
	maxMem := cmp.Or(opt.MaxMemory, DefaultMaxMemory)
	switch {
	case maxLog < 0:
		return nil, nil, fmt.Errorf("%w: negative MaxLogBytes %d", ErrInvalidOptions, maxLog)
	case maxProcs < 0:
		return nil, nil, fmt.Errorf("%w: negative MaxProcesses %d", ErrInvalidOptions, maxProcs)
	case maxMem < 0:
		return nil, nil, fmt.Errorf("%w: negative MaxMemory %d", ErrInvalidOptions, maxMem)
	}
	mode := cmp.Or(opt.Sandbox, SandboxAuto)
	if mode != SandboxAuto && mode != SandboxBwrap && mode != SandboxNone {
		return nil, nil, fmt.Errorf("%w: sandbox %q is not auto, bwrap or none", ErrInvalidOptions, opt.Sandbox)
	}
	if err := os.MkdirAll(opt.LogDir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("create log directory: %w", err)
	}
	base := opt.Env
	if base == nil {
		base = os.Environ()
	}
	env, credentials := sandbox.FilterEnvNotes(base, opt.AllowEnv)
	if len(credentials) > 0 {
		notes = append(notes, "dropped from the suites' environment because the value holds a URL with credentials (user:password@): "+strings.Join(credentials, ", ")+"; name a variable in env_allow under [test] to pass it anyway")
	}
	r := &runner{
		dir:      dir,
		logDir:   opt.LogDir,
		env:      env,
		stream:   opt.Stream,
		maxLog:   maxLog,
		grace:    KillGrace,
		maxProcs: maxProcs,
		maxMem:   maxMem,
	}
	for _, p := range opt.Changed {
		if r.changed == nil {
			r.changed = map[string]bool{}
		}
		r.changed[p] = true
	}
	if !opt.noCgroups {
		r.cgroups = sandbox.ReadCgroups()
	}
	if _, err := os.Lstat(filepath.Join(dir, ".git")); err != nil {
		notes = append(notes, "not a git checkout: no git hooks, config or links to watch")
	} else if repo, err := gitx.Open(ctx, dir); err == nil {
		if r.gitBefore, err = repo.Fingerprint(ctx); err != nil {
			return nil, nil, fmt.Errorf("fingerprint the git hooks, config and refs of %s: %w", dir, err)
		}
		r.git = repo
	} else if !errors.Is(err, gitx.ErrNotRepo) {
		return nil, nil, fmt.Errorf("open the repository of %s: %w", dir, err)
	}
	d, err := prepareDeps(opt, dir, r.env)
	if err != nil {
		return nil, nil, err
	}
	notes = append(notes, d.notes...)
	if mode == SandboxNone {
		notes = append(notes, "sandbox disabled (sandbox \"none\", an explicit opt-out): suites run with the user's full access to files, network and credentials on disk")
		if err := d.link(); err != nil {
			return nil, notes, err
		}
		if len(d.links) > 0 {
			notes = append(notes, "without a sandbox the dependency folders are symlinked into the worktree, not read-only")
		}
		r.env = sandbox.MergeEnv(r.env, d.env)
		return r, notes, nil
	}
	sb, sbNotes, err := sandbox.New(sandbox.Config{
		Dir: dir, Env: r.env, GoCacheDir: opt.GoCacheDir, MaxMemory: maxMem, MaxWrite: opt.MaxWrite, Hide: opt.Hide, GoWarm: opt.goWarm,
		ReadOnly: d.readOnly, Mounts: d.mounts, Writable: d.writable, SetEnv: mergeMaps(offlineEnv, d.env),
	})
	if err != nil {
		return nil, notes, err
	}
	r.sandbox = sb
	return r, append(notes, sbNotes...), nil
}

// checkGit turns a suite after which the directory's git hooks, config or
// link changed into a runner failure: whatever it reported, it got out of
// its sandbox (or something else changed them meanwhile), and its pass is
// worth nothing. Only the first suite that changed them is blamed.
func (r *runner) checkGit(ctx context.Context, res *suiteResult) {
	if r.gitChanged != nil || r.git == nil {
		return
	}
	var changed []string
	if now, err := r.git.Recheck(context.WithoutCancel(ctx), r.gitBefore); err != nil {
		changed = []string{"the repository could not be read: " + err.Error()}
	} else {
		changed = r.gitBefore.Changes(now, gitx.ScopeLinks)
	}
	if len(changed) == 0 {
		return
	}
	r.gitChanged = changed
	msg := fmt.Sprintf("git hooks, config or links changed while the suite ran: %s (git folder %s); a suite changed what runs outside its sandbox (or something else did meanwhile): check them before you trust this repository, and run the tests again", strings.Join(changed, ", "), r.gitBefore.CommonDir())
	res.suite.Cases = append(res.suite.Cases, artifact.Case{Name: CaseGitChanged, Status: testreport.StatusError, Message: clip.Runes(msg, testreport.MaxMessage)})
	res.suite.Summary = testreport.Summarize(res.suite.Cases)
	res.suite.OverallPass = false
	res.problem = msg
}

// finishGit records the repository's fingerprint before the suites and
// what changed after them, refs included, in info.
func (r *runner) finishGit(info *RunInfo) {
	if r.git == nil {
		return
	}
	before := r.gitBefore
	info.Git = &before
	now, err := r.git.Recheck(context.Background(), before)
	if err != nil {
		info.GitChanged = []string{"the repository could not be read after the suites ran: " + err.Error()}
		return
	}
	info.GitChanged = before.Changes(now, gitx.ScopeLinks|gitx.ScopeRefs)
}

// limitsInfo is RunInfo.Limits.
func (r *runner) limitsInfo() Limits {
	l := r.limits
	l.MaxProcesses, l.MaxMemory = r.maxProcs, r.maxMem
	return l
}

// logPath returns the log file of a suite.
func (r *runner) logPath(name string) string {
	return filepath.Join(r.logDir, name+".log")
}

// mergeMaps returns a copy of a with b's entries set.
func mergeMaps(a, b map[string]string) map[string]string {
	out := maps.Clone(a)
	maps.Copy(out, b)
	return out
}
