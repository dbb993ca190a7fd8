package cli

import (
	"github.com/orchdev/orch/internal/exit"
	"github.com/spf13/cobra"
)

// newReviewCmd groups `orch review plan` and `orch review code`, the seed's
// "/review plan" and "/review code".
func newReviewCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "review plan|code",
		Short: "run the plan reviewers or the code reviewers",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return exit.New(exit.ErrUsage, "review what? `orch review plan` or `orch review code`")
		},
	}
	for _, c := range reviewSubcommands(env) {
		cmd.AddCommand(c)
	}
	return cmd
}
