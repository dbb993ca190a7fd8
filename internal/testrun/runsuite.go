package testrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/clip"
	"github.com/orchdev/orch/internal/lazyre"
	"github.com/orchdev/orch/internal/sandbox"
	"github.com/orchdev/orch/internal/testreport"
)

// Bounds of the end of a suite.
const (
	// maxReportBytes bounds a JUnit report read from disk.
	maxReportBytes = 64 << 20
	// drainLimit bounds the wait for output after the suite is gone (a
	// process orch could not find may still hold the pipe).
	drainLimit = 2 * time.Second
	// settleLimit is how long processes may take to end on their own
	// after the suite's command exited before orch stops them.
	settleLimit = time.Second
)

// Names of the cases Run adds itself.
const (
	caseTimeout   = "[timeout]"
	caseCancelled = "[cancelled]"
	caseExit      = "[exit status]"
	caseReport    = "[junit report]"
	caseCommand   = "[command]"
	caseResults   = "[results]"
)

// goNoPackages is what go test and go vet say in a module without
// packages (and exit 1).
var goNoPackages = lazyre.New(`(?m)matched no packages\s*$[\s\S]*^no packages to (?:test|vet)\s*$`)

// suiteResult is one suite's outcome plus what Run reports about it.
type suiteResult struct {
	suite   artifact.Suite
	problem string   // runner failure: makes the report's status "error"
	notes   []string // remarks for RunInfo
}

// runSuite runs one suite to its end and never returns before every
// process it started is gone.
func (r *runner) runSuite(ctx context.Context, s Suite) suiteResult {
	res := suiteResult{suite: artifact.Suite{
		ID:      s.Name,
		Kind:    s.Kind,
		Command: suiteCommand(s),
		Log:     LogPathPrefix + s.Name + ".log",
	}}
	timeout := s.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}

	logFile, err := os.Create(r.logPath(s.Name))
	if err != nil {
		return r.runnerFailure(res, nil, caseCommand, fmt.Sprintf("create log: %v", err))
	}
	defer logFile.Close()
	out := newCappedWriter(io.MultiWriter(logFile, &quietWriter{w: r.stream}), r.maxLog)
	out.note("=== orch: suite %s (%s): %s\n", s.Name, s.Kind, res.suite.Command)

	workDir, err := r.suiteDir(s)
	if err != nil {
		return r.runnerFailure(res, out, caseCommand, err.Error())
	}
	env := sandbox.MergeEnv(r.env, s.Env)
	if r.sandbox != nil {
		env = r.sandbox.Env(env, s.Env)
	}
	pathEnv, _ := sandbox.LookupEnv(env, "PATH")
	prog, err := sandbox.LookPath(s.Command[0], pathEnv, workDir)
	if err != nil {
		res.suite.ExitCode = 127
		return r.runnerFailure(res, out, caseCommand, err.Error())
	}
	if s.Report != "" && !reportIsSet(s.Report) {
		if err := clearReport(r.viewOf(workDir), s.Report); err != nil {
			return r.runnerFailure(res, out, caseReport, err.Error())
		}
	}

	startTime := time.Now()
	run, startNotes, err := r.start(s, workDir, prog, env, out)
	res.notes = append(res.notes, startNotes...)
	if err != nil {
		return r.runnerFailure(res, out, caseCommand, err.Error())
	}
	r.noteLimits(&res, run.g.Limits())

	suiteCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var endCase *artifact.Case
	select {
	case <-run.g.Exited():
	case <-suiteCtx.Done():
		if ctx.Err() != nil {
			endCase = &artifact.Case{Name: caseCancelled, Status: testreport.StatusError, Message: "cancelled: " + ctx.Err().Error()}
		} else {
			endCase = &artifact.Case{Name: caseTimeout, Status: testreport.StatusFail, Message: fmt.Sprintf("timed out after %s", timeout)}
		}
		out.note("\n[orch: %s; stopping every process of the suite]\n", endCase.Message)
		if n := run.g.Stop(r.grace); n != "" {
			res.notes = append(res.notes, n)
		}
	}
	if endCase == nil && !run.g.WaitGone(settleLimit, false) {
		// The leader exited but left processes behind (a daemon started by
		// a test): they do not outlive the suite. (bwrap's first process
		// reports the command's exit and is killed with the sandbox a
		// moment later: settleLimit covers that.)
		out.note("[orch: the suite left processes running; stopping them]\n")
		res.notes = append(res.notes, "left processes running after it exited; they were stopped")
		if n := run.g.Stop(r.grace); n != "" {
			res.notes = append(res.notes, n)
		}
	}
	if run.drain() {
		res.notes = append(res.notes, "a process outside the suite kept its output open; orch stopped reading")
	}

	outcome := run.g.Finish()
	res.notes = append(res.notes, outcome.Notes...)
	res.suite.ExitCode = outcome.ExitCode
	if outcome.NeverStarted && endCase == nil {
		// bwrap reports the sandbox before it builds it: a mount that
		// fails ends it before the command ever ran.
		msg := fmt.Sprintf("the command never started: its process ended (exit status %d) before orch released it", res.suite.ExitCode)
		if r.sandbox != nil {
			msg = fmt.Sprintf("%v: bwrap could not set up the sandbox (exit status %d); its message is in the log", ErrNoSandbox, res.suite.ExitCode)
		}
		return r.runnerFailure(res, out, caseCommand, msg)
	}
	cases, caseProblem := collect(s, r.viewOf(workDir), run, startTime)
	if caseProblem != "" {
		res.notes = append(res.notes, caseProblem)
	}
	if run.cachedNote != "" {
		res.notes = append(res.notes, run.cachedNote)
	}
	// A Go module without packages (only go.mod and assets, or files all
	// excluded by build constraints): go test and go vet exit 1 saying
	// so. The module has nothing to test; that is no failure.
	noPackages := endCase == nil && res.suite.ExitCode == 1 && len(cases) == 0 && goNoPackages.MatchString(run.tail.String())
	if noPackages {
		res.notes = append(res.notes, "go found no packages in this module (\"./...\" matched no packages: no .go files, or only files excluded by build constraints): nothing to test or vet")
	}
	if msg := r.writeLimitProblem(run.tail.String()); msg != "" {
		return r.runnerFailure(res, out, caseWriteLimit, msg)
	}
	cases = blameChange(cases, r.changed, r.dir, s.Dir)
	if endCase == nil && !noPackages {
		if msg := runnerProblem(s, res.suite.ExitCode, cases, run.tail.String(), run.totals != nil || run.recognised); msg != "" {
			return r.runnerFailure(res, out, caseCommand, msg)
		}
	}
	if endCase != nil {
		cases = append(cases, *endCase)
	} else if noPackages {
		// no cases: the suite ran no test
	} else if len(cases) == 0 && (s.Format == FormatExitCode || run.text != nil && !run.recognised) {
		// Nothing to count: the exit code decides, and the report says so.
		c := artifact.Case{Name: s.Name, Status: testreport.StatusPass, Message: "judged by its exit code"}
		if res.suite.ExitCode != 0 {
			c.Status, c.Message = testreport.StatusFail, fmt.Sprintf("exited with status %d (judged by its exit code)", res.suite.ExitCode)
		}
		cases = append(cases, c)
		res.suite.JudgedBy = artifact.JudgedByExitCode
		if s.Format != FormatExitCode {
			res.notes = append(res.notes, fmt.Sprintf("its output held no %s results, so its tests could not be counted: judged by its exit code", s.Format))
		}
	} else if res.suite.ExitCode != 0 && !hasFailure(cases) {
		cases = append(cases, artifact.Case{Name: caseExit, Status: testreport.StatusFail,
			Message: fmt.Sprintf("exited with status %d without a failing test case", res.suite.ExitCode)})
	} else if len(cases) == 0 && s.Kind == KindTest {
		res.notes = append(res.notes, "ran no tests")
	}
	res.suite.Cases = cases
	res.suite.Summary = testreport.Summarize(cases)
	if run.totals != nil && endCase == nil {
		// The totals count the runner's own errors (unittest's
		// "errors=362", each also a case); a case orch added beyond
		// them (a runner's error it read elsewhere) still counts.
		res.suite.Summary = *run.totals
		res.suite.Summary.Error = max(res.suite.Summary.Error, testreport.Summarize(cases).Error)
	}
	res.suite.OverallPass = endCase == nil && (res.suite.ExitCode == 0 || noPackages) && !hasFailure(cases) && (run.totals == nil || run.totals.Failed == 0)
	out.note("[orch: suite %s finished: exit status %d, %d passed, %d failed, %d skipped, %d errors]\n",
		s.Name, res.suite.ExitCode, res.suite.Summary.Passed, res.suite.Summary.Failed, res.suite.Summary.Skipped, res.suite.Summary.Error)
	if err := out.Close(); err != nil {
		res.notes = append(res.notes, fmt.Sprintf("writing the log failed: %v", err))
	}
	return res
}

// runnerFailure records a suite that could not run: one error case, and a
// problem that turns the report's status into "error".
func (r *runner) runnerFailure(res suiteResult, out *cappedWriter, name, msg string) suiteResult {
	c := artifact.Case{Name: name, Status: testreport.StatusError, Message: clip.Runes(msg, testreport.MaxMessage)}
	res.suite.Cases = []artifact.Case{c}
	res.suite.Summary = testreport.Summarize(res.suite.Cases)
	res.suite.OverallPass = false
	if res.suite.ExitCode == 0 {
		res.suite.ExitCode = -1
	}
	res.problem = msg
	if out != nil {
		out.note("[orch: %s]\n", msg)
		if err := out.Close(); err != nil {
			res.notes = append(res.notes, fmt.Sprintf("writing the log failed: %v", err))
		}
	}
	return res
}

func hasFailure(cases []artifact.Case) bool {
	for _, c := range cases {
		if c.Status == testreport.StatusFail || c.Status == testreport.StatusError {
			return true
		}
	}
	return false
}

// suiteDir returns the folder the suite runs in: the directory, or its
// Dir inside it. A Dir that is missing, no folder, or (through a symlink
// in the checkout) outside the directory is a runner error.
func (r *runner) suiteDir(s Suite) (string, error) {
	if s.Dir == "" || s.Dir == "." {
		return r.dir, nil
	}
	top, err := filepath.EvalSymlinks(r.dir)
	if err != nil {
		return "", fmt.Errorf("suite folder: %w", err)
	}
	dir, err := filepath.EvalSymlinks(filepath.Join(r.dir, s.Dir))
	if err != nil {
		return "", fmt.Errorf("suite folder %s: %w", s.Dir, err)
	}
	if rel, err := filepath.Rel(top, dir); err != nil || !filepath.IsLocal(rel) && rel != "." {
		return "", fmt.Errorf("suite folder %s leads outside the directory (to %s)", s.Dir, dir)
	}
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return "", fmt.Errorf("suite folder %s is not a folder", s.Dir)
	}
	// The sandbox shows the directory at its own path: run in the folder
	// under the path orch was given, not the resolved one.
	rel, _ := filepath.Rel(top, dir)
	return filepath.Join(r.dir, rel), nil
}

// clearReport removes a stale report and makes sure its folder exists.
// os.Root keeps both inside the suite's folder, symlinks included.
func clearReport(dir, report string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("open %s: %w", dir, err)
	}
	defer root.Close()
	if err := root.Remove(report); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove stale report %s: %w", report, err)
	}
	if parent := filepath.Dir(report); parent != "." {
		if err := root.MkdirAll(parent, 0o755); err != nil {
			return fmt.Errorf("create report folder %s: %w", parent, err)
		}
	}
	return nil
}

// started is a running suite and the goroutines reading its output.
type started struct {
	g      *sandbox.Process
	parser *testreport.GoParser // for FormatGoJSON
	// cachedNote says how many packages' results came from go's test cache.
	cachedNote string
	text       testreport.TextParser // for FormatLibtest and FormatTAP
	readErr    error                 // of the parser
	readers    sync.WaitGroup
	pipes      []*os.File // read ends, closed by drain
	tail       *tailBuf   // the last output, for the messages of runner errors
	// what the text parser read besides cases
	totals     *artifact.Summary
	recognised bool
}

// start launches the suite with its output wired to out, in its cgroup
// and with its limits applied before its command runs.
func (r *runner) start(s Suite, dir, prog string, env []string, out *cappedWriter) (*started, []string, error) {
	run := &started{tail: &tailBuf{}}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("create pipe: %w", err)
	}
	run.pipes = append(run.pipes, outR)
	writers := []*os.File{outW}
	errW := outW
	if s.Format == FormatGoJSON {
		// stdout is the JSON stream, stderr plain text: keep them apart.
		errR, w, err := os.Pipe()
		if err != nil {
			closeAll(run.pipes, writers)
			return nil, nil, fmt.Errorf("create pipe: %w", err)
		}
		run.pipes = append(run.pipes, errR)
		writers = append(writers, w)
		errW = w
	}
	g, notes, err := sandbox.Start(sandbox.Launch{
		Argv:         append([]string{prog}, s.Command[1:]...),
		Dir:          dir,
		Env:          env,
		Stdout:       outW,
		Stderr:       errW,
		Sandbox:      r.sandbox,
		Cgroups:      r.cgroups,
		Name:         s.Name,
		MaxProcesses: r.maxProcs,
		MaxMemory:    r.maxMem,
	})
	closeAll(nil, writers) // the child has its copies
	if err != nil {
		closeAll(run.pipes, nil)
		return nil, notes, err
	}
	run.g = g

	both := io.MultiWriter(out, run.tail)
	write := func(text string) { _, _ = io.WriteString(both, text) }
	switch s.Format {
	case FormatGoJSON:
		run.parser = testreport.NewGoParser(write)
		run.readers.Add(2)
		go func() {
			defer run.readers.Done()
			run.readErr = run.parser.Consume(run.pipes[0])
		}()
		go func() {
			defer run.readers.Done()
			_, _ = io.Copy(both, run.pipes[1])
		}()
	case FormatLibtest, FormatTAP, FormatUnittest:
		run.text, _ = testreport.NewTextParser(s.Format, write)
		run.readers.Add(1)
		go func() {
			defer run.readers.Done()
			run.readErr = run.text.Consume(run.pipes[0])
		}()
	default:
		run.readers.Add(1)
		go func() {
			defer run.readers.Done()
			_, _ = io.Copy(both, run.pipes[0])
		}()
	}
	return run, notes, nil
}

// noteLimits records the limit mechanisms of the first suite that started
// and notes a later suite whose mechanisms differ.
func (r *runner) noteLimits(res *suiteResult, a Limits) {
	if !r.limitsSeen {
		r.limits, r.limitsSeen = a, true
		return
	}
	if !a.SameMechanisms(r.limits) {
		res.notes = append(res.notes, fmt.Sprintf("limits enforced by %v (processes) and %v (memory), unlike the first suite", a.Processes, a.Memory))
	}
}

// drain waits for the output readers to reach EOF, at most drainLimit, and
// then closes the pipes. It reports whether it had to cut them off.
func (s *started) drain() (cut bool) {
	done := make(chan struct{})
	go func() {
		s.readers.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(drainLimit):
		cut = true
		closeAll(s.pipes, nil)
		<-done
	}
	closeAll(s.pipes, nil)
	return cut
}

func closeAll(a, b []*os.File) {
	for _, f := range a {
		_ = f.Close()
	}
	for _, f := range b {
		_ = f.Close()
	}
}

// collect reads the suite's cases from its parser or report. The problem,
// if any, is a remark for RunInfo; the cases already say what went wrong.
func collect(s Suite, dir string, run *started, since time.Time) ([]artifact.Case, string) {
	readErr := func(cases []artifact.Case) ([]artifact.Case, string) {
		if run.readErr != nil && !errors.Is(run.readErr, os.ErrClosed) {
			cases = append(cases, artifact.Case{Name: caseResults, Status: testreport.StatusError, Message: clip.Runes(run.readErr.Error(), testreport.MaxMessage)})
			return cases, run.readErr.Error()
		}
		return cases, ""
	}
	switch s.Format {
	case FormatGoJSON:
		cases, problem := readErr(run.parser.Finish())
		if n := run.parser.Cached(); n > 0 {
			run.cachedNote = fmt.Sprintf("%d package(s) passed from go's test cache (the same test binary and inputs passed before; go replayed their results, counted here); -count=1 in the suite's command runs them again", n)
		}
		return cases, problem
	case FormatLibtest, FormatTAP, FormatUnittest:
		res := run.text.Finish()
		run.totals, run.recognised = res.Totals, res.Recognised
		cases, problem := readErr(res.Cases)
		if len(res.Notes) > 0 {
			problem = strings.TrimPrefix(problem+"; "+strings.Join(res.Notes, "; "), "; ")
		}
		return cases, problem
	case FormatJUnit:
		return readReports(dir, s.Report, since)
	}
	if s.Report != "" {
		return readReports(dir, s.Report, since)
	}
	return nil, ""
}
