package repl

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/syncbuf"
)

// fakeOrch records the command lines the session runs. "test" blocks
// until its context is cancelled; "codegen" panics; "plan" writes plan.md
// into taskDir; every other command prints its arguments.
type fakeOrch struct {
	mu      sync.Mutex
	calls   [][]string
	taskDir string
	started chan string
}

func (f *fakeOrch) run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f.mu.Lock()
	f.calls = append(f.calls, args)
	f.mu.Unlock()
	if f.started != nil {
		f.started <- args[0]
	}
	switch args[0] {
	case "test":
		<-ctx.Done()
		fmt.Fprintln(stderr, "orch: test:", ctx.Err())
		return 1
	case "codegen":
		panic("boom")
	case "plan":
		os.WriteFile(filepath.Join(f.taskDir, "planning", "plan.md"), []byte("# The plan\n\n- step one\n"), 0o644)
		fmt.Fprintln(stdout, "planning round 1")
		return 0
	}
	fmt.Fprintf(stdout, "ran %q\n", args)
	return 0
}

func (f *fakeOrch) got() [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// session runs Run without a terminal on the given input.
func runSession(t *testing.T, dir string, f *fakeOrch, in io.Reader, intr <-chan os.Signal) (code int, out, errw string) {
	t.Helper()
	var o, e strings.Builder
	code = Run(context.Background(), Config{Run: f.run, Dir: dir, Stdin: in, Stdout: &o, Stderr: &e, Interrupts: intr})
	return code, o.String(), e.String()
}

func TestRunPlainLines(t *testing.T) {
	dir, p := newProject(t, false)
	f := &fakeOrch{}
	input := strings.Join([]string{
		"/status",
		"/frob",
		"add retry with backoff", // no task: the brief of a new one
		`/next --override "I accept the risk of skipping review" --to test`,
		"/help",
		"/quit",
		"/status", // never read
	}, "\n")
	code, out, errw := runSession(t, dir, f, strings.NewReader(input), nil)
	// Piped: the session goes on after /frob and exits with its usage code.
	if code != ExitUsage {
		t.Fatalf("exit %d, want %d (the unknown /frob)\nstdout:\n%s\nstderr:\n%s", code, ExitUsage, out, errw)
	}
	want := [][]string{{"status"}, {"new", "--", "add retry with backoff"}, {"next", "--override", "I accept the risk of skipping review", "--to", "test"}}
	if got := f.got(); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("ran %q, want %q", got, want)
	}
	if !strings.Contains(errw, "unknown command /frob: /help lists the commands") {
		t.Errorf("no hint for /frob:\n%s", errw)
	}
	if !strings.Contains(out, "/review plan") || !strings.Contains(out, "Ctrl-D leaves") {
		t.Errorf("no help:\n%s", out)
	}
	if strings.Contains(out+errw, "\x1b") || strings.Contains(out, "orch>") {
		t.Errorf("plain output has escape codes or prompts:\n%q", out+errw)
	}
	if _, err := os.Stat(filepath.Join(p.Dir, HistoryFile)); !os.IsNotExist(err) {
		t.Errorf("a session without a terminal wrote history: %v", err)
	}
}

// Plain text answers the first open blocking question while planning.
func TestRunPlainTextAnswers(t *testing.T) {
	dir, p := newProject(t, true)
	writeFile(t, filepath.Join(p.TasksDir(), "t1", "planning", "planning.ai.json"), `{"id":"t1","title":"T","brief":"b","questions":[
		{"id":"q1","text":"answered","blocking":true,"answer":"yes"},
		{"id":"q2","text":"optional","blocking":false},
		{"id":"q3","text":"how many attempts?","blocking":true,"answer":"  "}]}`)
	f := &fakeOrch{}
	code, out, errw := runSession(t, dir, f, strings.NewReader("five attempts\n"), nil)
	if code != ExitOK {
		t.Fatalf("exit %d: %s %s", code, out, errw)
	}
	want := [][]string{{"answer", "--", "q3", "five attempts"}}
	if got := f.got(); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("ran %q, want %q", got, want)
	}
}

// After /plan succeeds, the session shows planning/plan.md.
func TestRunShowsPlan(t *testing.T) {
	dir, p := newProject(t, true)
	f := &fakeOrch{taskDir: filepath.Join(p.TasksDir(), "t1")}
	code, out, errw := runSession(t, dir, f, strings.NewReader("/plan\n"), nil)
	if code != ExitOK {
		t.Fatalf("exit %d: %s %s", code, out, errw)
	}
	if want := "planning round 1\n── planning/plan.md ──\nran [\"show\" \"plan\"]\n"; out != want {
		t.Errorf("stdout = %q, want %q", out, want)
	}
}

func TestRunDiffAndSwitch(t *testing.T) {
	dir, p := newProject(t, true)
	if _, _, err := p.CreateTask("t2", "other", time.Now().UTC()); err != nil {
		t.Fatal(err)
	}
	f := &fakeOrch{}
	// t2 is current after its creation.
	code, out, errw := runSession(t, dir, f, strings.NewReader("/diff\n/task switch t1\n/diff --no-pager\n/task switch nope\n/task switch ../x\n/task switch t22\n"), nil)
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(out, "current task: t1 (planning)\nran [\"diff\" \"--no-pager\"]\n") {
		t.Errorf("switch then diff:\n%s", out)
	}
	if !strings.Contains(errw, "no such task") || !strings.Contains(errw, "invalid task id") {
		t.Errorf("bad switches not refused:\n%s", errw)
	}
	// One hint each, in the REPL's syntax, and a did-you-mean for a near id.
	if !strings.Contains(errw, "orch: no such task: t22 (did you mean \"t2\"?)\n/task list shows the tasks\n") ||
		strings.Count(errw, "/task list shows the tasks") != 3 || strings.Contains(errw, "orch list") {
		t.Errorf("bad switches' hints:\n%s", errw)
	}
	if cur, _ := p.Current(); cur != "t1" {
		t.Errorf("current task %q, want t1", cur)
	}
	want := [][]string{{"diff"}, {"diff", "--no-pager"}}
	if got := f.got(); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("ran %q, want %q", got, want)
	}
}

// An interrupt cancels the running command only: the session reads the
// next line.
func TestRunInterruptCancelsCommand(t *testing.T) {
	dir, _ := newProject(t, true)
	f := &fakeOrch{started: make(chan string, 4)}
	intr := make(chan os.Signal, 1)
	in, feed := io.Pipe()
	out, errw := &syncbuf.Buffer{}, &syncbuf.Buffer{}
	done := make(chan int, 1)
	go func() {
		done <- Run(context.Background(), Config{Run: f.run, Dir: dir, Stdin: in, Stdout: out, Stderr: errw, Interrupts: intr})
	}()
	fmt.Fprintln(feed, "/test")
	if got := <-f.started; got != "test" {
		t.Fatalf("started %q", got)
	}
	intr <- os.Interrupt
	waitFor(t, errw, "cancelled: /test (exit 1)", 10*time.Second)
	fmt.Fprintln(feed, "/status")
	if got := <-f.started; got != "status" {
		t.Fatalf("started %q after the interrupt", got)
	}
	waitFor(t, out, `ran ["status"]`, 10*time.Second)
	feed.Close()
	// Piped: the cancelled /test failed (exit 1), and the session says so.
	if code := <-done; code != ExitError {
		t.Errorf("exit %d, want %d (the cancelled /test)", code, ExitError)
	}
	for _, want := range []string{"cancelling /test …", "orch: test: context canceled"} {
		if !strings.Contains(errw.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errw.String())
		}
	}
}

// Without a terminal, an interrupt while waiting for a line ends the
// session; so does the end of ctx (SIGTERM), even during a command.
func TestRunEnds(t *testing.T) {
	dir, _ := newProject(t, true)
	t.Run("interrupt while waiting", func(t *testing.T) {
		intr := make(chan os.Signal, 1)
		intr <- os.Interrupt
		in, feed := io.Pipe()
		defer feed.Close()
		if code, _, _ := runSession(t, dir, &fakeOrch{}, in, intr); code != ExitOK {
			t.Errorf("exit %d", code)
		}
	})
	t.Run("ctx while waiting", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		in, feed := io.Pipe()
		defer feed.Close()
		if code := Run(ctx, Config{Run: (&fakeOrch{}).run, Dir: dir, Stdin: in, Stdout: io.Discard, Stderr: io.Discard}); code != ExitError {
			t.Errorf("exit %d", code)
		}
	})
	t.Run("ctx during a command", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		f := &fakeOrch{started: make(chan string, 1)}
		go func() { <-f.started; cancel() }()
		code := Run(ctx, Config{Run: f.run, Dir: dir, Stdin: strings.NewReader("/test\n/status\n"), Stdout: io.Discard, Stderr: io.Discard})
		if code != ExitError {
			t.Errorf("exit %d", code)
		}
		if got := f.got(); len(got) != 1 {
			t.Errorf("ran %q after the end", got)
		}
	})
}

// A panicking command is reported and the session goes on.
func TestRunSurvivesPanic(t *testing.T) {
	dir, _ := newProject(t, true)
	f := &fakeOrch{}
	code, out, errw := runSession(t, dir, f, strings.NewReader("/codegen\n/status\n"), nil)
	_ = out
	if code != ExitError || !strings.Contains(errw, `orch: internal error in "/codegen": boom`) {
		t.Errorf("exit %d, stderr:\n%s", code, errw)
	}
	if got := f.got(); len(got) != 2 {
		t.Errorf("ran %q", got)
	}
}

func TestLabel(t *testing.T) {
	tests := []struct{ in, want string }{
		{"  /test  ", "/test"},
		{"/next  --to\ttest", "/next --to test"},
		{`/next --override "a very long reason that goes on and on" --to test`, `/next --override "a very long reason th…`},
		{"/x \x1b[2J", "/x ^[[2J"},
	}
	for _, tt := range tests {
		if got := label(tt.in); got != tt.want {
			t.Errorf("label(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
