package ptytest

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

// A shell in the terminal reads what is typed, answers with an escape
// sequence around the text, and exits 3: the output, its text and the
// exit code come back.
func TestTerminal(t *testing.T) {
	tm := Start(t, exec.Command("sh", "-c", `read x; printf '\033[1mgot %s\033[0m\r\n' "$x"; exit 3`), 24, 80)
	tm.Type("hi\r")
	if !tm.Output.Await(time.Minute, func(raw string) bool { return strings.Contains(raw, "\x1b[1mgot hi\x1b[0m") }) {
		t.Fatalf("output %q", tm.Output.String())
	}
	if code := tm.Exit(time.Minute); code != 3 {
		t.Errorf("exit %d, want 3", code)
	}
	if text := Text(tm.ReadAll(time.Minute)); !strings.Contains(text, "got hi\n") || strings.Contains(text, "\x1b") {
		t.Errorf("text %q", text)
	}
}
