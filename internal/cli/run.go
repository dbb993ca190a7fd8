package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/orchdev/orch/internal/agent/planner"
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/autopilot"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/landing"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/termtext"
	"github.com/orchdev/orch/internal/testphase"
	"github.com/orchdev/orch/internal/worker"
)

func newRunCmd(env *Env) *cobra.Command {
	var id, until, sandbox string
	var yes, fresh, asJSON bool
	var maxAttempts int
	var answers []string
	var wait time.Duration
	var local bool
	cmd := &cobra.Command{
		Use:   "run",
		Short: "autopilot: run each phase and `next` in turn until done, a human gate or --until",
		Long: `Run the task's phases in turn — plan, review plan, codegen, review code, test —
each followed by ` + "`orch next`" + `, exactly as you would by hand. The autopilot stops at
the human gates: open blocking questions (unless answered with --answer ID=TEXT)
and the accept decision (unless --yes, which accepts when the evidence is
complete and carries out a requested revert). The codegen ↔ review/test loop is
bounded by --max-attempts.

Exit codes: 0 done (or --until reached), 3 a phase ran but the task cannot move
on, 4 invalid artifact or configuration, 5 busy, 6 stopped at a human gate,
7 out of codegen attempts.`,
		Example: `  orch run
  orch run --until review
  orch run --yes --answer q1="use exponential backoff" --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opt := autopilot.Options{Yes: yes, MaxAttempts: maxAttempts, Answers: map[string]string{}}
			if until != "" {
				p, err := lifecycle.ParsePhase(until)
				if err != nil {
					return exit.New(exit.ErrUsage, "--until: %v", err)
				}
				opt.Until = p
			}
			for _, a := range answers {
				k, v, ok := strings.Cut(a, "=")
				if !ok || strings.TrimSpace(k) == "" || strings.TrimSpace(v) == "" {
					return exit.New(exit.ErrUsage, "--answer: expected ID=TEXT, got %q", a)
				}
				opt.Answers[strings.TrimSpace(k)] = v
			}
			o, cfg, tid, err := env.phaseSetup(wait, id)
			if err != nil {
				return err
			}
			if err := notInFleet(o.Project, cfg, tid, "`orch run`", local); err != nil {
				return err
			}
			out, errw := cmd.OutOrStdout(), cmd.ErrOrStderr()
			pr := newProgress(errw, false, env.Now, "")
			defer pr.stop()
			rt := env.agentRuntime(o.Project, cfg, fresh, pr)
			var mu sync.Mutex
			enc := json.NewEncoder(out)
			opt.Event = func(e autopilot.Event) {
				mu.Lock()
				defer mu.Unlock()
				if asJSON {
					_ = enc.Encode(e)
					return
				}
				printRunEvent(out, e, env.words)
			}
			stream := errw
			test := testphase.Options{Sandbox: sandbox, Stream: stream, Env: env.environ()}
			workers := worker.Registry(worker.Deps{Orch: o, Config: cfg, Agents: rt, Test: test, Accept: &landing.AcceptOptions{
				Verdict: artifact.VerdictAccepted, Reasons: []string{"accepted by orch run --yes: reviews passed and the tests pass"},
				Decider: artifact.Decider{Kind: "human", Name: deciderName(env, "") + " (orch run --yes)"},
				Test:    test,
			}})
			opt.Answer = func(ctx context.Context, id, q, text string) error { return planner.Answer(ctx, o, id, q, text) }
			res, err := autopilot.Run(cmd.Context(), o, tid, workers, opt)
			printNotes(errw, rt)
			if err != nil {
				return err
			}
			switch res.Stop {
			case autopilot.StopDone, autopilot.StopUntil:
				return nil
			case autopilot.StopGate:
				return exit.New(exit.ErrGate, "stopped at a human gate: %s", res.Message)
			case autopilot.StopAttempts:
				return exit.New(exit.ErrAttempts, "%s", res.Message)
			}
			return exit.New(exit.ErrRefused, "%s", res.Message)
		},
	}
	taskFlag(cmd, &id)
	waitFlag(cmd, &wait)
	localFlag(cmd, &local)
	cmd.Flags().StringVar(&until, "until", "", "stop when the task reaches this phase")
	cmd.Flags().BoolVar(&yes, "yes", false, "take the accept decision (accepted, when tests pass) and carry out a requested revert")
	cmd.Flags().IntVar(&maxAttempts, "max-attempts", 3, "codegen runs before the autopilot gives up")
	cmd.Flags().StringArrayVar(&answers, "answer", nil, "answer an open blocking question: ID=TEXT (repeatable)")
	cmd.Flags().BoolVar(&fresh, "fresh", false, "ask the models again instead of reusing cached answers")
	cmd.Flags().StringVar(&sandbox, "sandbox", "", "sandbox for the test phase: auto, bwrap or none")
	cmd.Flags().BoolVar(&asJSON, "json", false, "stream events as JSON lines (see internal/autopilot.Event)")
	return cmd
}

// printRunEvent narrates one event; what a model or a file said is
// sanitized (docs/terminal.md). words puts the commands a stop's message
// names in the syntax at hand (`/answer ID TEXT` in the REPL).
func printRunEvent(w io.Writer, e autopilot.Event, words func(string) string) {
	switch e.Event {
	case "work":
		if e.Attempt > 0 {
			fmt.Fprintf(w, "… %s (%s, attempt %d)\n", termtext.Line(e.Action), e.Phase, e.Attempt)
		} else {
			fmt.Fprintf(w, "… %s (%s)\n", termtext.Line(e.Action), e.Phase)
		}
	case "next":
		fmt.Fprintf(w, "→ %s → %s (%s)\n", e.From, e.To, termtext.Line(e.Reason))
	case "stop":
		fmt.Fprintf(w, "■ stopped in %s: %s\n", e.Phase, termtext.Sanitize(words(e.Message)))
	}
}
