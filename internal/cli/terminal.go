package cli

import (
	"io"
	"os"

	"golang.org/x/term"
)

// isTerminal reports whether v (a reader or writer) is an interactive
// terminal: an *os.File whose descriptor is a tty (/dev/null is a
// character device but no terminal), or a wrapper that says so (the REPL's
// writers implement IsTerminal).
func isTerminal(v any) bool {
	if w, ok := v.(io.Writer); ok {
		v = unwrap(w)
	}
	if t, ok := v.(interface{ IsTerminal() bool }); ok {
		return t.IsTerminal()
	}
	f, ok := v.(*os.File)
	if !ok {
		return false
	}
	return term.IsTerminal(int(f.Fd()))
}

// unwrap returns the writer behind the guard Run puts on the command's
// output (termtext.Writer): the terminal, the REPL's writer or the pipe.
// Only orch's own drawing (the REPL, the progress line, MCP's JSON-RPC
// stream) writes to it directly; the text it draws is sanitized where it
// is built.
func unwrap(w io.Writer) io.Writer {
	for {
		u, ok := w.(interface{ Unwrap() io.Writer })
		if !ok {
			return w
		}
		w = u.Unwrap()
	}
}
