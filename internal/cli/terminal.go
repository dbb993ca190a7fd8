package cli

import (
	"os"

	"golang.org/x/term"
)

// isTerminal reports whether v (a reader or writer) is an interactive
// terminal: an *os.File whose descriptor is a tty (/dev/null is a
// character device but no terminal), or a wrapper that says so (the REPL's
// writers implement IsTerminal).
func isTerminal(v any) bool {
	if t, ok := v.(interface{ IsTerminal() bool }); ok {
		return t.IsTerminal()
	}
	f, ok := v.(*os.File)
	if !ok {
		return false
	}
	return term.IsTerminal(int(f.Fd()))
}
