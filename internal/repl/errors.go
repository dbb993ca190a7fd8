package repl

import "errors"

// Errors of this package, matched with errors.Is.
var (
	// ErrUnterminatedQuote: a quote opened in a command line is not closed.
	ErrUnterminatedQuote = errors.New("unterminated quote")
	// ErrTrailingBackslash: a command line ends with a lone backslash.
	ErrTrailingBackslash = errors.New("trailing backslash")
	// errMissing: an artifact to show does not exist (yet).
	errMissing = errors.New("missing")
	// errInterrupt: Ctrl-C at the prompt.
	errInterrupt = errors.New("interrupted")
)
