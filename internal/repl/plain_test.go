package repl_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/cli"
)

// Without a terminal the REPL reads one command per line from its input
// and runs each through orch's command tree; the output is plain.
func TestPlainSessionRunsCommands(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	input := strings.Join([]string{
		"add retry with backoff",
		"/status",
		`/next --override "plan checked on paper" --to codegen`,
		"/diff",
		"/next --to codegen",
		"/log",
		"/task list",
		"/quit",
	}, "\n")
	var out, errw strings.Builder
	code := cli.RunREPL(context.Background(), cli.Env{Stdin: strings.NewReader(input), Stdout: &out, Stderr: &errw, Dir: p.dir, Getenv: func(string) string { return "" }, Now: time.Now})
	// The refused /next --to codegen (exit 3) is the last failing line.
	if code != 3 {
		t.Fatalf("exit %d, want 3\n%s\n%s", code, out.String(), errw.String())
	}
	const id = "0001-add-retry-with-backoff"
	for _, want := range []string{
		"created task " + id + " in phase planning",
		"task " + id + "  phase planning",
		id + ": planning → codegen by override (plan checked on paper)",
		"planning → codegen  (orch next --override)  plan checked on paper", // orch log
		id + "  codegen",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, out.String())
		}
	}
	for _, want := range []string{
		"task " + id + " has no code/diff.patch yet",
		"orch: codegen is not one step from codegen", // /next --to codegen, refused
	} {
		if !strings.Contains(errw.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errw.String())
		}
	}
	if s := out.String() + errw.String(); strings.Contains(s, "\x1b") || strings.Contains(s, "orch>") {
		t.Errorf("escape codes or prompts without a terminal:\n%q", s)
	}
	if phase, _ := p.state(id); phase != "codegen" {
		t.Errorf("phase %s", phase)
	}
}

// A piped session that ran only good commands exits 0; one whose command
// failed exits with that command's code even when later lines succeed.
func TestPlainSessionExitCode(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	run := func(lines ...string) (int, string) {
		var out, errw strings.Builder
		code := cli.RunREPL(context.Background(), cli.Env{Stdin: strings.NewReader(strings.Join(lines, "\n")), Stdout: &out, Stderr: &errw, Dir: p.dir, Getenv: func(string) string { return "" }, Now: time.Now})
		return code, errw.String()
	}
	if code, errw := run("add retry", "/status", "/verify"); code != 0 {
		t.Errorf("good session: exit %d\n%s", code, errw)
	}
	code, errw := run("/next", "/status")
	if code != 3 || !strings.Contains(errw, "orch: repl: the last failing command exited 3") {
		t.Errorf("/next refused then /status: exit %d, want 3\n%s", code, errw)
	}
}

// /show without an argument lists the choices (not cobra's "accepts 1
// arg(s)"), a mistyped one gets a did-you-mean, and the plan rendered in
// the REPL names its commands in slash syntax (/answer, not orch answer).
func TestPlainSessionShow(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	var out, errw strings.Builder
	input := strings.Join([]string{"add retry with backoff", "/show", "/show paln"}, "\n")
	cli.RunREPL(context.Background(), cli.Env{Stdin: strings.NewReader(input), Stdout: &out, Stderr: &errw, Dir: p.dir, Getenv: func(string) string { return "" }, Now: time.Now})
	for _, want := range []string{
		"orch: show: which artifact? one of brief, plan, plan-review, diff, code-review, test, advice, summary, regression\nfor example `/show plan`\n",
		"orch: show: unknown artifact \"paln\" (did you mean \"plan\"?): one of brief, plan,",
	} {
		if !strings.Contains(errw.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errw.String())
		}
	}
	if s := errw.String(); strings.Contains(s, "accepts 1 arg") || strings.Contains(s, "orch show") {
		t.Errorf("cobra's message or shell syntax in the REPL:\n%s", s)
	}

	id := "0001-add-retry-with-backoff"
	p.write(".orch/tasks/"+id+"/planning/plan.md", "# Retry\n\n## Questions\n\n- **q1** (blocking): How many?\n  - **Open**: answer with `orch answer q1 TEXT`\n")
	out.Reset()
	errw.Reset()
	cli.RunREPL(context.Background(), cli.Env{Stdin: strings.NewReader("/show plan\n"), Stdout: &out, Stderr: &errw, Dir: p.dir, Getenv: func(string) string { return "" }, Now: time.Now})
	if s := out.String(); !strings.Contains(s, "answer with `/answer q1 TEXT`") || strings.Contains(s, "orch answer") {
		t.Errorf("the plan in the REPL:\n%s\n%s", s, errw.String())
	}
}

// A refusal made below the command line quotes shell commands; the REPL
// shows them in slash syntax.
func TestPlainSessionRefusalInSlashSyntax(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	var out, errw strings.Builder
	input := strings.Join([]string{"add retry with backoff", `/next --override "dropped" --to done`, "/test", "/status"}, "\n")
	cli.RunREPL(context.Background(), cli.Env{Stdin: strings.NewReader(input), Stdout: &out, Stderr: &errw, Dir: p.dir, Getenv: func(string) string { return "" }, Now: time.Now})
	if s := errw.String() + out.String(); !strings.Contains(s, "`/redo test` re-opens it") || !strings.Contains(s, "`/redo accept`") || strings.Contains(s, "`orch ") {
		t.Errorf("stderr:\n%s\n%s", s, out.String())
	}
}
