// Package fleetcli holds orch-fleet's commands (docs/fleet.md).
package fleetcli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/orchdev/orch/fleet"
	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/fleetlink"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/task"
)

// Main runs orch-fleet with args and returns its exit code.
func Main(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var o opts
	root := newRoot(&o, os.Stdout, os.Stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	printError(os.Stderr, o.json, err)
	return int(exit.Of(err))
}

// printError writes err as orch does (exit.Format), or with --json as
// one line holding fleetlink.Failure: orch's commands decode it and show
// the same message, hints and exit code (internal/fleetlink).
func printError(w io.Writer, asJSON bool, err error) {
	if !asJSON {
		fmt.Fprintln(w, exit.Format(err))
		return
	}
	line, merr := json.Marshal(fleetlink.FailureOf(err))
	if merr != nil {
		fmt.Fprintln(w, exit.Format(err))
		return
	}
	fmt.Fprintln(w, string(line))
}

// opts are the flags every command has: how to reach the fleet, and
// --json (the answers as fleetlink's types, errors as fleetlink.Failure).
type opts struct {
	address, namespace, remote string
	json                       bool
}

func newRoot(o *opts, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "orch-fleet",
		Short:         "orch's fleet on Temporal: workers, submit, pull, and the gates through the fleet",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.PersistentFlags().StringVar(&o.address, "temporal", "", "the Temporal frontend's HOST:PORT (default: [fleet] address)")
	root.PersistentFlags().StringVar(&o.namespace, "namespace", "", "the Temporal namespace (default: [fleet] namespace, else \"default\")")
	root.PersistentFlags().StringVar(&o.remote, "remote", "", "the git remote the machines share (default: [fleet] remote, else origin)")
	root.PersistentFlags().BoolVar(&o.json, "json", false, "print each answer as one JSON value (internal/fleetlink's types) and an error as one JSON line on stderr")
	root.AddCommand(newWorkerCmd(o), newSubmitCmd(o), newStatusCmd(o), newLogCmd(o), newPullCmd(o), newListCmd(o),
		newAnswerCmd(o), newAcceptCmd(o), newOverrideCmd(o), newRedoCmd(o), newRevertCmd(o))
	// Bad flags and arguments are usage errors (exit 2), as in orch.
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return exit.New(exit.ErrUsage, "%v", err) })
	for _, c := range root.Commands() {
		if args := c.Args; args != nil {
			c.Args = func(cmd *cobra.Command, a []string) error {
				if err := args(cmd, a); err != nil {
					return exit.New(exit.ErrUsage, "%v", err)
				}
				return nil
			}
		}
	}
	return root
}

// setup finds the project, reads [fleet] and connects.
type setup struct {
	project *task.Project
	fleet   config.Fleet
	conn    fleet.Conn
}

func (o *opts) setup() (setup, error) {
	var s setup
	wd, err := os.Getwd()
	if err != nil {
		return s, err
	}
	p, err := task.FindProject(wd)
	if err != nil {
		return s, err
	}
	cfg, err := config.Load(p.Dir)
	if err != nil {
		return s, err
	}
	s.project, s.fleet = p, cfg.Fleet
	f := cfg.Fleet
	if o.address != "" {
		f.Address = o.address
	}
	if o.namespace != "" {
		f.Namespace = o.namespace
	}
	if o.remote != "" {
		f.Remote = o.remote
	}
	if f.Remote == "" {
		f.Remote = "origin"
	}
	if f.Address == "" {
		return s, exit.New(exit.ErrUsage, "no fleet: set [fleet] address = \"HOST:PORT\" in .orch/config.toml or pass --temporal HOST:PORT (docs/fleet.md)")
	}
	s.fleet = f
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(s.project.Root, p)
	}
	s.conn = fleet.Conn{Address: f.Address, Namespace: f.Namespace, TLS: f.TLS, CAFile: abs(f.CAFile), CertFile: abs(f.CertFile), KeyFile: abs(f.KeyFile), ServerName: f.ServerName}
	if f.APIKeyEnv != "" {
		s.conn.APIKey = os.Getenv(f.APIKeyEnv)
		if s.conn.APIKey == "" {
			return s, exit.New(exit.ErrUsage, "[fleet] api_key_env names %s, which is not set in the environment", f.APIKeyEnv)
		}
	}
	return s, nil
}

func (s setup) dial(ctx context.Context) (client.Client, error) { return fleet.Dial(ctx, s.conn) }

// taskOf is the task flag's id, else the current task.
func (s setup) taskOf(flag string) (string, error) {
	if flag != "" {
		return flag, task.ValidID(flag)
	}
	return s.project.Current()
}

func newWorkerCmd(o *opts) *cobra.Command {
	var capa fleet.Capacity
	var identity, sandbox string
	var heartbeat time.Duration
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "run the fleet's phases in this clone: model runs, test runs, and with --land accept and revert",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := o.setup()
			if err != nil {
				return err
			}
			if identity == "" {
				host, _ := os.Hostname()
				identity = fmt.Sprintf("%s:%d", host, os.Getpid())
			}
			s.conn.Identity = identity
			c, err := s.dial(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			steps := &fleet.Steps{Root: s.project.Root, Remote: s.fleet.Remote, Identity: identity, Environ: os.Environ(), Sandbox: sandbox}
			fmt.Fprintf(cmd.OutOrStdout(), "orch worker %s: serving %s (models %d, tests %d, land %v) in %s\n", identity, s.conn.Address, capa.Models, capa.Tests, capa.Land, s.project.Root)
			return fleet.Serve(cmd.Context(), c, steps, capa)
		},
	}
	cmd.Flags().IntVar(&capa.Models, "models", 4, "concurrent model-backed phase runs (and short steps)")
	cmd.Flags().IntVar(&capa.Tests, "tests", 1, "concurrent test runs")
	cmd.Flags().BoolVar(&capa.Land, "land", false, "also take accept and revert: this clone holds the repository's branch")
	cmd.Flags().StringVar(&identity, "identity", "", "this worker's name in the tasks' history (default HOST:PID)")
	cmd.Flags().StringVar(&sandbox, "sandbox", "", "the test runs' sandbox: auto, bwrap or none (default: [test] sandbox)")
	_ = heartbeat
	return cmd
}

func newSubmitCmd(o *opts) *cobra.Command {
	var maxAttempts int
	var heartbeat time.Duration
	cmd := &cobra.Command{
		Use:   "submit [TASK]",
		Short: "hand a local task to the fleet: push its folder to refs/orch/tasks/<id> and start its workflow",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := o.setup()
			if err != nil {
				return err
			}
			flag := ""
			if len(args) == 1 {
				flag = args[0]
			}
			id, err := s.taskOf(flag)
			if err != nil {
				return err
			}
			if _, err := s.project.Open(id); err != nil {
				return err
			}
			c, err := s.dial(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			commit, err := fleet.Submit(cmd.Context(), c, s.project.Root, s.fleet.Remote, id, fleet.Params{MaxAttempts: maxAttempts, HeartbeatTimeout: heartbeat})
			if err != nil {
				return err
			}
			if o.json {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(fleetlink.Submitted{Task: id, Ref: fleet.TaskRef(id), Commit: commit, Workflow: fleet.WorkflowID(id)})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "submitted %s: %s at %.12s, workflow %s\n", id, fleet.TaskRef(id), commit, fleet.WorkflowID(id))
			return nil
		},
	}
	cmd.Flags().IntVar(&maxAttempts, "max-attempts", 3, "codegen runs before the task waits for a person")
	cmd.Flags().DurationVar(&heartbeat, "heartbeat", fleet.DefaultHeartbeat, "a worker silent this long is taken for dead and its step retried elsewhere")
	return cmd
}

func newStatusCmd(o *opts) *cobra.Command {
	return newQueryCmd(o, "status", "the task's status from its workflow (what orch status --json prints), and where the workflow waits",
		func(ctx context.Context, c client.Client, tid string, w io.Writer) error {
			st, err := fleet.Status(ctx, c, tid)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(w, string(st))
			return err
		})
}

func newLogCmd(o *opts) *cobra.Command {
	return newQueryCmd(o, "log", "the task's transcript from its workflow (what orch log --json prints)",
		func(ctx context.Context, c client.Client, tid string, w io.Writer) error {
			lines, err := fleet.Log(ctx, c, tid)
			if err != nil {
				return err
			}
			for _, l := range lines {
				fmt.Fprintln(w, string(l))
			}
			return nil
		})
}

// newQueryCmd is a command that asks one task's workflow (--task, default
// the current task) and prints the answer with print.
func newQueryCmd(o *opts, use, short string, print func(ctx context.Context, c client.Client, tid string, w io.Writer) error) *cobra.Command {
	var id string
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withTask(cmd, o, id, func(ctx context.Context, c client.Client, tid string) error {
				return print(ctx, c, tid, cmd.OutOrStdout())
			})
		},
	}
	cmd.Flags().StringVar(&id, "task", "", "task id (default: the current task)")
	return cmd
}

func newPullCmd(o *opts) *cobra.Command {
	return &cobra.Command{
		Use:   "pull TASK",
		Short: "bring task TASK's folder from refs/orch/tasks/TASK of the shared remote into this clone",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := o.setupLocal()
			if err != nil {
				return err
			}
			id := args[0]
			if err := task.ValidID(id); err != nil {
				return err
			}
			head, err := fleet.FetchRef(cmd.Context(), s.project.Root, s.fleet.Remote, id)
			if err != nil {
				return err
			}
			if err := fleet.Materialize(cmd.Context(), s.project.Root, id, head); err != nil {
				return err
			}
			dir := filepath.Join(task.OrchDir, "tasks", id)
			if o.json {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(fleetlink.Pulled{Task: id, Commit: head, Dir: filepath.ToSlash(dir)})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "pulled %s at %.12s into %s\n", id, head, dir)
			return nil
		},
	}
}

// setupLocal is setup for commands that need only git (pull).
func (o *opts) setupLocal() (setup, error) {
	addr := o.address
	if addr == "" {
		o.address = "unused:0"
	}
	s, err := o.setup()
	o.address = addr
	return s, err
}

func newListCmd(o *opts) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "the fleet's tasks by phase, and the workers polling each queue",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := o.setup()
			if err != nil {
				return err
			}
			c, err := s.dial(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			l, err := fleet.List(cmd.Context(), c)
			if err != nil {
				return err
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			if !o.json {
				enc.SetIndent("", "  ")
			}
			return enc.Encode(l)
		},
	}
}

func withTask(cmd *cobra.Command, o *opts, flag string, fn func(ctx context.Context, c client.Client, id string) error) error {
	s, err := o.setup()
	if err != nil {
		return err
	}
	id, err := s.taskOf(flag)
	if err != nil {
		return err
	}
	c, err := s.dial(cmd.Context())
	if err != nil {
		return err
	}
	defer c.Close()
	return fn(cmd.Context(), c, id)
}

func gate(cmd *cobra.Command, o *opts, flag, name string, req any) error {
	return withTask(cmd, o, flag, func(ctx context.Context, c client.Client, id string) error {
		res, err := fleet.Gate(ctx, c, id, name, req)
		if err != nil {
			return err
		}
		return json.NewEncoder(cmd.OutOrStdout()).Encode(fleetlink.GateResult{Task: id, Phase: res.Phase, Revision: res.Revision, Commit: res.Commit})
	})
}

func newAnswerCmd(o *opts) *cobra.Command {
	var id string
	cmd := &cobra.Command{
		Use:   "answer ID TEXT",
		Short: "answer a planner's question through the fleet",
		Args:  cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return gate(cmd, o, id, fleet.UpdateAnswer, fleet.AnswerRequest{Question: args[0], Text: strings.Join(args[1:], " ")})
		},
	}
	cmd.Flags().StringVar(&id, "task", "", "task id (default: the current task)")
	return cmd
}

func newAcceptCmd(o *opts) *cobra.Command {
	var id string
	var r fleet.AcceptRequest
	cmd := &cobra.Command{
		Use:   "accept --verdict V --reason R",
		Short: "record the accept decision through the fleet (the landing worker commits an accepted change)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if r.Decider == "" {
				r.Decider = os.Getenv("USER")
			}
			return gate(cmd, o, id, fleet.UpdateAccept, r)
		},
	}
	cmd.Flags().StringVar(&id, "task", "", "task id (default: the current task)")
	cmd.Flags().StringVar(&r.Verdict, "verdict", "", "accepted, changes_requested, rejected or revert")
	cmd.Flags().StringVar(&r.Target, "to", "", "with changes_requested: codegen, review or planning")
	cmd.Flags().StringArrayVar(&r.Reasons, "reason", nil, "why (repeatable)")
	cmd.Flags().BoolVar(&r.AllowIncomplete, "allow-incomplete", false, "accept although the tests failed or are missing")
	cmd.Flags().Int64Var(&r.Revision, "expect", 0, "the task's revision you decided on")
	cmd.Flags().StringVar(&r.Decider, "decider", "", "who decides (default $USER)")
	return cmd
}

func newOverrideCmd(o *opts) *cobra.Command {
	var id, to string
	var r fleet.OverrideRequest
	cmd := &cobra.Command{
		Use:   "next --override R [--to PHASE]",
		Short: "move the task without checking the conditions, with a logged reason, through the fleet",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("override") {
				return exit.New(exit.ErrUsage, "through the fleet, next takes --override \"REASON\": the workflow takes the transitions that hold by itself")
			}
			r.To = lifecycle.Phase(to)
			return gate(cmd, o, id, fleet.UpdateOverride, r)
		},
	}
	cmd.Flags().StringVar(&id, "task", "", "task id (default: the current task)")
	cmd.Flags().StringVar(&r.Reason, "override", "", "why the conditions are skipped")
	cmd.Flags().StringVar(&to, "to", "", "the phase to move to (default: the forward edge)")
	return cmd
}

func newRedoCmd(o *opts) *cobra.Command {
	var id string
	var r fleet.RedoRequest
	cmd := &cobra.Command{
		Use:   "redo [PHASE]",
		Short: "re-run a phase through the fleet",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				r.Phase = lifecycle.Phase(args[0])
			}
			return gate(cmd, o, id, fleet.UpdateRedo, r)
		},
	}
	cmd.Flags().StringVar(&id, "task", "", "task id (default: the current task)")
	cmd.Flags().StringVar(&r.Reason, "reason", "", "why the phase is redone (logged)")
	return cmd
}

func newRevertCmd(o *opts) *cobra.Command {
	var id, reason string
	cmd := &cobra.Command{
		Use:   "revert --reason R",
		Short: "carry out a requested revert through the fleet (on the landing worker)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return gate(cmd, o, id, fleet.UpdateRevert, reason)
		},
	}
	cmd.Flags().StringVar(&id, "task", "", "task id (default: the current task)")
	cmd.Flags().StringVar(&reason, "reason", "", "why the change is reverted")
	return cmd
}
