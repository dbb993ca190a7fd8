package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/task"
	"github.com/orchdev/orch/internal/termtext"
)

func newRootCmd(env *Env) *cobra.Command {
	root := &cobra.Command{
		Use:   "orch",
		Short: "orch drives an AI-assisted code change through a gated, auditable lifecycle",
		Long: `orch drives a code change through planning → plan_review → codegen → review →
test → accept → (revert) → done. Each phase leaves artifacts in the task's folder
under .orch/tasks/<id>/; orch inspects them, decides the next state from one
transition table, and records every step in an append-only, hash-chained
transcript.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       readBuildInfo().String(),
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.PersistentFlags().BoolVar(&env.noPager, "no-pager", false, "never page long output (orch log, orch diff, orch show); a pager runs only in a terminal: ORCH_PAGER, else PAGER, else less -FRX")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &flagError{err: exit.New(exit.ErrUsage, "%s", flagSuggestion(c, err))}
	})
	root.AddCommand(
		newInitCmd(env),
		newNewCmd(env),
		newListCmd(env),
		newStatusCmd(env),
		newNextCmd(env),
		newRedoCmd(env),
		newLogCmd(env),
		newDiffCmd(env),
		newShowCmd(env),
		newConfigCmd(env),
		newVerifyCmd(env),
		newDiagramCmd(env),
		newTestCmd(env),
		newAcceptCmd(env),
		newRevertCmd(env),
		newPlanCmd(env),
		newAnswerCmd(env),
		newReviewCmd(env),
		newCodegenCmd(env),
		newCostCmd(env),
		newAdviseCmd(env),
		newRunCmd(env),
		newDemoCmd(env),
		newReplCmd(env),
		newVersionCmd(env),
		newServeCmd(env),
		newMCPCmd(env),
		newSubmitCmd(env),
		newPullCmd(env),
		newWorkerCmd(env),
	)
	// Bare `orch` in a terminal is the REPL; elsewhere it prints help.
	root.RunE = replOrHelp(env)
	root.Args = unknownCommand
	// cobra applies its default distance (2) only where it reports unknown
	// commands itself; unknownCommand calls SuggestionsFor directly, which
	// with 0 would suggest nothing for `orch stauts`.
	root.SuggestionsMinimumDistance = 2
	for _, c := range root.Commands() {
		c.Args = wrapArgs(c.Args)
	}
	registerCompletions(root, env)
	return root
}

// wrapArgs turns cobra's argument-count errors into usage errors.
func wrapArgs(v cobra.PositionalArgs) cobra.PositionalArgs {
	if v == nil {
		return nil
	}
	return func(cmd *cobra.Command, args []string) error {
		if err := v(cmd, args); err != nil {
			if _, ours := err.(*exit.Error); ours {
				return &flagError{err: err} // with its own hint
			}
			return &flagError{err: exit.New(exit.ErrUsage, "%s", err.Error())}
		}
		return nil
	}
}

// project finds .orch/ from the working directory. Every command that
// works on a project comes through here, so this is where an `orch accept`
// or `orch revert` killed in its git effect is finished or undone
// (landing.RecoverGit: one directory read when nothing is pending).
func (env *Env) project() (*task.Project, error) {
	p, err := task.FindProject(env.Dir)
	if err != nil {
		return nil, err
	}
	env.settleGit(p)
	return p, nil
}

// settleGit runs landing.RecoverGit once per command and reports what it
// did on stderr. A failure is reported, not fatal: accept and revert
// settle their own task again and refuse while that fails.
func (env *Env) settleGit(p *task.Project) {
	if env.gitSettled {
		return
	}
	env.gitSettled = true
	settled, err := orchestrator.RecoverGit(context.Background(), p, 2*time.Second)
	for _, s := range settled {
		fmt.Fprintln(env.Stderr, termtext.Sanitize(s.String()))
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "orch: warning: %s\n", termtext.Sanitize(err.Error()))
		for _, h := range exit.Hints(err) {
			fmt.Fprintln(env.Stderr, termtext.Sanitize(h))
		}
	}
}

// taskID resolves --task, defaulting to .orch/current.
func taskID(p *task.Project, flag string) (string, error) {
	if flag != "" {
		if err := task.ValidID(flag); err != nil {
			return "", err
		}
		return flag, nil
	}
	return p.Current()
}

// openTask finds the project and opens the task named by --task (default
// the current one).
func (env *Env) openTask(flag string) (*task.Task, error) {
	p, err := env.project()
	if err != nil {
		return nil, err
	}
	tid, err := taskID(p, flag)
	if err != nil {
		return nil, err
	}
	return p.Open(tid)
}

// orchestrator builds an orchestrator for the env's project.
func (env *Env) orchestrator(wait time.Duration) (*orchestrator.Orchestrator, error) {
	p, err := env.project()
	if err != nil {
		return nil, err
	}
	o := orchestrator.New(p)
	o.Now = env.Now
	o.Wait = wait
	o.Hooks = env.Hooks
	return o, nil
}

// orchestratorFor builds an orchestrator for the env's project and resolves
// the task of --task (flag) in it.
func (env *Env) orchestratorFor(wait time.Duration, flag string) (*orchestrator.Orchestrator, string, error) {
	o, err := env.orchestrator(wait)
	if err != nil {
		return nil, "", err
	}
	tid, err := taskID(o.Project, flag)
	if err != nil {
		return nil, "", err
	}
	return o, tid, nil
}

// taskFlag adds --task to cmd.
func taskFlag(cmd *cobra.Command, dst *string) {
	cmd.Flags().StringVar(dst, "task", "", "task id (default: the current task in .orch/current)")
}

// waitFlag adds --wait to a mutating cmd.
func waitFlag(cmd *cobra.Command, dst *time.Duration) {
	cmd.Flags().DurationVar(dst, "wait", 10*time.Second, "how long to wait for the task's lock before giving up (exit 5)")
}
