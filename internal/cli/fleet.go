package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/fleetlink"
	"github.com/orchdev/orch/internal/landing"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/task"
	"github.com/orchdev/orch/internal/termtext"
)

// Where a task's commands run (docs/fleet.md, "orch's commands and the
// fleet"): a task is the fleet's when this clone has its fleet ref
// refs/remotes/orch-fleet/tasks/<id> (written by orch submit, orch pull
// and the fleet's workers) and [fleet] is configured; its status, log and
// gate actions then go through orch-fleet (internal/fleetlink). --local
// reads and acts on the clone's own folder; --fleet asks the fleet for a
// task this clone has no ref of (submitted from another machine). Without
// [fleet] nothing of this costs more than looking for the ref, and no
// process is started.

// fleetFlags are --local and --fleet.
type fleetFlags struct{ local, fleet bool }

// fleetFlagsOn adds --local and --fleet to cmd.
func fleetFlagsOn(cmd *cobra.Command, f *fleetFlags) {
	cmd.Flags().BoolVar(&f.local, "local", false, "work on this clone's folder of the task even when it is in the fleet")
	cmd.Flags().BoolVar(&f.fleet, "fleet", false, "ask the fleet ([fleet] in .orch/config.toml) even when this clone has no ref of the task")
}

// noFleet is the refusal of a fleet command without [fleet].
func noFleet() error {
	return exit.New(exit.ErrUsage, "no fleet: set [fleet] address = \"HOST:PORT\" in .orch/config.toml (docs/fleet.md)")
}

// fleetTask decides where the command on task flag runs: a link to the
// fleet and the task's id when the task is the fleet's, nil when it runs
// here.
func (env *Env) fleetTask(f fleetFlags, flag string) (*fleetlink.Link, string, error) {
	if f.local && f.fleet {
		return nil, "", exit.New(exit.ErrUsage, "--local and --fleet together: choose where the task is read")
	}
	if f.local {
		return nil, "", nil
	}
	p, err := task.FindProject(env.Dir)
	if err != nil {
		if f.fleet {
			return nil, "", err
		}
		return nil, "", nil // the local command says what is wrong
	}
	id, err := taskID(p, flag)
	if err != nil {
		if f.fleet {
			return nil, "", err
		}
		return nil, "", nil
	}
	if !f.fleet {
		if known, err := fleetlink.Known(p.Root, id); err != nil || !known {
			return nil, "", nil
		}
	}
	l, err := env.fleetLink(p, f.fleet)
	if l == nil || err != nil {
		return nil, "", err
	}
	return l, id, nil
}

// localFlag adds --local to a command that runs a phase's work here.
func localFlag(cmd *cobra.Command, dst *bool) {
	cmd.Flags().BoolVar(dst, "local", false, "run it on this clone's folder of the task even when the task is in the fleet")
}

// notInFleet refuses to run a phase's work (an agent, orch run, orch
// test) on this clone's copy of a task that is in the fleet: the fleet's
// workers run its phases, and work done here would never reach its
// workflow. --local (local) runs it here anyway.
func notInFleet(p *task.Project, cfg config.Config, tid, what string, local bool) error {
	if local || !cfg.Fleet.Configured() {
		return nil
	}
	if known, err := fleetlink.Known(p.Root, tid); err != nil || !known {
		return nil
	}
	return fleetlink.NotHere(tid, what).WithHint("--local runs %s on this clone's copy anyway (the fleet never sees that work)", what)
}

// fleetLink is the link to the fleet of project p: nil when [fleet] is
// not configured (an error when required).
func (env *Env) fleetLink(p *task.Project, required bool) (*fleetlink.Link, error) {
	cfg, err := config.Load(p.Dir)
	if err != nil {
		return nil, err
	}
	if !cfg.Fleet.Configured() {
		if required {
			return nil, noFleet()
		}
		return nil, nil
	}
	l, err := fleetlink.Open(p.Root, cfg.Fleet)
	if err != nil {
		return nil, err
	}
	l.Env = env.environ()
	return l, nil
}

// projectFleet is the project's link to its fleet, which must be
// configured (orch submit, orch pull, orch list --fleet).
func (env *Env) projectFleet() (*task.Project, *fleetlink.Link, error) {
	p, err := env.project()
	if err != nil {
		return nil, nil, err
	}
	l, err := env.fleetLink(p, true)
	return p, l, err
}

// printGate prints what a gate's action through the fleet did.
func printGate(w io.Writer, asJSON bool, what string, r fleetlink.GateResult) error {
	if asJSON {
		return json.NewEncoder(w).Encode(r)
	}
	fmt.Fprintf(w, "%s through the fleet: task %s is in %s, revision %d", what, termtext.Line(r.Task), r.Phase, r.Revision)
	if r.Commit != "" {
		fmt.Fprintf(w, " (its ref at %.12s)", r.Commit)
	}
	fmt.Fprintln(w)
	return nil
}

// fleetStatus prints a fleet task's status as orch status does.
func (env *Env) fleetStatus(ctx context.Context, cmd *cobra.Command, l *fleetlink.Link, id string, asJSON bool) error {
	st, err := l.Status(ctx, id)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if asJSON {
		_, err := fmt.Fprintf(out, "%s\n", st.Raw)
		return err
	}
	sj := st.Status
	for i, w := range sj.Warnings {
		sj.Warnings[i] = env.words(w)
	}
	sj.Reason = env.words(sj.Reason)
	printStatus(out, env.style(out), sj.StatusView)
	if sj.Commit != "" {
		fmt.Fprintf(out, "commit: %s (orch's commit of the change)\n", sj.Commit)
	}
	if sj.Run != "" {
		fmt.Fprintf(out, "fleet: the task's workflow takes its steps; its next one: %s\n", env.command(sj.Run))
	} else {
		fmt.Fprintln(out, "fleet: the task's workflow has no step left")
	}
	return nil
}

// fleetAccept sends orch accept's decision o through the fleet; the
// landing worker commits an accepted change. The decision is given on the
// command line (the fleet has no terminal to ask in and no
// accept/decision.json of this clone), and --expect names a revision.
func (env *Env) fleetAccept(cmd *cobra.Command, l *fleetlink.Link, id string, o landing.AcceptOptions, decider, expect string, asJSON bool) error {
	d := fleetlink.Decision{Verdict: o.Verdict, Target: o.Target, Reasons: o.Reasons, AllowIncomplete: o.AllowIncomplete}
	if expect != "" {
		rev, err := strconv.ParseInt(expect, 10, 64)
		if err != nil || rev <= 0 {
			return exit.New(exit.ErrUsage, "--expect %q: through the fleet, --expect takes the task's revision (orch status shows it)", expect)
		}
		d.Revision = rev
	}
	if d.Verdict != "" {
		d.Decider = deciderName(env, decider)
	}
	res, err := l.Accept(cmd.Context(), id, d)
	if err != nil {
		return err
	}
	return printGate(cmd.OutOrStdout(), asJSON, "decision "+d.Verdict+" recorded", res)
}

// printFleetListing prints the fleet's running tasks by phase (in the
// lifecycle's order) and its workers by queue, after orch list's table.
func printFleetListing(w io.Writer, l fleetlink.Listing) {
	n := 0
	for _, ts := range l.Phases {
		n += len(ts)
	}
	fmt.Fprintf(w, "\nfleet: %d running task(s)\n", n)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, p := range lifecycle.Phases() {
		for _, t := range l.Phases[p] {
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\n", termtext.Line(t.Task), p, t.Revision, termtext.Line(t.Waiting))
		}
	}
	for _, p := range slices.Sorted(maps.Keys(l.Phases)) {
		if !slices.Contains(lifecycle.Phases(), p) {
			for _, t := range l.Phases[p] {
				fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\n", termtext.Line(t.Task), termtext.Line(string(p)), t.Revision, termtext.Line(t.Waiting))
			}
		}
	}
	_ = tw.Flush()
	for _, q := range slices.Sorted(maps.Keys(l.Workers)) {
		ws := l.Workers[q]
		names := "none"
		if len(ws) > 0 {
			names = termtext.Line(strings.Join(ws, ", "))
		}
		fmt.Fprintf(w, "workers on %s: %s\n", termtext.Line(q), names)
	}
}
