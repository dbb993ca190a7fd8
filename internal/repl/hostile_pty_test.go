package repl_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/orchdev/orch/internal/hostile"
)

// rawHostile names what in a REPL screen can only come from the hostile
// corpus as written (the line editor draws with its own cursor moves, so
// the screen cannot be held to orch's colours alone): an OSC or DCS
// sequence, the corpus's own CSI sequences, a C1 control, a bidirectional
// override, invalid UTF-8.
func rawHostile(raw string) string {
	for _, seq := range []string{"\x1b]", "\x1bP", "\x1b[8m", "\x1b[30;40m", "\x1b[1A", "\x1b[10;10H", "\x1b[5D", "\x1b[?1049h", "\x1b[1;2r", "\x1b[2J"} {
		if i := strings.Index(raw, seq); i >= 0 {
			return "the sequence " + strconvQuote(seq) + " near " + strconvQuote(raw[max(0, i-30):min(len(raw), i+30)])
		}
	}
	if !utf8.ValidString(raw) {
		return "invalid UTF-8"
	}
	for _, r := range raw {
		if (r >= 0x80 && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
			return "the rune " + strconvQuote(string(r))
		}
	}
	return ""
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// The REPL shows hostile text as text: the open question in its banner,
// /status, /log, /show, /diff, a task whose id is hostile (never offered
// by Tab), and a hostile current task in the prompt.
func TestTerminalHostileText(t *testing.T) {
	t.Parallel()
	text := hostile.TerminalText()
	arg := strings.ReplaceAll(text, "\x00", "")
	q, _ := json.Marshal(text)
	p := newProject(t)
	p.mustOrch("new", "--id", "t1", "hostile")
	p.mustOrch("next", "--override", arg, "--to", "plan_review")
	p.mustOrch("redo", "planning", "--reason", arg)
	p.write(".orch/tasks/t1/planning/planning.ai.json", `{"id":"t1","title":`+string(q)+`,"brief":"x","questions":[{"id":"q1","text":`+string(q)+`,"blocking":true,"answer":null}],"file_plan":[{"path":"a.go","intent":"create"}]}`)
	p.write(".orch/tasks/t1/planning/plan.md", "# "+text+"\n\n"+text)
	p.write(".orch/tasks/t1/code/diff.patch", "diff --git a/a.go b/a.go\n--- a/a.go\n+++ b/a.go\n@@ -1 +1 @@\n-"+strings.ReplaceAll(text, "\n", "\n-")+"\n")
	if err := os.MkdirAll(filepath.Join(p.dir, ".orch", "tasks", "t2\x1b]0;PWNED\x07"), 0o755); err != nil {
		t.Fatal(err)
	}

	tm := p.startREPL()
	tm.waitFor("waits for your answer to q1: copy ^[]52;c;", wait)
	tm.waitFor("[planning]> ", wait)
	tm.step("/status"+enter, "task t1  phase planning", "]> ")
	tm.step("/log"+enter, "(orch next --override)  copy ^[]52;c;", "]> ")
	tm.step("/show plan"+enter, "^[]0;PWNED^G", "]> ")
	tm.step("/diff"+enter, "-secret^[[2K^Mfake", "]> ")
	tm.step("/task switch "+tab, "]> /task switch t1 ")
	tm.step(enter, "current task: t1 (planning)")
	tm.quit()
	if bad := rawHostile(tm.rawOutput()); bad != "" {
		t.Errorf("the REPL wrote %s", bad)
	}

	// A current task naming something hostile: refused, quoted.
	p.write(".orch/current", "t1\x1b]0;PWNED\x07\n")
	tm = p.startREPL()
	tm.waitFor(`invalid task id "t1\x1b]0;PWNED\a"`, wait)
	tm.waitFor("orch> ", wait)
	tm.step("/status"+enter, `invalid task id "t1\x1b]0;PWNED\a"`, "orch> ")
	tm.quit()
	if bad := rawHostile(tm.rawOutput()); bad != "" {
		t.Errorf("the REPL with a hostile current task wrote %s", bad)
	}
}
