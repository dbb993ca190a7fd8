package testrun

import (
	"fmt"
	"strings"
	"sync"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/clip"
	"github.com/orchdev/orch/internal/lazyre"
	"github.com/orchdev/orch/internal/testreport"
)

// tailSize is how much of a suite's latest output tailBuf keeps.
const tailSize = 16 << 10

// tailBuf keeps the last tailSize bytes written to it.
type tailBuf struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tailBuf) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - tailSize; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tailBuf) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.ToValidUTF8(string(t.buf), "\uFFFD")
}

// ExitCommandNotFound is the shell's exit status for a command it could not
// find (also npm's and make's, which run scripts through the shell).
const ExitCommandNotFound = 127

// wrapped127 matches the tools that run a script through the shell and
// report its exit status 127 in their own words, exiting with another
// status (make exits 2, yarn 1).
var wrapped127 = lazyre.New(`make(?:\[\d+\])?: \*\*\* \[[^\]]*\] Error 127|Command failed with exit code 127`)

// collectionFailure is the message pytest gives the error case of a test
// module it could not import.
const collectionFailure = "collection failure"

// buildFailed matches the lines of compilers and build tools that say the
// code did not compile: then a missing report is the change's fault, not
// the runner's.
var buildFailed = lazyre.New(`COMPILATION ERROR|Compilation failure|Compilation failed|compileJava FAILED|compileTestJava FAILED|could not compile|SyntaxError|error TS\d+|error\[E\d+\]`)

// runnerProblem says why a suite that ran is the runner's failure rather
// than its tests': the command (or one its script runs) was not found,
// pytest could not collect the tests, the suite wrote no report, or the
// tool stopped before it ran or built anything. Empty means the cases
// stand. tail is the end of the suite's output; counted says its parser
// read the runner's results (test points or totals).
func runnerProblem(s Suite, exit int, cases []artifact.Case, tail string, counted bool) string {
	real := realFailures(cases)
	if (exit == ExitCommandNotFound || wrapped127.MatchString(tail)) && real == 0 {
		what := lastLine(tail, func(l string) bool {
			return strings.Contains(l, "not found") || strings.Contains(l, "No such file") || strings.Contains(l, "command not found")
		})
		switch {
		case what == "":
			what = "exit status 127"
		case exit == ExitCommandNotFound:
			what += " (exit status 127)"
		default:
			what += fmt.Sprintf(" (exit status 127 inside, %d outside)", exit)
		}
		return fmt.Sprintf("%v: %s: the suite's command, or one its script runs, is missing in the sandbox. Install it, make it visible read-only ([test] read_only_paths, or dependencies such as node_modules installed in the working tree), install it offline with [test] setup, or configure the suite's command under [[test.suites]]", ErrCommandNotFound, what)
	}
	if n, first := collectionErrors(cases); n > 0 {
		return fmt.Sprintf("the tests could not be collected: %d test module(s) failed to import (first: %s), so no test ran. Make the code importable in the sandbox: a src layout needs PYTHONPATH=src (detected suites set it), a virtualenv in .venv or venv is used when present, dependencies can be installed offline with [test] setup; or configure the suite under [[test.suites]]. If the change itself broke the import, send the task back with orch next --override", n, first)
	}
	if exit != 0 && real == 0 {
		if msg := offlineMissing(tail); msg != "" {
			return msg
		}
		if m := pnpmError.FindStringSubmatch(ansiEscape.ReplaceAllString(tail, "")); m != nil && !strings.Contains(tail, "ELIFECYCLE") {
			return fmt.Sprintf("pnpm stopped before it ran the script (%s): the package manager, not the tests, failed. If package.json's packageManager names a pnpm version, run pnpm once in your working tree outside orch so it installs that version (~/.local/share/pnpm/.tools is shown read-only); the sandbox has no network", clip.Runes(strings.TrimSpace(m[1]), 240))
		}
	}
	if exit != 0 && real == 0 && len(cases) == 0 && !counted && s.Format == FormatTAP {
		if line := startFailureLine(tail); line != "" {
			return fmt.Sprintf("the test runner stopped before it ran any test (%s): it could not start (a read-only folder it writes to, a module or configuration it could not load), so no test result exists. Check that the runner and its dependencies are installed in the working tree and work offline; if the change itself broke the runner's configuration or an import, send the task back with orch next --override", clip.Runes(line, 300))
		}
	}
	last := keyLine(tail)
	if last != "" {
		last = " (" + clip.Runes(last, 240) + ")"
	}
	if s.Format == FormatJUnit && onlyReportErrors(cases) {
		if exit != 0 && buildFailed.MatchString(tail) {
			return "" // the code did not compile: the change's failure
		}
		return fmt.Sprintf("exited with status %d and left no readable JUnit report at %s (%s)%s: check the suite's command and report path, and that its tools and dependencies are available offline in the sandbox", exit, s.Report, cases[0].Message, last)
	}
	if exit == 0 || real > 0 {
		return ""
	}
	switch {
	case s.Format == FormatJUnit && len(cases) == 0:
		return fmt.Sprintf("exited with status %d and its JUnit report holds no test%s: no test ran (pytest exits 5 when it collects none). Check the suite's command and test paths", exit, last)
	case s.Format == FormatGoJSON && len(cases) == 0:
		return fmt.Sprintf("go test exited with status %d before reporting any test or build result%s: check the module (go.mod) and that its dependencies are in the module cache", exit, last)
	case s.Format == FormatUnittest && len(cases) == 0:
		return fmt.Sprintf("python -m unittest exited with status %d before running any test%s: check that the start folder and test modules import in the sandbox (a virtualenv in .venv or venv is used when present; dependencies can be installed offline with [test] setup)", exit, last)
	case s.Format == FormatLibtest && len(cases) == 0:
		return fmt.Sprintf("cargo exited with status %d before building or running any test%s: its dependencies must be available offline (run cargo fetch outside the sandbox, vendor them, or use [test] setup)", exit, last)
	}
	return ""
}

// realFailures counts the failing and error cases that are tests (not
// orch's own cases about a missing report or unreadable results).
func realFailures(cases []artifact.Case) int {
	n := 0
	for _, c := range cases {
		if c.Status == testreport.StatusFail || (c.Status == testreport.StatusError && c.Name != caseReport && c.Name != caseResults && c.Message != collectionFailure) {
			n++
		}
	}
	return n
}

// onlyReportErrors reports whether the cases are only orch's report errors.
func onlyReportErrors(cases []artifact.Case) bool {
	for _, c := range cases {
		if c.Name != caseReport {
			return false
		}
	}
	return len(cases) > 0
}

// collectionErrors counts the test modules of pytest's (and unittest's)
// collection failures (a module collected twice, as a doctest module too,
// has two) and describes the first: the module and its "E   " line.
func collectionErrors(cases []artifact.Case) (int, string) {
	n, first := 0, ""
	modules := map[string]bool{}
	for _, c := range cases {
		if c.Status != testreport.StatusError || c.Message != collectionFailure || modules[c.Name] {
			continue
		}
		modules[c.Name] = true
		n++
		if first == "" {
			first = c.Name
			if e := lastLine(c.Output, func(l string) bool { return strings.HasPrefix(l, "E ") }); e != "" {
				first += ": " + strings.TrimSpace(strings.TrimPrefix(e, "E "))
			} else if e := lastLine(c.Output, func(l string) bool { return strings.Contains(l, "Error: ") }); e != "" {
				first += ": " + e // unittest's traceback
			}
			first = clip.Runes(first, 200)
		}
	}
	return n, first
}

// ansiEscape matches terminal colour and cursor sequences.
var ansiEscape = lazyre.New(`\x1b\[[0-9;?]*[A-Za-z]`)

// keyLine picks the line of a tool's output that says why it stopped: the
// first that reports an error with some text (Maven's "[ERROR] Could not
// ...", cargo's "error: failed to ..."), else the last line; colour codes
// removed, orch's own lines skipped, and so are warnings that mention an
// error (cargo's "warning: spurious network error (3 tries remaining)"
// before its "error: failed to get `x` as a dependency").
func keyLine(tail string) string {
	var last string
	for _, l := range strings.Split(ansiEscape.ReplaceAllString(tail, ""), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "[orch:") || strings.HasPrefix(l, "=== orch:") {
			continue
		}
		last = l
		text := l
		for _, p := range []string{"[ERROR]", "[FATAL]", "[ERROR]"} {
			text = strings.TrimSpace(strings.TrimPrefix(text, p))
		}
		lower := strings.ToLower(l)
		if strings.HasPrefix(lower, "warning") || strings.HasPrefix(lower, "npm warn") || strings.HasPrefix(lower, "[warning]") {
			continue
		}
		if (strings.Contains(lower, "error") || strings.Contains(lower, "fatal")) && len(text) > 12 &&
			!strings.HasSuffix(text, ":") && !strings.HasPrefix(text, "To see the full stack trace") {
			return text
		}
	}
	if last == "" {
		return ""
	}
	return "last line: " + last
}

// lastLine returns the last non-blank line of s that keep accepts, trimmed.
func lastLine(s string, keep func(string) bool) string {
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l != "" && keep(l) {
			return l
		}
	}
	return ""
}

// startFailure matches what test runners print when they stop before
// running any test: a write to a read-only folder (Vite bundling its
// config into node_modules/.vite-temp), a module or configuration that
// does not load, no test file found, npm's placeholder test script (a
// workspace member's, run by the top's script) that fails.
var startFailure = lazyre.New(`Error: no test specified|\bEROFS\b|ERR_MODULE_NOT_FOUND|Cannot find module|Cannot find package|failed to load config|Failed to load url|Startup Error|No test files found|Error: No test files? found|ERR_REQUIRE_ESM|ERR_UNKNOWN_FILE_EXTENSION`)

// startFailureLine returns the first line of tail that shows a runner
// stopping before any test, colour codes removed; empty when none does.
func startFailureLine(tail string) string {
	for _, l := range strings.Split(ansiEscape.ReplaceAllString(tail, ""), "\n") {
		if l = strings.TrimSpace(l); startFailure.MatchString(l) && !strings.HasPrefix(l, "[orch:") {
			return l
		}
	}
	return ""
}

// Maven's and Gradle's words for something they must download and may
// not: the sandbox has no network, so they run offline.
var (
	mavenParent  = lazyre.New(`Non-resolvable parent POM for ([^\s:]+:[^\s:]+)[^\n]*?the artifact (\S+) has not been downloaded`)
	mavenPlugin  = lazyre.New(`Plugin (\S+) or one of its dependencies could not be resolved`)
	mavenMissing = lazyre.New(`the artifact (\S+) has not been downloaded from it before|The following artifacts could not be resolved: ([^\n]*?)(?:: Cannot access|$)`)
	gradleCached = lazyre.New(`No cached version of (\S+) available for offline mode`)
	gradleDist   = lazyre.New(`Downloading (https?://\S+/(gradle-[^/\s]+\.zip))`)
)

// pnpmError is pnpm's own error line (" ERROR  EACCES: …"); a failing
// script is "ELIFECYCLE" instead.
var pnpmError = lazyre.New(`(?m)^[\s\x{2009}]?ERROR[\s\x{2009}]+(\S.*)$`)

// offlineMissing says what a JVM build tool needed from the network and
// how to get it onto the machine once, outside orch, when its output
// shows that it stopped for that: a runner error with the fix, not a test
// failure. Empty when the output shows no such stop.
func offlineMissing(tail string) string {
	tail = ansiEscape.ReplaceAllString(tail, "")
	const mvnFix = "Maven runs offline in the sandbox (there is no network) and finds only what is in your ~/.m2/repository (shown read-only). Download it once in your working tree, outside orch: mvn -B dependency:go-offline (then mvn -B test once if a test provider is still missing), and run orch test again"
	if m := mavenParent.FindStringSubmatch(tail); m != nil {
		return fmt.Sprintf("%v: the parent POM %s of %s is not in ~/.m2/repository. %s", ErrOffline, m[2], m[1], mvnFix)
	}
	if m := mavenPlugin.FindStringSubmatch(tail); m != nil {
		return fmt.Sprintf("%v: the Maven plugin %s (or one of its dependencies) is not in ~/.m2/repository. %s", ErrOffline, m[1], mvnFix)
	}
	if m := mavenMissing.FindStringSubmatch(tail); m != nil {
		what := m[1]
		if what == "" {
			what = strings.TrimSpace(m[2])
		}
		return fmt.Sprintf("%v: %s is not in ~/.m2/repository. %s", ErrOffline, clip.Runes(what, 200), mvnFix)
	}
	if m := gradleDist.FindStringSubmatch(tail); m != nil && strings.Contains(tail, "Exception") {
		return fmt.Sprintf("%v: gradlew wanted to download %s (%s), which is not in your ~/.gradle/wrapper/dists (shown read-only); the sandbox has no network. Run ./gradlew --version once in your working tree, outside orch, and run orch test again", ErrOffline, m[2], m[1])
	}
	if m := gradleCached.FindStringSubmatch(tail); m != nil {
		return fmt.Sprintf("%v: %s is not in your ~/.gradle/caches (shown read-only to Gradle, which runs --offline in the sandbox: there is no network). Run the build once in your working tree, outside orch (./gradlew test), so Gradle downloads it, and run orch test again", ErrOffline, m[1])
	}
	return ""
}
