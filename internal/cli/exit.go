package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/orchdev/orch/internal/clip"
	"github.com/orchdev/orch/internal/exit"
)

// flagError wraps errors raised by flag and argument parsing (exit 2);
// they are followed by a hint to run `orch help`.
type flagError struct{ err error }

func (e *flagError) Error() string { return e.err.Error() }
func (e *flagError) Unwrap() error { return e.err }

func isFlagError(err error) bool {
	var fe *flagError
	return errors.As(err, &fe)
}

// flagSuggestion adds a "did you mean" to pflag's unknown-flag error: the
// command's flag nearest to the one typed (clip.Nearest, the distance
// cobra uses for commands).
func flagSuggestion(cmd *cobra.Command, err error) string {
	msg := err.Error()
	typed, ok := strings.CutPrefix(msg, "unknown flag: --")
	if !ok {
		return msg
	}
	typed, _, _ = strings.Cut(typed, "=")
	var names []string
	add := func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	}
	cmd.Flags().VisitAll(add)
	cmd.InheritedFlags().VisitAll(add)
	if near := clip.Nearest(typed, names); near != "" {
		return fmt.Sprintf("%s (did you mean --%s?)", msg, near)
	}
	return msg
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
	return exit.New(exit.ErrUsage, "%s", msg)
}
