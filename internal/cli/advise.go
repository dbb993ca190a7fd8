package cli

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/orchdev/orch/internal/agent/advisor"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/termtext"
)

func newAdviseCmd(env *Env) *cobra.Command {
	var id string
	var asJSON bool
	var wait time.Duration
	var local bool
	cmd := &cobra.Command{
		Use:   "advise",
		Short: "ask the accept advisor for a recommendation (it never decides)",
		Long: `In accept, ask the accept advisor model to summarise the evidence — the plan,
the reviews, the test report and the change — and recommend a verdict
(accepted, changes_requested with a target, or rejected) with its reasons,
risks and what to check. orch adds cautions of its own from the evidence
(failing or missing tests, a review that is not ok).

The advice is written to accept/advice.json and accept/advice.md and printed;
the task stays in accept. The advisor never decides: you do, with
` + "`orch accept`" + `. Each run asks the model again.`,
		Example: `  orch advise
  orch advise --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := env.startAgent(cmd, wait, id, false, asJSON, local)
			if err != nil {
				return err
			}
			out := a.out
			adv, err := advisor.Advise(cmd.Context(), a.rt, a.o, a.tid)
			if err := a.finish(orchestrator.PhaseResult{}, err); err != nil {
				return err
			}
			a.notes(asJSON)
			if asJSON {
				return json.NewEncoder(out).Encode(adv)
			}
			// The advice is the model's text: laid out (and sanitized) for
			// a terminal, as written otherwise.
			fmt.Fprint(out, termtext.Markdown(advisor.Markdown(adv), env.style(out)))
			fmt.Fprintf(out, "\nwrote %s, %s\n", advisor.File, advisor.MarkdownFile)
			return nil
		},
	}
	taskFlag(cmd, &id)
	waitFlag(cmd, &wait)
	localFlag(cmd, &local)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print accept/advice.json's content")
	return cmd
}
