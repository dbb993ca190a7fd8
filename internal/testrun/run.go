package testrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/orchdev/orch/internal/artifact"
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
// an invalid suite, sandbox "bwrap" without a working bwrap, an unwritable
// log folder) or when ctx was cancelled; the report then has Status "error"
// and Error set too, and holds whatever suites finished.
func Run(ctx context.Context, suites []Suite, opt Options) (report artifact.TestReport, info RunInfo, err error) {
	report = artifact.TestReport{Status: artifact.TestRunning, Suites: []artifact.Suite{}}
	info = RunInfo{Sandbox: SandboxNone}
	fail := func(err error) (artifact.TestReport, RunInfo, error) {
		report.Status = artifact.TestError
		report.OverallPass = false
		report.Error = err.Error()
		return report, info, err
	}
	if len(suites) == 0 {
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
	dir     string
	logDir  string
	env     []string
	stream  io.Writer
	maxLog  int64
	grace   time.Duration // between SIGTERM and SIGKILL
	sandbox *sandboxSpec
	// tempDirs are removed when the run ends.
	tempDirs []string
}

// close removes the run's temporary directories.
func (r *runner) close() error {
	var errs []error
	for _, d := range r.tempDirs {
		if err := os.RemoveAll(d); err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %w", d, err))
		}
	}
	return errors.Join(errs...)
}

// newRunner checks the options and prepares directories and environment.
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
	if err := os.MkdirAll(opt.LogDir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("create log directory: %w", err)
	}
	maxLog := opt.MaxLogBytes
	if maxLog == 0 {
		maxLog = DefaultMaxLogBytes
	}
	if maxLog < 0 {
		return nil, nil, fmt.Errorf("%w: negative MaxLogBytes %d", ErrInvalidOptions, maxLog)
	}
	base := opt.Env
	if base == nil {
		base = os.Environ()
	}
	r := &runner{
		dir:    dir,
		logDir: opt.LogDir,
		env:    SanitizeEnv(base, opt.AllowEnv),
		stream: opt.Stream,
		maxLog: maxLog,
		grace:  KillGrace,
	}

	mode := opt.Sandbox
	if mode == "" {
		mode = SandboxAuto
	}
	switch mode {
	case SandboxNone:
		notes = append(notes, "sandbox disabled (sandbox \"none\"): suites run with the user's full access")
	case SandboxAuto, SandboxBwrap:
		if _, err := SandboxAvailable(); err != nil {
			if mode == SandboxBwrap {
				return nil, notes, err
			}
			notes = append(notes, fmt.Sprintf("no sandbox: %v; suites run with the user's full access", err))
			break
		}
		bwrap, err := exec.LookPath("bwrap")
		if err != nil {
			return nil, notes, fmt.Errorf("%w: %v", ErrNoSandbox, err)
		}
		spec := &sandboxSpec{bwrap: bwrap, dir: dir}
		var cache string
		if opt.GoCacheDir != "" {
			gc, err := filepath.Abs(opt.GoCacheDir)
			if err == nil {
				err = os.MkdirAll(gc, 0o755)
			}
			if err != nil {
				return nil, notes, fmt.Errorf("go cache directory %s: %w", opt.GoCacheDir, err)
			}
			spec.goCacheDir = gc
			cache = "GOCACHE " + gc + " (kept between runs)"
		} else {
			gc, err := os.MkdirTemp("", "orch-gocache-")
			if err != nil {
				return nil, notes, fmt.Errorf("create a go build cache for the sandbox: %w", err)
			}
			spec.goCacheDir = gc
			r.tempDirs = append(r.tempDirs, gc)
			cache = "a fresh GOCACHE for this run, removed afterwards"
		}
		r.sandbox = spec
		notes = append(notes, "bwrap sandbox: read-only root, writable "+dir+" and private /tmp, /run hidden, no network, own pid namespace; "+cache+"; GOPROXY=off")
	default:
		return nil, nil, fmt.Errorf("%w: sandbox %q is not auto, bwrap or none", ErrInvalidOptions, opt.Sandbox)
	}
	return r, notes, nil
}

// logPath returns the log file of a suite.
func (r *runner) logPath(name string) string {
	return filepath.Join(r.logDir, name+".log")
}

// exitCode turns a process state into a shell-style exit code: the exit
// status, or 128+signal for a process killed by a signal.
func exitCode(st *os.ProcessState) int {
	if st == nil {
		return -1
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return st.ExitCode()
}
