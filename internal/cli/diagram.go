package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/orchdev/orch/internal/lifecycle"
)

func newDiagramCmd(_ *Env) *cobra.Command {
	return &cobra.Command{
		Use:     "diagram",
		Short:   "print the lifecycle as a Mermaid stateDiagram-v2 generated from the transition table",
		Example: `  orch diagram > lifecycle.mmd`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprint(cmd.OutOrStdout(), lifecycle.Lifecycle().Mermaid())
			return err
		},
	}
}
