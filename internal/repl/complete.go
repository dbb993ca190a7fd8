package repl

import (
	"strings"
	"unicode/utf8"
)

// sources supply the completions that depend on the project; each is
// called only when needed and reads the disk afresh.
type sources struct {
	tasks     func() []string // task ids
	questions func() []string // open question ids of the current task
}

// phaseNames are the phases a user may name after /next --to and /redo.
func phaseNames() []string {
	return []string{"planning", "plan_review", "codegen", "review", "test", "accept", "revert", "done"}
}

// flagsOf lists the flags offered after a slash command, and the values
// offered after each flag that takes a closed set.
func flagsOf(cmd string) (flags []string, values map[string][]string) {
	phases := phaseNames()
	switch cmd {
	case "/next":
		return []string{"--to", "--override", "--from", "--json", "--wait"}, map[string][]string{"--to": phases, "--from": phases}
	case "/redo":
		return []string{"--reason"}, nil
	case "/test":
		return []string{"--sandbox", "--keep", "--json"}, map[string][]string{"--sandbox": {"auto", "bwrap", "none"}}
	case "/accept":
		return []string{"--verdict", "--reason", "--to", "--allow-incomplete", "--json"}, map[string][]string{
			"--verdict": {"accepted", "changes_requested", "rejected", "revert"},
			"--to":      {"codegen", "review", "planning"},
		}
	case "/revert":
		return []string{"--reason"}, nil
	case "/status", "/log":
		return []string{"--json"}, nil
	case "/plan", "/codegen", "/review":
		return []string{"--fresh", "--json"}, nil
	}
	return nil, nil
}

// complete returns the word being completed at the end of head (the line
// up to the cursor) and the full candidates for it, each ending in a blank
// when it completes a whole word.
func complete(head string, src sources) (word string, cands []string) {
	if !strings.HasPrefix(head, "/") {
		return "", nil
	}
	prior := strings.Fields(head)
	if !strings.HasSuffix(head, " ") && !strings.HasSuffix(head, "\t") {
		word, prior = prior[len(prior)-1], prior[:len(prior)-1]
	}
	var pool []string
	switch {
	case len(prior) == 0:
		pool = commandNames()
	case prior[0] == "/review" && len(prior) == 1 && !strings.HasPrefix(word, "-"):
		pool = []string{"plan", "code"}
	case prior[0] == "/redo" && len(prior) == 1 && !strings.HasPrefix(word, "-"):
		pool = phaseNames()[:len(phaseNames())-1]
	case prior[0] == "/show" && len(prior) == 1 && !strings.HasPrefix(word, "-"):
		pool = ShowArtifacts
	case prior[0] == "/task" && len(prior) == 1:
		pool = []string{"new", "switch", "list"}
	case prior[0] == "/task" && len(prior) == 2 && prior[1] == "switch":
		pool = call(src.tasks)
	case prior[0] == "/answer" && len(prior) == 1:
		pool = call(src.questions)
	default:
		flags, values := flagsOf(prior[0])
		if vs, ok := values[prior[len(prior)-1]]; ok {
			pool = vs
		} else if strings.HasPrefix(word, "-") {
			pool = flags
		}
	}
	for _, c := range pool {
		if strings.HasPrefix(c, word) {
			cands = append(cands, c+" ")
		}
	}
	return word, cands
}

func call(f func() []string) []string {
	if f == nil {
		return nil
	}
	return f()
}

// completer adapts complete to readline's AutoCompleter.
type completer struct{ src sources }

// Do returns the suffixes that complete the word before the cursor and
// that word's length in runes.
func (c completer) Do(line []rune, pos int) ([][]rune, int) {
	if pos > len(line) {
		pos = len(line)
	}
	word, cands := complete(string(line[:pos]), c.src)
	out := make([][]rune, 0, len(cands))
	for _, cand := range cands {
		out = append(out, []rune(cand[len(word):]))
	}
	return out, utf8.RuneCountInString(word)
}
