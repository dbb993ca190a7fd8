package repl_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/cli"
	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/proctest"
	"github.com/orchdev/orch/internal/ptytest"
)

// The test binary doubles as orch: with reexecEnv set to "repl" it runs
// the REPL as `orch repl` does (behind Main's own signal handling); set to
// "orch" it runs orch with its arguments.
const reexecEnv = "ORCH_REPL_TEST_REEXEC"

func TestMain(m *testing.M) {
	switch os.Getenv(reexecEnv) {
	case "repl":
		os.Exit(orchREPL())
	case "orch":
		os.Exit(cli.Main())
	}
	os.Exit(m.Run())
}

// orchREPL is `orch repl` with the signal handling of cli.Main.
func orchREPL() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	dir, err := os.Getwd()
	if err != nil {
		return 1
	}
	return cli.RunREPL(ctx, cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Dir: dir, Getenv: os.Getenv, Environ: os.Environ, Now: time.Now})
}

// testEnv is the environment of every orch process a test starts: a
// private HOME, gittest's identity, no system git configuration.
func testEnv(home string, extra ...string) []string {
	env := append(os.Environ(),
		"HOME="+home, "XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
		"GIT_CONFIG_NOSYSTEM=1", "TERM=xterm", "NO_COLOR=",
		// No pager unless a test asks for one (TestTerminalPager).
		"ORCH_PAGER=cat")
	env = append(env, gittest.Identity...)
	return append(env, extra...)
}

// project is a git repository with one commit and orch initialised.
type project struct {
	t    *testing.T
	dir  string
	home string
	// replEnv is added to the REPL's environment (startREPL).
	replEnv []string
}

func newProject(t *testing.T) *project {
	t.Helper()
	p := &project{t: t, dir: t.TempDir(), home: t.TempDir()}
	p.write("README.md", "# demo\n")
	gittest.Git(t, p.dir, "init", "-q")
	gittest.CommitAll(t, p.dir, "base")
	p.mustOrch("init")
	return p
}

func (p *project) write(rel, content string) {
	p.t.Helper()
	gittest.Write(p.t, p.dir, rel, content)
}

// orch runs orch as a separate process and returns its exit code and
// combined output.
func (p *project) orch(args ...string) (int, string) {
	p.t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = p.dir
	cmd.Env = testEnv(p.home, reexecEnv+"=orch")
	return proctest.Run(p.t, cmd)
}

// verify fails the test unless orch verify passes.
func (p *project) verify() {
	p.t.Helper()
	if code, out := p.orch("verify"); code != 0 {
		p.t.Fatalf("orch verify: %d\n%s", code, out)
	}
}

func (p *project) mustOrch(args ...string) string {
	p.t.Helper()
	code, out := p.orch(args...)
	if code != 0 {
		p.t.Fatalf("orch %v: exit %d\n%s", args, code, out)
	}
	return out
}

// state reads a task's state.json.
func (p *project) state(id string) (phase string, actors map[string]map[string]any) {
	p.t.Helper()
	data, err := os.ReadFile(filepath.Join(p.dir, ".orch", "tasks", id, "state.json"))
	if err != nil {
		p.t.Fatal(err)
	}
	var st struct {
		Phase  string                    `json:"phase"`
		Actors map[string]map[string]any `json:"actors"`
	}
	if err := json.Unmarshal(data, &st); err != nil {
		p.t.Fatalf("state.json: %v\n%s", err, data)
	}
	return st.Phase, st.Actors
}

// lastEvent returns the task's last transcript event of a kind.
func (p *project) lastEvent(id, kind string) map[string]any {
	p.t.Helper()
	data, err := os.ReadFile(filepath.Join(p.dir, ".orch", "tasks", id, "transcript.jsonl"))
	if err != nil {
		p.t.Fatal(err)
	}
	var last map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var ev map[string]any
		if err := json.Unmarshal(line, &ev); err != nil {
			p.t.Fatalf("transcript line %s: %v", line, err)
		}
		if ev["kind"] == kind {
			last = ev
		}
	}
	return last
}

// kinds counts the transcript's events of each kind.
func (p *project) kinds(id string) map[string]int {
	p.t.Helper()
	data, err := os.ReadFile(filepath.Join(p.dir, ".orch", "tasks", id, "transcript.jsonl"))
	if err != nil {
		p.t.Fatal(err)
	}
	n := map[string]int{}
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var ev struct {
			Kind string `json:"kind"`
		}
		if err := json.Unmarshal(line, &ev); err != nil {
			p.t.Fatalf("transcript line %s: %v", line, err)
		}
		n[ev.Kind]++
	}
	return n
}

// terminal is an orch REPL running in a pseudo-terminal, read like a
// screen: escape sequences and carriage returns are stripped.
type terminal struct {
	*ptytest.Terminal
	t    *testing.T
	cmd  *exec.Cmd
	mark int // waitFor searches the screen text from here
}

// startREPL starts the REPL in dir in a 50x160 pseudo-terminal.
func (p *project) startREPL() *terminal {
	p.t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Dir = p.dir
	cmd.Env = testEnv(p.home, append([]string{reexecEnv + "=repl"}, p.replEnv...)...)
	tm := &terminal{Terminal: ptytest.Start(p.t, cmd, 50, 160), t: p.t, cmd: cmd}
	// Runs before ptytest's cleanup ends the REPL.
	p.t.Cleanup(func() {
		if p.t.Failed() || os.Getenv("ORCH_REPL_TEST_SCREEN") != "" {
			text := tm.screen()
			p.t.Logf("the REPL's screen:\n%s", text)
		}
	})
	return tm
}

// screen is the output so far as text.
func (tm *terminal) screen() string { return ptytest.Text(tm.Output.String()) }

// waitFor waits until the screen shows want after the mark, and moves the
// mark past it.
func (tm *terminal) waitFor(want string, timeout time.Duration) {
	tm.t.Helper()
	var text string
	found := tm.Output.Await(timeout, func(raw string) bool {
		text = ptytest.Text(raw)
		if tm.mark > len(text) {
			tm.mark = len(text)
		}
		if i := strings.Index(text[tm.mark:], want); i >= 0 {
			tm.mark += i + len(want)
			return true
		}
		return false
	})
	if !found {
		tm.t.Fatalf("after %v the screen does not show %q; since the mark:\n%s", timeout, want, text[tm.mark:])
	}
}

// step types keys, then waits for each of wants in turn, as waitFor does.
func (tm *terminal) step(keys string, wants ...string) {
	tm.t.Helper()
	tm.typeKeys(keys)
	for _, want := range wants {
		tm.waitFor(want, wait)
	}
}

// quit types Ctrl-D and fails the test unless the REPL exits 0.
func (tm *terminal) quit() {
	tm.t.Helper()
	tm.typeKeys(ctrlD)
	if code := tm.exit(wait); code != 0 {
		tm.t.Fatalf("Ctrl-D: exit %d", code)
	}
}

// since returns the screen text after the mark without moving it.
func (tm *terminal) since() string {
	text := tm.screen()
	if tm.mark > len(text) {
		return ""
	}
	return text[tm.mark:]
}

// typeKeys writes keys to the terminal as a person would type them.
func (tm *terminal) typeKeys(keys string) {
	tm.t.Helper()
	tm.Type(keys)
}

// exit waits for the REPL to end and returns its exit code.
func (tm *terminal) exit(timeout time.Duration) int {
	tm.t.Helper()
	return tm.Exit(timeout)
}

// Keys.
const (
	ctrlC = "\x03"
	ctrlD = "\x04"
	tab   = "\t"
	enter = "\r"
	up    = "\x1b[A"
)

const wait = 20 * time.Second

// timer returns a channel that fires after d, stopped at the test's end.
func timer(t *testing.T, d time.Duration) <-chan time.Time {
	tm := time.NewTimer(d)
	t.Cleanup(func() { tm.Stop() })
	return tm.C
}

// rawOutput is everything the REPL wrote, escape codes included.
func (tm *terminal) rawOutput() string { return tm.Output.String() }
