package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/landing"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/testphase"
	"github.com/orchdev/orch/internal/worker"
)

func newAcceptCmd(env *Env) *cobra.Command {
	var id, verdict, target, decider, sandbox, expect string
	var reasons []string
	var allowIncomplete, asJSON bool
	var wait time.Duration
	var ff fleetFlags
	cmd := &cobra.Command{
		Use:   "accept",
		Short: "record the explicit decision; on accepted, apply the change and commit it",
		Long: `Record the decision in accept/decision.json (with accept/summary.md): the verdict,
the target for changes requested, the reasons and who decided.

On accepted, orch refuses when a rebase, merge or cherry-pick is in progress,
HEAD is detached, or a file the change touches has uncommitted changes;
otherwise it builds the commit from code/diff.patch in a temporary index
(three-way when HEAD moved since the base), with the plan's title and the
trailers Orch-Task, Orch-Plan and Orch-Diff (the patch's sha256), moves the branch to it by compare-and-swap,
and only then updates the files it touches in the index and working tree (your
other staged and unstaged work is kept). Repository hooks never run. When HEAD
had moved since the base, the suites run again on the new commit; a failure
records regression: true, which routes the task to revert. Accepting twice
never commits twice, and a kill at any moment is finished or undone by the next
orch command.

Accepting with failing or missing tests needs --allow-incomplete, and the
decision records that the evidence was incomplete.

--expect names what you decided on: the task's revision (orch status) or the
sha256 of code/diff.patch (at least 8 hex digits, as orch diff and the board
show it). When the task moved on since, or the patch is another, nothing is
recorded (exit 3) and orch says what changed. Without --verdict, a
decision written by hand in accept/decision.json is applied as it stands (its
verdict, target, reasons and decider): on accepted the change is committed,
which accept → done needs. Otherwise, in a terminal, orch shows the evidence
(with its revision and hash) and asks; the decision is then bound to what it
showed. The decision records the revision
and the hashes it judged.`,
		Example: `  orch accept --verdict accepted --reason "tests pass, reviewed the diff"
  orch accept          # applies accept/decision.json written by hand
  orch accept --verdict accepted --expect 9 --reason "reviewed revision 9"
  orch accept --verdict changes_requested --to codegen --reason "handle timeouts"
  orch accept --verdict rejected --reason "wrong approach"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if l, tid, err := env.fleetTask(ff, id); err != nil || l != nil {
				if err != nil {
					return err
				}
				return env.fleetAccept(cmd, l, tid, landing.AcceptOptions{Verdict: verdict, Target: target, Reasons: reasons, AllowIncomplete: allowIncomplete}, decider, expect, asJSON)
			}
			o, cfg, tid, err := env.phaseSetup(wait, id)
			if err != nil {
				return err
			}
			t, err := o.Project.Open(tid)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			want, err := landing.ParseExpect(expect)
			if err != nil {
				return exit.New(exit.ErrUsage, "%v", err)
			}
			dec := artifact.Decider{Kind: "human", Name: deciderName(env, decider)}
			// A decision written by hand is applied as it stands.
			hand := artifact.LoadDecision(t.Dir)
			if verdict == "" && hand.Err != nil {
				return hand.Err
			}
			if verdict == "" && hand.OK() {
				d := hand.Value
				verdict, target, reasons, dec = d.Verdict, d.Target, d.Reasons, d.Decider
				fmt.Fprintf(out, "applying the decision in %s: %s", artifact.DecisionFile, verdict)
				if target != "" {
					fmt.Fprintf(out, " (target %s)", target)
				}
				fmt.Fprintf(out, ", decided by %s %s\n", dec.Kind, dec.Name)
			}
			// Usage errors first (a missing --verdict without a terminal,
			// below); the phase before anything is asked or done.
			if verdict != "" || isTerminal(env.Stdin) {
				if err := env.wrongPhase(o, tid, lifecycle.Accept); err != nil {
					return err
				}
			}
			if verdict == "" {
				if !isTerminal(env.Stdin) {
					return exit.New(exit.ErrUsage, "accept needs --verdict (accepted, changes_requested, rejected or revert) and --reason when not run in a terminal")
				}
				shown, err := landing.Shown(o, tid)
				if err != nil {
					return err
				}
				if want.Empty() {
					want = shown
				}
				ev := landing.GatherEvidence(t.Dir)
				printEvidence(out, tid, ev)
				if h := shown.SHA256[lifecycle.HashDiff]; h != "" {
					fmt.Fprintf(out, "  revision %d, diff sha256 %.12s (the decision is bound to them)\n", shown.Revision, h)
				} else {
					fmt.Fprintf(out, "  revision %d, no diff (the decision is bound to it)\n", shown.Revision)
				}
				if verdict, target, reasons, allowIncomplete, err = askDecision(cmd.Context(), bufio.NewReader(env.Stdin), out, ev); err != nil {
					return err
				}
			}
			opt := landing.AcceptOptions{Verdict: verdict, Target: target, Reasons: reasons, AllowIncomplete: allowIncomplete, Expect: want,
				Decider: dec,
				Test:    testphase.Options{Sandbox: sandbox, Stream: cmd.ErrOrStderr(), Env: env.environ()}}
			if err := landing.CheckDecision(opt); err != nil {
				return exit.New(exit.ErrUsage, "%v", err)
			}
			w, err := work(cmd.Context(), worker.Deps{Orch: o, Config: cfg}, lifecycle.Accept, worker.Run{Task: tid, Accept: &opt})
			if err != nil {
				return err
			}
			res := *w.Accept
			d := res.Decision
			if asJSON {
				return json.NewEncoder(out).Encode(d)
			}
			printEntered(out, w.Phase.Entered)
			fmt.Fprintf(out, "decision recorded: %s", d.Verdict)
			if d.Target != "" {
				fmt.Fprintf(out, " (target %s)", d.Target)
			}
			fmt.Fprintf(out, " in %s\n", artifact.DecisionFile)
			if d.Commit != "" && d.Verdict == artifact.VerdictAccepted {
				fmt.Fprintf(out, "commit: %s\n", d.Commit)
			}
			for _, n := range d.Notes {
				fmt.Fprintf(out, "note: %s\n", n)
			}
			if d.IncompleteEvidence && d.Verdict == artifact.VerdictAccepted {
				fmt.Fprintln(out, "recorded: the evidence was incomplete")
			}
			fmt.Fprintf(out, "next: %s\n", env.command("next"))
			return nil
		},
	}
	taskFlag(cmd, &id)
	waitFlag(cmd, &wait)
	fleetFlagsOn(cmd, &ff)
	cmd.Flags().StringVar(&verdict, "verdict", "", "accepted, changes_requested, rejected or revert")
	cmd.Flags().StringVar(&target, "to", "", "with changes_requested: codegen, review or planning")
	cmd.Flags().StringArrayVar(&reasons, "reason", nil, "why (repeatable; at least one)")
	cmd.Flags().StringVar(&decider, "decider", "", "who decides (default: git config user.name, or $USER)")
	cmd.Flags().BoolVar(&allowIncomplete, "allow-incomplete", false, "confirm accepting with failing, incomplete or missing tests")
	cmd.Flags().StringVar(&sandbox, "sandbox", "", "sandbox for the regression check: auto, bwrap or none")
	cmd.Flags().StringVar(&expect, "expect", "", "what you decided on: the task's revision, or the sha256 of code/diff.patch (8+ hex digits)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the recorded decision as JSON")
	return cmd
}

func deciderName(env *Env, flag string) string {
	if flag != "" {
		return flag
	}
	cmd := exec.Command("git", "config", "user.name")
	cmd.Dir = env.Dir
	if out, err := cmd.Output(); err == nil && strings.TrimSpace(string(out)) != "" {
		return strings.TrimSpace(string(out))
	}
	return env.Getenv("USER")
}

func printEvidence(w io.Writer, id string, ev landing.Evidence) {
	fmt.Fprintf(w, "task %s: %s\n", id, ev.PlanTitle)
	fmt.Fprintf(w, "  plan review: %s\n  code review: %s\n  tests:       %s (%s)\n  change:      %d file(s), +%d −%d\n",
		ev.PlanReview, ev.CodeReview, ev.Tests, ev.TestSummary, len(ev.Files), ev.DiffAdded, ev.DiffRemoved)
	for _, f := range ev.Files {
		fmt.Fprintf(w, "    %s\n", f)
	}
}

// askDecision prompts for a decision on a terminal.
func askDecision(ctx context.Context, in *bufio.Reader, w io.Writer, ev landing.Evidence) (verdict, target string, reasons []string, allowIncomplete bool, err error) {
	ask := func(q string) (string, error) {
		if err := ctx.Err(); err != nil {
			return "", fmt.Errorf("cancelled: nothing recorded: %w", err)
		}
		fmt.Fprint(w, q)
		line, err := in.ReadString('\n')
		if err != nil && line == "" {
			return "", fmt.Errorf("no answer: %w", err)
		}
		return strings.TrimSpace(line), nil
	}
	for verdict == "" {
		a, err := ask("decision: [a]ccept, [c]hanges requested, [r]eject, re[v]ert? ")
		if err != nil {
			return "", "", nil, false, err
		}
		verdict = map[string]string{"a": "accepted", "c": "changes_requested", "r": "rejected", "v": "revert",
			"accept": "accepted", "accepted": "accepted", "reject": "rejected", "rejected": "rejected", "revert": "revert"}[strings.ToLower(a)]
	}
	if verdict == "changes_requested" {
		for target != "codegen" && target != "review" && target != "planning" {
			if target, err = ask("back to which phase: codegen, review or planning? "); err != nil {
				return "", "", nil, false, err
			}
		}
	}
	for len(reasons) == 0 {
		r, err := ask("reason: ")
		if err != nil {
			return "", "", nil, false, err
		}
		if r != "" {
			reasons = append(reasons, r)
		}
	}
	if verdict == "accepted" && !ev.Complete {
		a, err := ask(fmt.Sprintf("the tests %s: accept anyway? type yes to confirm: ", ev.Tests))
		if err != nil {
			return "", "", nil, false, err
		}
		if a != "yes" {
			return "", "", nil, false, exit.New(exit.ErrUsage, "not confirmed: nothing recorded")
		}
		allowIncomplete = true
	}
	return verdict, target, reasons, allowIncomplete, nil
}
