package cli

import "testing"

// TestReplSyntax: in the REPL, a message names the REPL's own command for
// an orch command it quotes, and leaves a command the REPL has no slash
// form of as the shell command it is (a user meets no command that does
// not exist where they are).
func TestReplSyntax(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"run `orch redo test`", "run `/redo test`"},
		{"see `orch list`", "see `/task list`"},
		{"no current task: .orch/current is absent; create a task with `orch new` or pass --task",
			"no current task: .orch/current is absent; create a task with `/task new BRIEF` or pick one with `/task switch ID`"},
		{"`orch new \"add retries\"`", "`/task new \"add retries\"`"},
		{"check it with `orch verify`", "check it with `/verify`"},
		{"set it with `orch config` first", "set it with `orch config` first"},
		{"open `orch serve`", "open `orch serve`"},
		{"`orch next --override \"R\" --to codegen`", "`/next --override \"R\" --to codegen`"},
		{"orch next without quotes stays", "orch next without quotes stays"},
	} {
		if got := replSyntax(c.in); got != c.want {
			t.Errorf("replSyntax(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}
