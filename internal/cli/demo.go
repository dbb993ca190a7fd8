package cli

import (
	"github.com/spf13/cobra"

	"github.com/orchdev/orch/internal/demo"
	"github.com/orchdev/orch/internal/exit"
)

func newDemoCmd(env *Env) *cobra.Command {
	var dir, provider, sandbox string
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "watch a task travel the whole lifecycle on a sample repository (offline by default)",
		Long: `Create a small Go module with a missing feature in a temporary folder (or --dir)
and run one task through the whole lifecycle: the planner asks a clarifying
question and gets an answer, five plan reviewers approve (one suggests), codegen's
first attempt fails the tests, the task goes back to codegen, the second attempt
passes review and tests, and the change is accepted into a real commit.

With the default --provider script no key and no network are needed: the
models' answers are replayed from a script. --provider openai or anthropic runs
the same sample with a real model (OPENAI_API_KEY or ANTHROPIC_API_KEY).`,
		Example: `  orch demo
  orch demo --dir /tmp/textkit --provider anthropic`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch provider {
			case "script", "openai", "anthropic":
			default:
				return exit.New(exit.ErrUsage, "--provider: expected script, openai or anthropic, got %s", provider)
			}
			_, err := demo.Run(cmd.Context(), demo.Options{Dir: dir, Provider: provider, Sandbox: sandbox,
				Out: cmd.OutOrStdout(), Getenv: env.Getenv, Environ: env.environ()})
			return err
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "where to create the sample repository (default: a new temporary folder)")
	cmd.Flags().StringVar(&provider, "provider", "script", "script (offline), openai or anthropic")
	cmd.Flags().StringVar(&sandbox, "sandbox", "", "sandbox for the tests: auto, bwrap or none")
	return cmd
}
