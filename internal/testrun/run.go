package testrun

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/sandbox"
)

// Run executes the suites one after another in opt.Dir and returns the
// test report.
//
// Status is "completed" when every suite ran (passed or failed); OverallPass
// is true only when every suite passed and at least one ran. No suites gives
// Status "completed", OverallPass false and Error "no tests configured". A
// suite whose program does not exist makes Status "error": the runner
// failed, not the tests.
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
		report.Status = artifact.TestCompleted
		report.Error = "no tests configured"
		return report, info, nil
	}
	if err := validateSuites(suites); err != nil {
		return fail(fmt.Errorf("run tests: %w", err))
	}
	r, notes, err := newRunner(opt)
	info.Notes = append(info.Notes, notes...)
	if err != nil {
		return fail(fmt.Errorf("run tests: %w", err))
	}
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
	for _, s := range suites {
		if ctx.Err() != nil {
			break
		}
		res := r.runSuite(ctx, s)
		report.Suites = append(report.Suites, res.suite)
		report.Summary = addSummary(report.Summary, res.suite.Summary)
		for _, n := range res.notes {
			info.Notes = append(info.Notes, fmt.Sprintf("suite %s: %s", s.Name, n))
		}
		if res.problem != "" {
			problems = append(problems, fmt.Sprintf("suite %s: %s", s.Name, res.problem))
		}
	}
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
	for _, s := range report.Suites {
		report.OverallPass = report.OverallPass && s.OverallPass
	}
	return report, info, nil
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
func newRunner(opt Options) (*runner, []string, error) {
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
	r := &runner{
		dir:      dir,
		logDir:   opt.LogDir,
		env:      sandbox.SanitizeEnv(base, opt.AllowEnv),
		stream:   opt.Stream,
		maxLog:   maxLog,
		grace:    KillGrace,
		maxProcs: maxProcs,
		maxMem:   maxMem,
	}
	if !opt.noCgroups {
		r.cgroups = sandbox.ReadCgroups()
	}
	if mode == SandboxNone {
		notes = append(notes, "sandbox disabled (sandbox \"none\", an explicit opt-out): suites run with the user's full access to files, network and credentials on disk")
		return r, notes, nil
	}
	sb, sbNotes, err := sandbox.New(sandbox.Config{
		Dir: dir, Env: r.env, GoCacheDir: opt.GoCacheDir, MaxMemory: maxMem,
		ReadOnly: opt.readOnly,
	})
	if err != nil {
		return nil, notes, err
	}
	r.sandbox = sb
	return r, append(notes, sbNotes...), nil
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
