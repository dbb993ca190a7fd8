package repl_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/orchdev/orch/internal/proctest"
)

// A person's session: plain text starts a task, /status shows its phase,
// Tab completes, Ctrl-C clears the line, an override moves the task and
// the prompt follows, Ctrl-D leaves with exit 0.
func TestTerminalSession(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	tm := p.startREPL()
	tm.waitFor("no current task: type what the change should do", wait)
	tm.waitFor("orch> ", wait)

	tm.typeKeys("add a retry helper" + enter)
	tm.waitFor("created task 0001-add-a-retry-helper in phase planning", wait)
	tm.waitFor("orch 0001-add-a-retry-helper [planning]> ", wait)

	tm.typeKeys("/status" + enter)
	tm.waitFor("task 0001-add-a-retry-helper  phase planning", wait)
	tm.waitFor("[planning]> ", wait)

	// Tab completes a command, then its argument; Ctrl-C drops the line.
	tm.typeKeys("/revi" + tab)
	tm.waitFor("]> /review ", wait)
	tm.typeKeys("c" + tab)
	tm.waitFor("]> /review code ", wait)
	tm.typeKeys(ctrlC)
	tm.waitFor("^C", wait)
	tm.waitFor("[planning]> ", wait)
	// Two commands share /rev: Tab lists both.
	tm.typeKeys("/rev" + tab)
	tm.waitFor("/revert", wait)
	tm.typeKeys(ctrlC + ctrlC)
	tm.waitFor("[planning]> ", wait)
	if _, actors := p.state("0001-add-a-retry-helper"); actors["review"] != nil {
		t.Fatalf("a cleared line ran a command: %v", actors)
	}

	tm.typeKeys(`/next --override "plan reviewed by hand" --to test` + enter)
	tm.waitFor("planning → test by override (plan reviewed by hand)", wait)
	tm.waitFor("skipped phases: [plan_review codegen review]", wait)
	tm.waitFor("orch 0001-add-a-retry-helper [test]> ", wait)
	if phase, _ := p.state("0001-add-a-retry-helper"); phase != "test" {
		t.Fatalf("phase %s after the override", phase)
	}

	// Plain text outside planning says what it means.
	tm.typeKeys("hello" + enter)
	tm.waitFor("is in test with no open question", wait)
	tm.typeKeys("/bogus" + enter)
	tm.waitFor("unknown command /bogus: /help lists the commands", wait)

	// Task ids complete after /task switch.
	tm.typeKeys("/task sw" + tab)
	tm.waitFor("]> /task switch ", wait)
	tm.typeKeys(tab)
	tm.waitFor("]> /task switch 0001-add-a-retry-helper ", wait)
	tm.typeKeys(enter)
	tm.waitFor("current task: 0001-add-a-retry-helper (test)", wait)

	tm.typeKeys(ctrlD)
	if code := tm.exit(wait); code != 0 {
		t.Fatalf("Ctrl-D: exit %d", code)
	}
	if code, out := p.orch("verify"); code != 0 {
		t.Fatalf("orch verify: %d\n%s", code, out)
	}
}

// The history persists across sessions: the up arrow recalls the last
// session's command.
func TestTerminalHistory(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.mustOrch("new", "--id", "t1", "add retry")
	first := p.startREPL()
	first.waitFor("orch t1 [planning]> ", wait)
	first.typeKeys("/log" + enter)
	first.waitFor("task created in planning", wait)
	first.waitFor("[planning]> ", wait)
	first.typeKeys(ctrlD)
	if code := first.exit(wait); code != 0 {
		t.Fatalf("exit %d", code)
	}
	data, err := os.ReadFile(filepath.Join(p.dir, ".orch", "repl_history"))
	if err != nil || !strings.Contains(string(data), "/log") {
		t.Fatalf("history file: %q, %v", data, err)
	}

	second := p.startREPL()
	second.waitFor("orch t1 [planning]> ", wait)
	second.typeKeys(up)
	second.waitFor("]> /log", wait)
	second.typeKeys(enter)
	second.waitFor("task created in planning", wait)
	second.waitFor("[planning]> ", wait)
	second.typeKeys(ctrlD)
	if code := second.exit(wait); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// Ctrl-C while /test runs a 30-second suite cancels the command: the suite
// stops, the phase is recorded as cancelled, the prompt returns. While the
// suite runs, the CLI in another process is refused.
func TestTerminalCancelTest(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	fifo := filepath.Join(p.home, "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// The suite says it started through the FIFO, then sleeps.
	p.write(".orch/config.toml", "[test]\nsandbox = \"none\"\n\n[[test.suites]]\nname = \"slow\"\ncommand = \"echo started > '"+fifo+"'; exec sleep 30\"\n")
	p.mustOrch("new", "--id", "t1", "add notes")
	p.write(".orch/tasks/t1/planning/planning.ai.json", `{"id":"t1","title":"Notes","brief":"add notes","file_plan":[{"path":"notes.txt","intent":"create"}]}`)
	p.write(".orch/tasks/t1/code/files/notes.txt", "hello\n")
	p.write(".orch/tasks/t1/code/diff.patch", "diff --git a/notes.txt b/notes.txt\nnew file mode 100644\n--- /dev/null\n+++ b/notes.txt\n@@ -0,0 +1 @@\n+hello\n")
	p.mustOrch("next", "--override", "set up by the test", "--to", "test")

	// Open the FIFO read-write so that opening never blocks; the read does
	// until the suite writes.
	started := make(chan string, 1)
	r, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	go func() {
		buf := make([]byte, 64)
		n, _ := r.Read(buf)
		started <- string(buf[:n])
	}()

	tm := p.startREPL()
	tm.waitFor("orch t1 [test]> ", wait)
	tm.typeKeys("/test" + enter)
	select {
	case <-started:
	case <-tm.Exited():
		t.Fatalf("the REPL exited; screen:\n%s", tm.since())
	case <-timer(t, wait):
		t.Fatalf("the suite did not start; screen:\n%s", tm.since())
	}
	if _, actors := p.state("t1"); actors["test"]["status"] != "running" {
		t.Fatalf("test actor while the suite runs: %v", actors["test"])
	}
	// The CLI, in another process, cannot move the task meanwhile.
	if code, out := p.orch("next", "--from", "test"); code != 3 || !strings.Contains(out, "test is running for task t1") {
		t.Fatalf("orch next during the REPL's /test: exit %d\n%s", code, out)
	}

	tm.typeKeys(ctrlC)
	tm.waitFor("cancelling /test", wait)
	tm.waitFor("cancelled: /test", wait)
	tm.waitFor("orch t1 [test]> ", wait)
	if ev := p.lastEvent("t1", "phase_finished"); ev["phase"] != "test" || ev["status"] != "cancelled" {
		t.Fatalf("the run is not recorded as cancelled: %v", ev)
	}
	if _, actors := p.state("t1"); actors["test"]["status"] == "running" {
		t.Fatalf("test actor still running after Ctrl-C: %v", actors["test"])
	}

	// The session goes on.
	tm.typeKeys("/status" + enter)
	tm.waitFor("task t1  phase test", wait)
	tm.waitFor("[test]> ", wait)
	tm.typeKeys(ctrlD)
	if code := tm.exit(wait); code != 0 {
		t.Fatalf("Ctrl-D: exit %d", code)
	}
	if n := p.kinds("t1"); n["phase_started"] != 1 || n["phase_finished"] != 1 {
		t.Errorf("transcript events: %v", n)
	}
	if code, out := p.orch("verify"); code != 0 {
		t.Fatalf("orch verify: %d\n%s", code, out)
	}
}

// The REPL's /next and CLI processes race on one task: the task lock lets
// exactly one move it; the others are refused (3) or find it busy (5).
func TestTerminalNextRace(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.mustOrch("new", "--id", "t1", "add notes")
	p.write(".orch/tasks/t1/planning/planning.ai.json", `{"id":"t1","title":"Notes","brief":"add notes","file_plan":[{"path":"notes.txt","intent":"create"}]}`)
	tm := p.startREPL()
	tm.waitFor("orch t1 [planning]> ", wait)

	moved, _ := proctest.Race(t, 6, func() (int, string) {
		return p.orch("next", "--from", "planning", "--wait", "20s")
	}, func() { tm.typeKeys("/next --from planning --wait 20s" + enter) })
	tm.waitFor("[plan_review]> ", wait)
	screen := tm.since()
	text := tm.screen()
	replMoved := strings.Contains(text, "t1: planning → plan_review")
	if replMoved {
		moved++
	}
	if moved != 1 {
		t.Fatalf("%d movers (REPL moved: %v), want 1; screen:\n%s", moved, replMoved, screen)
	}
	if k := p.kinds("t1"); k["transition"] != 1 {
		t.Fatalf("transitions in the transcript: %v", k)
	}
	tm.typeKeys(ctrlD)
	if code := tm.exit(wait); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if code, out := p.orch("verify"); code != 0 {
		t.Fatalf("orch verify: %d\n%s", code, out)
	}
}

// /accept without --verdict asks on the terminal: the command reads the
// same terminal the line editor does, and the session resumes after.
func TestTerminalAcceptAsks(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.mustOrch("new", "--id", "t1", "add notes")
	p.write(".orch/tasks/t1/planning/planning.ai.json", `{"id":"t1","title":"Notes","brief":"add notes","file_plan":[{"path":"notes.txt","intent":"create"}]}`)
	p.mustOrch("next", "--override", "set up by the test", "--to", "accept")
	tm := p.startREPL()
	tm.waitFor("orch t1 [accept]> ", wait)
	tm.typeKeys("/accept" + enter)
	tm.waitFor("decision: [a]ccept, [c]hanges requested, [r]eject, re[v]ert? ", wait)
	tm.typeKeys("r" + enter)
	tm.waitFor("reason: ", wait)
	tm.typeKeys("wrong approach" + enter)
	tm.waitFor("decision recorded: rejected", wait)
	tm.waitFor("orch t1 [accept]> ", wait)
	tm.typeKeys("/next" + enter)
	tm.waitFor("accept → revert", wait)
	tm.waitFor("orch t1 [revert]> ", wait)
	tm.typeKeys(ctrlD)
	if code := tm.exit(wait); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// SIGTERM ends the session, at the prompt or during a command.
func TestTerminalSIGTERM(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.mustOrch("new", "--id", "t1", "add notes")
	tm := p.startREPL()
	tm.waitFor("orch t1 [planning]> ", wait)
	tm.typeKeys("/sta")
	tm.waitFor("]> /sta", wait)
	if err := tm.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := tm.exit(wait); code != 1 {
		t.Fatalf("SIGTERM at the prompt: exit %d", code)
	}
	tm.waitFor("orch: repl: terminated signal received", wait)
}

// Planning in the REPL with a scripted model: /plan shows the question and
// the plan rendered as Markdown, plain text answers the question, /next
// and /review plan follow, and the review is rendered too.
func TestTerminalPlanning(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	script, err := os.ReadFile(filepath.Join("testdata", "plan-script.json"))
	if err != nil {
		t.Fatal(err)
	}
	p.write(".orch/script.json", string(script))
	p.write(".orch/config.toml", "[providers.default]\ntype = \"script\"\nscript = \".orch/script.json\"\n")
	tm := p.startREPL()
	tm.waitFor("orch> ", wait)
	tm.typeKeys("add Reverse to textkit" + enter)
	tm.waitFor("[planning]> ", wait)

	tm.typeKeys("/plan" + enter)
	tm.waitFor("q1: Reverse bytes or runes?", wait)
	tm.waitFor("── planning/plan.md ──", wait)
	tm.waitFor("Add Reverse to textkit", wait)
	tm.waitFor("[planning]> ", wait)

	tm.typeKeys("runes, not bytes" + enter)
	tm.waitFor("answered q1", wait)
	tm.waitFor("no open blocking question left", wait)
	tm.waitFor("[planning]> ", wait)

	tm.typeKeys("/plan" + enter)
	tm.waitFor("review_ready", wait)
	tm.waitFor("── planning/plan.md ──", wait)
	tm.waitFor("reverse.go", wait)
	tm.waitFor("[planning]> ", wait)

	tm.typeKeys("/next" + enter)
	tm.waitFor("planning → plan_review", wait)
	tm.waitFor("[plan_review]> ", wait)
	tm.typeKeys("/review plan" + enter)
	tm.waitFor("verdict: ok=true blocked=false", wait)
	tm.waitFor("── review/plan-review.md ──", wait)
	tm.waitFor("small, clear plan", wait)
	tm.waitFor("[plan_review]> ", wait)
	tm.typeKeys(ctrlD)
	if code := tm.exit(wait); code != 0 {
		t.Fatalf("exit %d", code)
	}
	raw := tm.rawOutput()
	if !strings.Contains(raw, "\x1b[1m") {
		t.Errorf("the plan's headings were not rendered in bold")
	}
	if code, out := p.orch("verify"); code != 0 {
		t.Fatalf("orch verify: %d\n%s", code, out)
	}
}

// /diff and /log page long output through $ORCH_PAGER in a terminal: the
// pager gets the terminal and the keys typed while it runs (the line
// editor does not take them), then the prompt returns and works.
func TestTerminalPager(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	rec := t.TempDir()
	pager := filepath.Join(t.TempDir(), "fake-pager")
	script := `#!/bin/sh
cat > "` + rec + `/in"
printf 'PAGER WAITS\n'
IFS= read -r key < /dev/tty
printf '%s\n' "$key" > "` + rec + `/key"
printf 'PAGER DONE\n'
`
	if err := os.WriteFile(pager, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	p.replEnv = []string{"ORCH_PAGER=" + pager}
	p.mustOrch("new", "--id", "t1", "add notes")
	p.write(".orch/tasks/t1/code/diff.patch", "diff --git a/notes.txt b/notes.txt\nnew file mode 100644\n--- /dev/null\n+++ b/notes.txt\n@@ -0,0 +1 @@\n+hello\n")

	tm := p.startREPL()
	tm.waitFor("orch t1 [planning]> ", wait)
	tm.typeKeys("/diff" + enter)
	tm.waitFor("PAGER WAITS", wait)
	tm.typeKeys("pager key" + enter)
	tm.waitFor("PAGER DONE", wait)
	tm.waitFor("orch t1 [planning]> ", wait)
	data, err := os.ReadFile(filepath.Join(rec, "key"))
	if err != nil || string(data) != "pager key\n" {
		t.Fatalf("the pager read %q (%v): the line editor took its keys", data, err)
	}
	in, _ := os.ReadFile(filepath.Join(rec, "in"))
	if !strings.Contains(string(in), "\x1b[32m+hello\x1b[0m") {
		t.Errorf("the pager got %q, not the coloured diff", in)
	}

	// The line editor reads again: /log runs, through the pager too.
	tm.typeKeys("/log" + enter)
	tm.waitFor("PAGER WAITS", wait)
	tm.typeKeys("second" + enter)
	tm.waitFor("PAGER DONE", wait)
	tm.waitFor("orch t1 [planning]> ", wait)
	if in, _ := os.ReadFile(filepath.Join(rec, "in")); !strings.Contains(string(in), "task created in planning") {
		t.Errorf("the pager got %q, not the log", in)
	}
	if data, _ := os.ReadFile(filepath.Join(rec, "key")); string(data) != "second\n" {
		t.Errorf("second pager read %q", data)
	}
	tm.typeKeys("/status" + enter)
	tm.waitFor("task t1  phase planning", wait)
	tm.typeKeys(ctrlD)
	if code := tm.exit(wait); code != 0 {
		t.Fatalf("Ctrl-D: exit %d", code)
	}
}
