package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/orchdev/orch/internal/exit"
)

// usagef marks a message as a usage error (exit 2).
func usagef(msg string) error { return exit.UsageError(msg) }

// flagError wraps errors raised by flag and argument parsing (exit 2);
// they are followed by a hint to run `orch help`.
type flagError struct{ err error }

func (e *flagError) Error() string { return e.err.Error() }
func (e *flagError) Unwrap() error { return e.err }

func isFlagError(err error) bool {
	var fe *flagError
	return errors.As(err, &fe)
}

// unknownCommand refuses arguments to the root command that name no
// command, as cobra would, as a usage error.
func unknownCommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += "\n\nDid you mean this?\n"
		for _, c := range s {
			msg += "\t" + c + "\n"
		}
	}
	return exit.UsageError(msg)
}
