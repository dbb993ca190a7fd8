package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/orchdev/orch/internal/ptytest"
)

// inPTY runs orch in dir in a 40x100 pseudo-terminal (stdin, stdout and
// stderr all the terminal) and returns what the terminal showed and the
// exit code.
func inPTY(t *testing.T, dir string, env []string, args ...string) (screen string, code int) {
	t.Helper()
	cmd := orchCmd(dir, append([]string{"TERM=xterm", "NO_COLOR=", "ORCH_PAGER=", "PAGER="}, env...), args...)
	// LESS is the pager's business: unset unless the test sets it.
	cmd.Env = slices.DeleteFunc(cmd.Env, func(kv string) bool { return strings.HasPrefix(kv, "LESS=") })
	for _, kv := range env {
		if strings.HasPrefix(kv, "LESS=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	tm := ptytest.Start(t, cmd, 40, 100)
	out := tm.ReadAll(time.Minute) // to the end: orch and its pager have exited
	return strings.ReplaceAll(out, "\r\n", "\n"), tm.Exit(time.Minute)
}

// fakePager writes a pager that records what it got (its stdin in
// REC/in, LESS and whether its stdout is a terminal in REC/env) and says
// so on the terminal; it returns the pager's path and REC.
func fakePager(t *testing.T) (path, rec string) {
	t.Helper()
	rec = t.TempDir()
	path = filepath.Join(t.TempDir(), "fake-pager")
	writeFile(t, path, `#!/bin/sh
tty=no; if [ -t 1 ]; then tty=tty; fi
cat > "`+rec+`/in"
printf 'LESS=%s\nstdout=%s\n' "$LESS" "$tty" > "`+rec+`/env"
echo "fake pager showed $(wc -l < "`+rec+`/in") lines"
`)
	if err := os.Chmod(path, 0o755); err != nil {
		t.Fatal(err)
	}
	return path, rec
}

func readRec(t *testing.T, rec, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(rec, name))
	if err != nil {
		t.Fatalf("the pager recorded no %s: %v", name, err)
	}
	return string(data)
}

// orch log in a terminal goes through the pager (ORCH_PAGER, then PAGER,
// with git's LESS default), its lines cut to the terminal's width; never
// with --no-pager or without a terminal, where lines are cut at 200
// characters unless -v.
func TestPagerLog(t *testing.T) {
	dir, _ := newProject(t)
	long := "checked by hand: " + strings.Repeat("the plan was read line by line ", 20)
	if code, out := runOrch(t, dir, nil, "next", "--override", long, "--to", "codegen"); code != 0 {
		t.Fatalf("override: %d %s", code, out)
	}
	pagerPath, rec := fakePager(t)

	screen, code := inPTY(t, dir, []string{"ORCH_PAGER=" + pagerPath}, "log")
	if code != 0 || !strings.Contains(screen, "fake pager showed 2 lines") {
		t.Fatalf("orch log in a terminal: exit %d, screen:\n%s", code, screen)
	}
	in := readRec(t, rec, "in")
	for _, l := range strings.Split(strings.TrimSuffix(in, "\n"), "\n") {
		if n := utf8.RuneCountInString(sgr.ReplaceAllString(l, "")); n > 100 {
			t.Errorf("a paged log line is %d columns in a 100-column terminal: %q", n, l)
		}
	}
	if !strings.Contains(in, "planning → codegen\x1b[0m  \x1b[36m(orch next --override)\x1b[0m  checked by hand: the") || !strings.Contains(in, "…\n") {
		t.Errorf("the paged log:\n%s", in)
	}
	if env := readRec(t, rec, "env"); env != "LESS=FRX\nstdout=tty\n" {
		t.Errorf("the pager's LESS and stdout: %q", env)
	}

	// PAGER when ORCH_PAGER is unset; a LESS of the user's is kept.
	os.Remove(filepath.Join(rec, "in"))
	if screen, _ := inPTY(t, dir, []string{"PAGER=" + pagerPath, "LESS=-i"}, "log"); !strings.Contains(screen, "fake pager showed") {
		t.Fatalf("PAGER not used:\n%s", screen)
	}
	if env := readRec(t, rec, "env"); env != "LESS=-i\nstdout=tty\n" {
		t.Errorf("the pager's LESS: %q", env)
	}

	// --no-pager, and PAGER=cat: straight to the terminal.
	for _, tc := range []struct {
		env  []string
		args []string
	}{
		{[]string{"ORCH_PAGER=" + pagerPath}, []string{"--no-pager", "log"}},
		{[]string{"ORCH_PAGER=cat"}, []string{"log"}},
	} {
		os.Remove(filepath.Join(rec, "in"))
		screen, code := inPTY(t, dir, tc.env, tc.args...)
		if code != 0 || strings.Contains(screen, "fake pager") || !strings.Contains(screen, "planning → codegen") {
			t.Errorf("%v %v: exit %d, screen:\n%s", tc.env, tc.args, code, screen)
		}
		if _, err := os.Stat(filepath.Join(rec, "in")); err == nil {
			t.Errorf("%v %v: the pager ran", tc.env, tc.args)
		}
	}

	// No terminal: no pager, lines cut at 200 characters; -v whole.
	code, out := runOrch(t, dir, []string{"ORCH_PAGER=" + pagerPath}, "log")
	if code != 0 || strings.Contains(out, "fake pager") {
		t.Fatalf("piped orch log: %d\n%s", code, out)
	}
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if n := utf8.RuneCountInString(l); n > logLineCap {
			t.Errorf("a piped log line is %d characters: %q", n, l)
		}
	}
	code, out = runOrch(t, dir, nil, "log", "-v")
	if code != 0 || !strings.Contains(out, strings.TrimSpace(long)+"; skipped plan_review\n") {
		t.Errorf("orch log -v does not print the whole reason: %d\n%s", code, out)
	}
}

// orch diff and orch show in a terminal: coloured and laid out through
// the pager; NO_COLOR and TERM=dumb turn the colours off, never the
// layout.
func TestPagerShowColours(t *testing.T) {
	dir, taskDir := newProject(t)
	writeFile(t, filepath.Join(taskDir, "code", "diff.patch"), "diff --git a/a.go b/a.go\n--- a/a.go\n+++ b/a.go\n@@ -1 +1 @@\n-old\n+new\n")
	writeFile(t, filepath.Join(taskDir, "review", "plan-review.md"), "# Plan review\n\n| reviewer | ok |\n|---|---|\n| risk | **no** |\n")
	pagerPath, rec := fakePager(t)
	env := []string{"ORCH_PAGER=" + pagerPath}

	if screen, code := inPTY(t, dir, env, "diff"); code != 0 || !strings.Contains(screen, "fake pager showed 6 lines") {
		t.Fatalf("orch diff: exit %d\n%s", code, screen)
	}
	if in := readRec(t, rec, "in"); !strings.Contains(in, "\x1b[32m+new\x1b[0m") || !strings.Contains(in, "\x1b[31m-old\x1b[0m") {
		t.Errorf("the paged diff is not coloured: %q", in)
	}
	if screen, code := inPTY(t, dir, env, "show", "plan-review"); code != 0 || !strings.Contains(screen, "fake pager showed") {
		t.Fatalf("orch show plan-review: exit %d\n%s", code, screen)
	}
	if in := readRec(t, rec, "in"); !strings.Contains(in, "│") || strings.Contains(in, "|---|") || !strings.Contains(in, "\x1b[1m") {
		t.Errorf("the plan review's table is not laid out and coloured: %q", in)
	}
	for _, off := range []string{"NO_COLOR=1", "TERM=dumb"} {
		for _, args := range [][]string{{"diff"}, {"show", "plan-review"}} {
			if screen, code := inPTY(t, dir, append(env, off), args...); code != 0 || !strings.Contains(screen, "fake pager showed") {
				t.Fatalf("%s orch %v: exit %d\n%s", off, args, code, screen)
			}
			in := readRec(t, rec, "in")
			if strings.Contains(in, "\x1b") {
				t.Errorf("%s orch %v: escape codes: %q", off, args, in)
			}
			if args[0] == "show" && !strings.Contains(in, "reviewer │ ok") {
				t.Errorf("%s orch show: the table is not laid out: %q", off, in)
			}
		}
	}
	// The test report: laid out and coloured through the pager, the
	// failing test by name with its output.
	writeFile(t, filepath.Join(taskDir, "test", "report.json"), failedReport)
	if screen, code := inPTY(t, dir, env, "show", "test"); code != 0 || !strings.Contains(screen, "fake pager showed") {
		t.Fatalf("orch show test: exit %d\n%s", code, screen)
	}
	if in := readRec(t, rec, "in"); !strings.Contains(in, "\x1b[31mtests failed\x1b[0m") || !strings.Contains(in, "example.com/calc TestAdd") || !strings.Contains(in, "calc_test.go:6: Add(1, 2) = -1, want 3") {
		t.Errorf("the test report is not laid out and coloured: %q", in)
	}
	if code, out := runOrch(t, dir, env, "show", "test"); code != 0 || out != failedReport {
		t.Errorf("piped orch show test is not the file as written: %d %q", code, out)
	}
	// An invalid report: exit 4 naming the file and field, no pager.
	writeFile(t, filepath.Join(taskDir, "test", "report.json"), `{"status":"done"}`)
	os.Remove(filepath.Join(rec, "in"))
	if screen, code := inPTY(t, dir, env, "show", "test"); code != 4 || !strings.Contains(screen, "test/report.json") || !strings.Contains(screen, "status") || !strings.Contains(screen, "the file as written: .orch/tasks/t1/test/report.json") {
		t.Errorf("invalid test report: exit %d\n%s", code, screen)
	}
	if _, err := os.Stat(filepath.Join(rec, "in")); err == nil {
		t.Errorf("the pager ran for an invalid test report")
	}
	// Piped: the file as written, no pager, no colour.
	code, out := runOrch(t, dir, env, "show", "plan-review")
	if code != 0 || !strings.Contains(out, "|---|---|") || strings.Contains(out, "\x1b") {
		t.Errorf("piped orch show: %d %q", code, out)
	}
	// Missing: exit 4, the command that writes it, and no pager.
	os.Remove(filepath.Join(rec, "in"))
	screen, code := inPTY(t, dir, env, "show", "code-review")
	if code != 4 || !strings.Contains(screen, "orch: task t1 has no review/code-review.md yet: `orch review code` writes it") {
		t.Errorf("missing code review: exit %d\n%s", code, screen)
	}
	if _, err := os.Stat(filepath.Join(rec, "in")); err == nil {
		t.Errorf("the pager ran for a missing artifact")
	}
}

// orch log reads like git log in a terminal: one coloured line per event
// (sequence, time, what moved from → to, the actor, the reason), the
// reason's control characters shown as text; orch status colours its
// edges' [yes] and [no]. NO_COLOR and a pipe: no colour, same words.
func TestColouredLogAndStatus(t *testing.T) {
	dir, _ := newProject(t)
	env := []string{"ORCH_PAGER=cat"}
	// Status: [yes] green, [no] red.
	screen, code := inPTY(t, dir, env, "status")
	if code != 0 || !strings.Contains(screen, "[\x1b[32myes\x1b[0m] → plan_review") {
		t.Errorf("orch status in a terminal: exit %d\n%q", code, screen)
	}
	if _, out := runOrch(t, dir, nil, "status"); !strings.Contains(out, "[yes] → plan_review") {
		t.Errorf("piped orch status:\n%s", out)
	}
	if code, out := runOrch(t, dir, nil, "next"); code != 0 {
		t.Fatalf("next: %d %s", code, out)
	}
	if code, out := runOrch(t, dir, nil, "next", "--override", "read \x1b[31mred", "--to", "review"); code != 0 {
		t.Fatalf("override: %d %s", code, out)
	}
	screen, code = inPTY(t, dir, env, "log")
	if code != 0 {
		t.Fatalf("orch log: exit %d\n%s", code, screen)
	}
	for _, want := range []string{
		"\x1b[33m   2\x1b[0m", // the sequence number, like git's hash
		"\x1b[32mplanning → plan_review\x1b[0m  \x1b[36m(orch)\x1b[0m  plan valid", // a transition, its actor and reason
		"\x1b[33moverride plan_review → review\x1b[0m  \x1b[36m(orch next --override)\x1b[0m  read ^[[31mred; skipp…",
		"\x1b[1mtask created in planning\x1b[0m  \x1b[36m(orch new)\x1b[0m",
	} {
		if !strings.Contains(screen, want) {
			t.Errorf("orch log in a terminal lacks %q:\n%q", want, screen)
		}
	}
	if strings.Contains(screen, "\x1b[31mred") {
		t.Errorf("the reason's escape reached the terminal:\n%q", screen)
	}
	if _, out := runOrch(t, dir, nil, "log"); !strings.Contains(out, "override plan_review → review  (orch next --override)  read ^[[31mred; skipped codegen") {
		t.Errorf("piped orch log:\n%s", out)
	}

	// NO_COLOR, and a pipe: the same words, no escape.
	for _, args := range [][]string{{"log"}, {"status"}} {
		screen, code := inPTY(t, dir, append(env, "NO_COLOR=1"), args...)
		if code != 0 || strings.Contains(screen, "\x1b[3") || strings.Contains(screen, "\x1b[1m") {
			t.Errorf("NO_COLOR orch %v: exit %d\n%q", args, code, screen)
		}
		code, out := runOrch(t, dir, nil, args...)
		if code != 0 || strings.Contains(out, "\x1b") {
			t.Errorf("piped orch %v: exit %d\n%q", args, code, out)
		}
	}
}
