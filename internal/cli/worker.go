package cli

import (
	"github.com/spf13/cobra"

	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/fleetlink"
)

func newWorkerCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "worker [--land] [--models N] [--tests M] [--identity NAME] [--sandbox S] [--temporal HOST:PORT] [--namespace NS]",
		Short: "run the fleet's phases in this clone (orch-fleet worker)",
		Long: `Run orch-fleet worker in this clone (docs/fleet.md): it takes the fleet's steps —
model runs on queue orch-model (at most --models at a time), test runs on
orch-test (--tests), and with --land accept and revert on orch-land (only in
the clone that holds the repository's branch) — until it is stopped. Every
flag is orch-fleet worker's; [fleet] in .orch/config.toml names the Temporal
service, or --temporal and --namespace do.`,
		Example: `  orch worker --land --models 4 --tests 1
  orch worker --models 8 --tests 2 --identity build-02`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, a := range args {
				if a == "-h" || a == "--help" {
					return cmd.Help()
				}
			}
			p, err := env.project()
			if err != nil {
				return err
			}
			l, err := env.fleetLink(p, false)
			if err != nil {
				return err
			}
			if l == nil {
				// No [fleet]: the flags name the service.
				bin, err := fleetlink.Find(p.Root, config.Fleet{})
				if err != nil {
					return err
				}
				l = &fleetlink.Link{Binary: bin, Root: p.Root, Env: env.environ()}
			}
			return l.Worker(cmd.Context(), args, cmd.OutOrStdout())
		},
	}
}
