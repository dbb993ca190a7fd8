package cli

import "github.com/spf13/cobra"

// reviewSubcommands lists the reviewers' commands.
func reviewSubcommands(env *Env) []*cobra.Command {
	return []*cobra.Command{newReviewPlanCmd(env), newReviewCodeCmd(env)}
}
