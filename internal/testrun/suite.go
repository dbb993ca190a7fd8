package testrun

import (
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/orchdev/orch/internal/gitx"
	"github.com/orchdev/orch/internal/lazyre"
	"github.com/orchdev/orch/internal/sandbox"
)

// CaseGitChanged names the case Run adds to the suite after which the
// directory's git hooks, config or link changed: that suite got out of its
// sandbox (or something else changed them), and the report is an error.
// orch accept refuses a report that holds it.
const CaseGitChanged = "[git directory]"

// Suite kinds.
const (
	KindTest = "test"
	KindLint = "lint"
)

// Result formats a suite's results are read from.
const (
	FormatExitCode = ""         // the exit code alone decides
	FormatGoJSON   = "go-json"  // stdout is a `go test -json` event stream
	FormatJUnit    = "junit"    // Suite.Report names JUnit XML: a file, a folder or a glob
	FormatLibtest  = "libtest"  // the output is `cargo test`'s (libtest), every test binary
	FormatTAP      = "tap"      // the output is TAP (node --test, tape) or the totals of node's spec reporter, Jest, Mocha, Vitest or AVA
	FormatUnittest = "unittest" // the output is Python unittest's (python -m unittest)
)

// Formats lists the result formats, for messages and configuration.
var Formats = []string{FormatGoJSON, FormatJUnit, FormatLibtest, FormatTAP, FormatUnittest}

// Sandbox modes of Options.Sandbox (the sandbox package's). The sandbox
// fails closed: "auto" (the default) and "bwrap" both mean bwrap, and Run
// refuses with ErrNoSandbox when bwrap does not work here; only an
// explicit "none" runs suites without it.
const (
	SandboxAuto  = sandbox.Auto  // bwrap, or refuse
	SandboxBwrap = sandbox.Bwrap // the same, named explicitly
	SandboxNone  = sandbox.None  // no sandbox: the opt-out, recorded in RunInfo
)

// Defaults.
const (
	// DefaultTimeout applies to a suite whose Timeout is zero.
	DefaultTimeout = 15 * time.Minute
	// DefaultMaxLogBytes applies when Options.MaxLogBytes is zero.
	DefaultMaxLogBytes int64 = 10 << 20
	// KillGrace is the time between SIGTERM and SIGKILL.
	KillGrace = 2 * time.Second
	// LogPathPrefix is the task-relative folder of suite logs, as recorded
	// in artifact.Suite.Log.
	LogPathPrefix = "test/logs/"
	// DefaultMaxProcesses applies when Options.MaxProcesses is zero. The
	// kernel counts threads as processes here, and a parallel build on a
	// big machine runs thousands of them.
	DefaultMaxProcesses = 4096
	// DefaultMaxMemory applies when Options.MaxMemory is zero.
	DefaultMaxMemory int64 = 4 << 30
)

// Suite is one test or lint command to run.
type Suite struct {
	// Name identifies the suite; it names the log file, so it must match
	// ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$ and be unique within a run.
	Name string
	// Kind is KindTest or KindLint.
	Kind string
	// Command is the argv. A command given as one string in configuration
	// is passed as ["sh", "-c", cmd] by the caller.
	Command []string
	// Dir is the folder the command runs in, relative to the directory
	// (a module or workspace member: "exp", "packages/core"); empty means
	// the directory itself. Report is relative to it, and the report's
	// command says "cd Dir && ...".
	Dir string
	// Timeout bounds the suite; zero means DefaultTimeout.
	Timeout time.Duration
	// Env sets extra variables for this suite. They come from the project's
	// configuration and are not sanitized.
	Env map[string]string
	// Report is where the command writes JUnit XML, relative to the
	// suite's folder (Dir, else the directory): a file ("out/junit.xml"), a folder whose *.xml files are
	// read ("target/surefire-reports/", or any existing folder), or a glob
	// ("build/test-results/*/*.xml", "**" not supported). Run removes a
	// stale report file before the suite starts; from a folder or glob
	// only files written since the suite started are read.
	Report string
	// Format says where results come from: FormatGoJSON, FormatJUnit,
	// FormatLibtest, FormatTAP or FormatExitCode. With a text format,
	// output that holds no test results means the suite is judged by its
	// exit code (and says so).
	Format string
}

// Options configure Run.
type Options struct {
	// Dir is the prepared directory the suites run in.
	Dir string
	// LogDir receives <suite>.log files (the task's test/logs).
	LogDir string
	// Sandbox is SandboxAuto (also for ""), SandboxBwrap or SandboxNone.
	Sandbox string
	// MaxProcesses bounds the processes and threads of each suite; zero
	// means DefaultMaxProcesses. See RunInfo.Limits for what enforced it.
	MaxProcesses int
	// MaxMemory bounds the memory of each suite in bytes (of the whole
	// suite with a cgroup, of each process otherwise, and of each tmpfs of
	// the sandbox); zero means DefaultMaxMemory.
	MaxMemory int64
	// MaxWrite bounds what the suites of the run write together in the
	// sandbox (the directory, caches, /tmp, the home); zero means
	// sandbox.DefaultMaxWrite. Over it, a suite is a runner error naming
	// [test] max_write.
	MaxWrite int64
	// Stream receives live output; may be nil.
	Stream io.Writer
	// Env is the base environment; nil means the current process's.
	// Run filters it with sandbox.FilterEnv.
	Env []string
	// AllowEnv names variables passed besides the allow-list (exact
	// names, or prefixes ending in "*"), whatever they look like: the
	// configuration's [test] env_allow.
	AllowEnv []string
	// MaxLogBytes caps each suite's log (and its live output); zero means
	// DefaultMaxLogBytes.
	MaxLogBytes int64
	// Setup are commands run before the suites, one after another, in the
	// directory and the sandbox with the suites' limits (an offline
	// install, a code generator). Only Command, Timeout and Env count;
	// their logs are LogDir/setup-N.log. One that fails or cannot start
	// makes the report's status "error" and no suite runs.
	Setup []Suite
	// GoCacheDir, when set and a sandbox is used, is bound read-write into
	// the sandbox and used as GOCACHE, so sandboxed go builds are cached
	// between runs. It must never be the user's own build cache: a suite
	// can write into it. Empty means a fresh cache for each Run, shared by
	// its suites and removed at the end (slower: go compiles the standard
	// packages a test needs every time, some 20 s on two cores).
	GoCacheDir string

	// Deps is the user's working tree. The dependency folders installed
	// there that the directory lacks (git ignores them: node_modules,
	// .venv, venv, vendor, and node_modules one level down for
	// workspaces) are made visible in the directory without copying: bound
	// read-only in the sandbox (and at their own path, where a virtualenv's
	// scripts point), symlinked without it. Empty: none.
	Deps string
	// ReadOnly are files or folders (absolute paths) the sandbox shows
	// read-only at their own path, over the hidden home ([test]
	// read_only_paths). Missing ones are skipped with a note.
	ReadOnly []string
	// ReadOnlyInDir are paths relative to Deps bound read-only at the same
	// place in the directory (untracked files [test] read_only_paths
	// names). Missing ones are skipped with a note.
	ReadOnlyInDir []string
	// Changed are the repository paths (slash-separated, relative to Dir)
	// the change under test creates, updates, deletes or renames. A Python
	// test module that does not import because of one of them (its
	// traceback names the file, or the module it cannot find is one of
	// them) is the change's failure, an error case that sends the task
	// back, not the runner's: the code as changed does not import, as
	// code that does not compile is a failure. Empty: every collection
	// failure is the runner's.
	Changed []string
	// Hide are folders the sandbox never shows (the user's working tree),
	// not even when a toolchain on PATH lies in them.
	Hide []string
	// BuildCache, when set, is orch's folder for this repository's build
	// caches: Run keeps a cargo target folder per Rust toolchain
	// (CARGO_TARGET_DIR) and a Gradle home (GRADLE_USER_HOME) in it,
	// writable by the suites, so a second run builds incrementally. It
	// must never hold the user's own caches. The user's dependency caches
	// (npm's, ~/.m2/repository, ~/.gradle/caches, pip's; cargo's registry
	// is a toolchain folder) are shown read-only whether or not it is set.
	BuildCache string

	// noCgroups keeps Run from using cgroups (tests of the fallbacks).
	noCgroups bool
	// goWarm are the go build cache's warm-ups of the run's `go test`
	// suites (sandbox.GoWarmup), set by Run.
	goWarm []sandbox.Warmup
}

// RunInfo tells how Run ran the suites.
type RunInfo struct {
	// Sandbox is "bwrap" or "none"; empty when Run refused, and when there
	// were no suites and the sandbox was not "none".
	Sandbox string
	// Limits are the resource bounds of the suites and what enforced them.
	Limits Limits
	// Env are the names (never the values) of the variables the suites
	// got from orch's environment, sorted; a suite's configured env and
	// the sandbox's own settings (GOCACHE, TMPDIR...) come on top.
	Env []string
	// Notes are human-readable remarks (the sandbox and its mounts, the
	// opt-out, the environment's names, leftover processes killed, and
	// the like).
	Notes []string
	// Git is the fingerprint of the directory's repository (hooks, config,
	// the worktree's links, refs) before the suites ran; nil when the
	// directory is not a git checkout or no suite ran. GitChanged is what
	// differed after them, refs included.
	Git        *gitx.Fingerprint
	GitChanged []string
}

// Limits are the resource bounds of a run's suites and the mechanisms
// that enforced them for the first suite that started (a later suite that
// differs gets a note).
type Limits = sandbox.Limits

var suiteNameRE = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// validateSuites checks every suite and the uniqueness of their names.
func validateSuites(suites []Suite) error {
	seen := make(map[string]bool, len(suites))
	for i, s := range suites {
		if err := validateSuite(s); err != nil {
			return fmt.Errorf("suite %d (%q): %w", i, s.Name, err)
		}
		if seen[s.Name] {
			return fmt.Errorf("suite %d: %w: name %q used twice", i, ErrInvalidSuite, s.Name)
		}
		seen[s.Name] = true
	}
	return nil
}

func validateSuite(s Suite) error {
	if !suiteNameRE.MatchString(s.Name) || strings.Trim(s.Name, ".") == "" {
		return fmt.Errorf("%w: name must match %s", ErrInvalidSuite, suiteNameRE)
	}
	if s.Kind != KindTest && s.Kind != KindLint {
		return fmt.Errorf("%w: kind %q is neither %q nor %q", ErrInvalidSuite, s.Kind, KindTest, KindLint)
	}
	if len(s.Command) == 0 || s.Command[0] == "" {
		return fmt.Errorf("%w: empty command", ErrInvalidSuite)
	}
	switch s.Format {
	case FormatExitCode, FormatGoJSON, FormatLibtest, FormatTAP, FormatUnittest:
	case FormatJUnit:
		if s.Report == "" {
			return fmt.Errorf("%w: format %q needs a report path", ErrInvalidSuite, FormatJUnit)
		}
	default:
		return fmt.Errorf("%w: unknown format %q", ErrInvalidSuite, s.Format)
	}
	if s.Report != "" {
		clean := strings.TrimSuffix(filepath.ToSlash(s.Report), "/")
		if !filepath.IsLocal(clean) || strings.Contains(clean, "\\") {
			return fmt.Errorf("%w: report path %q must be relative and stay inside the directory", ErrInvalidSuite, s.Report)
		}
		if _, err := path.Match(clean, ""); err != nil {
			return fmt.Errorf("%w: report glob %q: %v", ErrInvalidSuite, s.Report, err)
		}
		if strings.Contains(clean, "**") {
			return fmt.Errorf("%w: report glob %q: ** is not supported; name each level with *", ErrInvalidSuite, s.Report)
		}
	}
	if s.Dir != "" {
		clean := filepath.ToSlash(s.Dir)
		if !filepath.IsLocal(s.Dir) || strings.Contains(s.Dir, "\\") || clean != path.Clean(clean) {
			return fmt.Errorf("%w: folder %q must be a clean relative path inside the directory", ErrInvalidSuite, s.Dir)
		}
	}
	if s.Timeout < 0 {
		return fmt.Errorf("%w: negative timeout %s", ErrInvalidSuite, s.Timeout)
	}
	for name := range s.Env {
		if name == "" || strings.ContainsAny(name, "=\x00") {
			return fmt.Errorf("%w: bad environment variable name %q", ErrInvalidSuite, name)
		}
	}
	return nil
}

// displayCommand renders argv as a shell-like string for the report.
func displayCommand(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		parts[i] = shellQuote(a)
	}
	return strings.Join(parts, " ")
}

// suiteCommand renders a suite's command as a user types it to reproduce
// it from the top of the checkout: "cd exp && go test -json ./...".
func suiteCommand(s Suite) string {
	if s.Dir == "" || s.Dir == "." {
		return displayCommand(s.Command)
	}
	return "cd " + shellQuote(s.Dir) + " && " + displayCommand(s.Command)
}

func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
