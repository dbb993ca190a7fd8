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

	tm.step("add a retry helper"+enter, "created task 0001-add-a-retry-helper in phase planning", "orch 0001-add-a-retry-helper [planning]> ")

	tm.step("/status"+enter, "task 0001-add-a-retry-helper  phase planning", "[planning]> ")

	// Tab completes a command, then its argument; Ctrl-C drops the line.
	tm.step("/revi"+tab, "]> /review ")
	tm.step("c"+tab, "]> /review code ")
	tm.step(ctrlC, "^C", "[planning]> ")
	// Two commands share /rev: Tab lists both.
	tm.step("/rev"+tab, "/revert")
	tm.step(ctrlC+ctrlC, "[planning]> ")
	if _, actors := p.state("0001-add-a-retry-helper"); actors["review"] != nil {
		t.Fatalf("a cleared line ran a command: %v", actors)
	}

	tm.step(`/next --override "plan reviewed by hand" --to test`+enter, "planning → test by override (plan reviewed by hand)", "skipped phases: [plan_review codegen review]", "orch 0001-add-a-retry-helper [test]> ")
	if phase, _ := p.state("0001-add-a-retry-helper"); phase != "test" {
		t.Fatalf("phase %s after the override", phase)
	}

	// Plain text outside planning says what it means.
	tm.step("hello"+enter, "is in test with no open question")
	tm.step("/bogus"+enter, "unknown command /bogus: /help lists the commands")

	// Task ids complete after /task switch.
	tm.step("/task sw"+tab, "]> /task switch ")
	tm.step(tab, "]> /task switch 0001-add-a-retry-helper ")
	tm.step(enter, "current task: 0001-add-a-retry-helper (test)")

	tm.quit()
	p.verify()
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
	// An earlier run's report: the runner failed.
	p.write(".orch/tasks/t1/test/report.json", `{"status":"error","overall_pass":false,"summary":{"passed":0,"failed":0,"skipped":0,"error":1},"suites":[],"error":"an earlier runner failure"}`)

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

	tm.step(ctrlC, "cancelling /test", "cancelled: /test (exit 130)", "orch t1 [test]> ")
	if ev := p.lastEvent("t1", "phase_finished"); ev["phase"] != "test" || ev["status"] != "cancelled" {
		t.Fatalf("the run is not recorded as cancelled: %v", ev)
	}
	if _, actors := p.state("t1"); actors["test"]["status"] == "running" {
		t.Fatalf("test actor still running after Ctrl-C: %v", actors["test"])
	}

	// The session goes on; status leads with the cancellation, and the
	// step is to run the tests again, not the earlier run's error.
	tm.step("/status"+enter, "task t1  phase test", "last test run: cancelled, nothing of it recorded", "run: /test  (the last run was cancelled: run it again)", "[test]> ")
	tm.quit()
	if n := p.kinds("t1"); n["phase_started"] != 1 || n["phase_finished"] != 1 {
		t.Errorf("transcript events: %v", n)
	}
	p.verify()
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
	tm.quit()
	p.verify()
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
	tm.step("/accept"+enter, "decision: [a]ccept, [c]hanges requested, [r]eject, re[v]ert? ")
	tm.step("r"+enter, "reason: ")
	tm.step("wrong approach"+enter, "decision recorded: rejected", "orch t1 [accept]> ")
	tm.step("/next"+enter, "accept → revert", "orch t1 [revert]> ")
	tm.quit()
}

// /accept binds the decision to the evidence it showed: when the task
// moves on while the person reads it and types, nothing is recorded and
// the refusal says what changed.
func TestTerminalAcceptStale(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.mustOrch("new", "--id", "t1", "add notes")
	p.write(".orch/tasks/t1/planning/planning.ai.json", `{"id":"t1","title":"Notes","brief":"add notes","file_plan":[{"path":"notes.txt","intent":"create"}]}`)
	p.mustOrch("next", "--override", "set up by the test", "--to", "accept")
	tm := p.startREPL()
	tm.waitFor("orch t1 [accept]> ", wait)
	tm.step("/accept"+enter, "revision 2, no diff", "decision: [a]ccept, [c]hanges requested, [r]eject, re[v]ert? ")
	// Meanwhile, from another terminal.
	p.mustOrch("redo", "accept", "--reason", "someone looks again")
	tm.step("r"+enter, "reason: ")
	tm.step("wrong approach"+enter, "the task changed after revision 2 was shown", "accept was redone", "review it again", "orch t1 [accept]> ")
	if _, err := os.Stat(filepath.Join(p.dir, ".orch", "tasks", "t1", "accept", "decision.json")); err == nil {
		t.Error("a decision was recorded")
	}
	tm.quit()
}

// SIGTERM ends the session, at the prompt or during a command.
func TestTerminalSIGTERM(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.mustOrch("new", "--id", "t1", "add notes")
	tm := p.startREPL()
	tm.waitFor("orch t1 [planning]> ", wait)
	tm.step("/sta", "]> /sta")
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
	tm.step("add Reverse to textkit"+enter, "[planning]> ")

	tm.step("/plan"+enter, "q1: Reverse bytes or runes?", "── planning/plan.md ──", "Add Reverse to textkit", "[planning]> ")

	tm.step("runes, not bytes"+enter, "answered q1", "no open blocking question left", "[planning]> ")

	tm.step("/plan"+enter, "review_ready", "── planning/plan.md ──", "reverse.go", "[planning]> ")

	tm.step("/next"+enter, "planning → plan_review", "[plan_review]> ")
	tm.step("/review plan"+enter, "verdict: ok\n", "── review/plan-review.md ──", "small, clear plan", "[plan_review]> ")
	tm.quit()
	raw := tm.rawOutput()
	if !strings.Contains(raw, "\x1b[1m") {
		t.Errorf("the plan's headings were not rendered in bold")
	}
	p.verify()
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
	tm.step("/diff"+enter, "PAGER WAITS")
	tm.step("pager key"+enter, "PAGER DONE", "orch t1 [planning]> ")
	data, err := os.ReadFile(filepath.Join(rec, "key"))
	if err != nil || string(data) != "pager key\n" {
		t.Fatalf("the pager read %q (%v): the line editor took its keys", data, err)
	}
	in, _ := os.ReadFile(filepath.Join(rec, "in"))
	if !strings.Contains(string(in), "\x1b[32m+hello\x1b[0m") {
		t.Errorf("the pager got %q, not the coloured diff", in)
	}

	// The line editor reads again: /log runs, through the pager too.
	tm.step("/log"+enter, "PAGER WAITS")
	tm.step("second"+enter, "PAGER DONE", "orch t1 [planning]> ")
	if in, _ := os.ReadFile(filepath.Join(rec, "in")); !strings.Contains(string(in), "task created in planning") {
		t.Errorf("the pager got %q, not the log", in)
	}
	if data, _ := os.ReadFile(filepath.Join(rec, "key")); string(data) != "second\n" {
		t.Errorf("second pager read %q", data)
	}
	tm.step("/status"+enter, "task t1  phase planning")
	tm.quit()
}
