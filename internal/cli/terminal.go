package cli

import "os"

// isTerminal reports whether v (a reader or writer) is an interactive
// terminal: an *os.File on a character device, or a wrapper that says so
// (the REPL's writers implement IsTerminal).
func isTerminal(v any) bool {
	if t, ok := v.(interface{ IsTerminal() bool }); ok {
		return t.IsTerminal()
	}
	f, ok := v.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
