package cli

import (
	"testing"
)

func TestCommandSyntax(t *testing.T) {
	shell, repl := &Env{}, &Env{REPL: true}
	if got := shell.stepLine(step{Args: "codegen", Why: "w"}); got != "run: orch codegen  (w)" {
		t.Errorf("shell: %q", got)
	}
	if got := repl.stepLine(step{Args: "review code", Why: "w"}); got != "run: /review code  (w)" {
		t.Errorf("repl: %q", got)
	}
	if got := repl.stepLine(step{Why: "the task is done"}); got != "the task is done" {
		t.Errorf("no step: %q", got)
	}
}
