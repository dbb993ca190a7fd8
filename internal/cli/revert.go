package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/worker"
)

func newRevertCmd(env *Env) *cobra.Command {
	var id, reason string
	var asJSON bool
	var wait time.Duration
	var ff fleetFlags
	cmd := &cobra.Command{
		Use:   "revert --reason R",
		Short: "undo the accepted change with git revert, record it, and finish the task",
		Long: `From accept (when the decision is revert or rejected, or a regression was found),
take accept → revert, undo the task's commit with a new commit (never reset or
force), write revert/record.json and move the task to done. The revert commit is
computed like git revert but in a temporary index, carries the reason and the
trailers Orch-Task and Orch-Revert, and lands by compare-and-swap of the branch;
then only the files it touches are updated in the index and working tree (your
other staged and unstaged work is kept; a touched file with uncommitted changes
is a refusal). On a conflict nothing changes and the record says partial with
the conflicting files. When the change was never applied, the record says
nothing_to_revert; a revert commit of the task already on the branch is reused.
A kill at any moment is finished or undone by the next orch command.

From done (the change accepted and committed), orch revert re-opens the task
at revert first, as orch redo revert does (logged as a redo with the reason),
then reverts. To revert at the accept gate instead, record that decision:
  orch accept --verdict revert --reason "..."`,
		Example: `  orch revert --reason "broke the nightly build"`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if strings.TrimSpace(reason) == "" {
				return exit.New(exit.ErrUsage, "revert needs a non-blank --reason")
			}
			if l, tid, err := env.fleetTask(ff, id); err != nil || l != nil {
				if err != nil {
					return err
				}
				res, err := l.Revert(cmd.Context(), tid, reason)
				if err != nil {
					return err
				}
				return printGate(cmd.OutOrStdout(), asJSON, "revert", res)
			}
			o, cfg, tid, err := env.phaseSetup(wait, id)
			if err != nil {
				return err
			}
			// A done task is re-opened at revert first, as `orch redo
			// revert` does and logged as such: reverting a finished
			// change is what a person asking for it means.
			if v, err := o.Status(tid); err == nil && v.Phase == lifecycle.Done && v.Pending == nil {
				res, err := o.Redo(cmd.Context(), tid, lifecycle.Revert, "orch revert: "+reason)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s: %s → %s (redo, to revert the done task)\n", res.Task, res.From, res.To)
			}
			if err := env.wrongPhase(o, tid, lifecycle.Revert); err != nil {
				return err
			}
			if err := env.acceptedNotReverted(o, tid); err != nil {
				return err
			}
			w, err := work(cmd.Context(), worker.Deps{Orch: o, Config: cfg}, lifecycle.Revert, worker.Run{Task: tid, Reason: reason})
			if err != nil {
				return err
			}
			res := *w.Revert
			out := cmd.OutOrStdout()
			if asJSON {
				return json.NewEncoder(out).Encode(res.Record)
			}
			printEntered(out, w.Phase.Entered)
			r := res.Record
			switch r.Status {
			case artifact.RevertReverted:
				fmt.Fprintf(out, "reverted %s in %s\n", r.RevertedCommit, r.RevertCommit)
			case artifact.RevertPartial:
				fmt.Fprintf(out, "NOT reverted: conflicts in %s; the repository is as it was\n", strings.Join(r.Conflicts, ", "))
			default:
				fmt.Fprintln(out, "nothing to revert")
			}
			for _, n := range r.Notes {
				fmt.Fprintf(out, "note: %s\n", n)
			}
			if w.Done != nil {
				fmt.Fprintf(out, "%s: %s → %s\n", w.Done.Task, w.Done.From, w.Done.To)
			}
			return nil
		},
	}
	taskFlag(cmd, &id)
	waitFlag(cmd, &wait)
	cmd.Flags().StringVar(&reason, "reason", "", "why the change is reverted (required)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print revert/record.json's content")
	return cmd
}

// acceptedNotReverted refuses orch revert at the accept gate when the
// decision does not ask for a revert (accepted, changes requested), and
// says the two ways to revert: record that decision, or finish the task
// and revert the done task. Without it the refusal named only the
// unmet condition (found trying orch in the REPL: /accept, then /revert).
func (env *Env) acceptedNotReverted(o *orchestrator.Orchestrator, tid string) error {
	v, err := o.Status(tid)
	if err != nil || v.Phase != lifecycle.Accept || v.Pending != nil {
		return nil
	}
	for _, e := range v.Edges {
		if e.To != lifecycle.Revert {
			continue
		}
		if e.Holds {
			return nil
		}
		return exit.New(exit.ErrRefused, "accept → revert refused: %s: %s", e.Cond, e.Reason).
			WithHint("to revert at the accept gate, record that decision: %s, then %s", env.command(`accept --verdict revert --reason "..."`), env.command(`revert --reason "..."`)).
			WithHint("or, once the task is done (%s), %s re-opens it and reverts the commit", env.command("next"), env.command(`revert --reason "..."`))
	}
	return nil
}
