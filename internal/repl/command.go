package repl

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/termtext"
	"github.com/orchdev/orch/internal/worker"
)

// Artifacts shown as Markdown after the command that writes them.
const (
	planReviewMarkdown = artifact.PlanReviewMarkdownFile
	codeReviewMarkdown = artifact.CodeReviewMarkdownFile
)

// lineContext is what a line's meaning depends on.
type lineContext struct {
	Project bool   // an orch project was found
	Task    string // the current task; "" when none
	Phase   string // its phase
	Open    string // id of its first open blocking question ("" when none or not planning)
}

type actionKind int

const (
	actNone   actionKind = iota // an empty line
	actRun                      // run the orch command line args
	actSwitch                   // make id the current task
	actHelp                     // print the commands
	actQuit                     // leave
	actHint                     // print msg: the line was not understood
)

// action is what one line asks for.
type action struct {
	kind actionKind
	args []string // actRun: the orch command line, without "orch"
	show string   // actRun: artifact rendered after success, relative to the task
	id   string   // actSwitch: the task
	msg  string   // actHint
}

// passThrough are the slash commands that run the orch command of the same
// name with the rest of the line as its arguments: the phase workers'
// one-word commands (internal/worker; the reviews go through /review) and
// the lifecycle's own.
func passThrough() []string {
	var out []string
	cmds := worker.Commands()
	for _, p := range lifecycle.Phases() {
		if c, ok := cmds[p]; ok && !strings.Contains(c, " ") {
			out = append(out, "/"+c)
		}
	}
	return append(out, "/next", "/redo", "/status", "/log", "/diff", "/show", "/cost", "/advise", "/run", "/verify", "/init")
}

// Knows reports whether name ("/next") is one of the REPL's commands.
func Knows(name string) bool { return slices.Contains(commandNames(), name) }

// shownAfter is the artifact rendered after a successful slash command.
func shownAfter(name string) string {
	if name == "/plan" {
		return artifact.PlanMarkdownFile
	}
	return ""
}

// commandNames are every slash command, sorted, for completion and hints.
func commandNames() []string {
	names := append([]string{"/review", "/answer", "/task", "/help", "/quit"}, passThrough()...)
	sort.Strings(names)
	return names
}

// parse decides what a line asks for. It reads nothing: c says what the
// line's meaning depends on.
func parse(line string, c lineContext) action {
	line = strings.TrimSpace(line)
	if line == "" {
		return action{kind: actNone}
	}
	if !strings.HasPrefix(line, "/") {
		return plainText(line, c)
	}
	name, rest := cutWord(line)
	switch name {
	case "/help", "/?":
		return action{kind: actHelp}
	case "/quit", "/exit", "/q":
		return action{kind: actQuit}
	case "/answer":
		id, text := cutWord(rest)
		text = freeText(text)
		if id == "" || text == "" || text == "-" {
			return hint("usage: " + answerUsage + " (the open questions are listed by /status and /plan)")
		}
		return action{kind: actRun, args: []string{"answer", "--", id, text}}
	case "/task":
		return taskCommand(rest)
	case "/review":
		return reviewCommand(rest, c)
	}
	if slices.Contains(passThrough(), name) {
		words, err := Split(rest)
		if err != nil {
			return hint(fmt.Sprintf("%s: %v (quote arguments like a shell: --override \"my reason\")", name, err))
		}
		return action{kind: actRun, args: append([]string{strings.TrimPrefix(name, "/")}, words...), show: shownAfter(name)}
	}
	return hint(unknown(name))
}

func hint(msg string) action { return action{kind: actHint, msg: msg} }

// answerUsage is how /answer is written: the question's id, then the
// answer, the rest of the line as it is (quotes around all of it are
// dropped, and not needed). The plan's hint (`orch answer q1 TEXT`,
// shown in the REPL as `/answer q1 TEXT`) says the same.
const answerUsage = "/answer ID TEXT"

// plainText is a line without a leading slash.
func plainText(text string, c lineContext) action {
	switch {
	case !c.Project:
		return hint("no orch project here: /init creates one at the top of your git repository; then type the brief of a task")
	case text == "-":
		return hint("type the text itself (\"-\" would read standard input)")
	case c.Task == "":
		return action{kind: actRun, args: []string{"new", "--", text}}
	case c.Phase == "planning" && c.Open != "":
		return action{kind: actRun, args: []string{"answer", "--", c.Open, text}}
	}
	return hint(fmt.Sprintf("plain text answers the first open blocking question while planning, or is the brief of a new task when there is none; task %s is in %s with no open question. Commands: %s (/help explains them; /task new BRIEF starts another task)",
		c.Task, orUnknown(c.Phase), strings.Join(commandNames(), " ")))
}

func orUnknown(phase string) string {
	if phase == "" {
		return "an unreadable state"
	}
	return phase
}

// taskCommand is /task new BRIEF | switch ID | list.
func taskCommand(rest string) action {
	sub, arg := cutWord(rest)
	switch sub {
	case "", "list":
		return action{kind: actRun, args: []string{"list"}}
	case "new":
		brief := freeText(arg)
		if brief == "" || brief == "-" {
			return hint("usage: /task new BRIEF (what the change should do)")
		}
		return action{kind: actRun, args: []string{"new", "--", brief}}
	case "switch":
		words, err := Split(arg)
		if err != nil || len(words) != 1 {
			return hint("usage: /task switch ID (/task list shows the ids)")
		}
		return action{kind: actSwitch, id: words[0]}
	}
	return hint("usage: /task new BRIEF | /task switch ID | /task list")
}

// reviewCommand is /review plan | /review code; bare /review picks the
// review the current phase is about.
func reviewCommand(rest string, c lineContext) action {
	words, err := Split(rest)
	if err != nil {
		return hint("/review: " + err.Error())
	}
	what := ""
	if len(words) > 0 && !strings.HasPrefix(words[0], "-") {
		what, words = words[0], words[1:]
	} else {
		switch c.Phase {
		case "planning", "plan_review":
			what = "plan"
		case "codegen", "review":
			what = "code"
		}
	}
	switch what {
	case "plan":
		return action{kind: actRun, args: append([]string{"review", "plan"}, words...), show: planReviewMarkdown}
	case "code":
		return action{kind: actRun, args: append([]string{"review", "code"}, words...), show: codeReviewMarkdown}
	}
	return hint("usage: /review plan | /review code")
}

// unknown explains an unknown slash command in one line.
func unknown(name string) string {
	var near []string
	for _, n := range commandNames() {
		if strings.HasPrefix(n, name) {
			near = append(near, n)
		}
	}
	if len(near) > 0 {
		return fmt.Sprintf("unknown command %s: did you mean %s? (/help lists the commands)", termtext.Sanitize(name), strings.Join(near, " or "))
	}
	return fmt.Sprintf("unknown command %s: /help lists the commands", termtext.Sanitize(name))
}
