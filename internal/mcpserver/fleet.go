package mcpserver

import (
	"context"
	"fmt"

	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/fleetlink"
	"github.com/orchdev/orch/internal/nextstep"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/view"
)

// A task is the fleet's when [fleet] is configured and this clone has its
// fleet ref (fleetlink.Known; docs/fleet.md, "orch's commands and the
// fleet"): then status, log and the gates go through orch-fleet, as the
// CLI's do. The gate's Update is the record of a fleet task's action (the
// workflow's history, and the event the step writes in the task's
// transcript); no mcp_call event is written into this clone's copy of the
// folder, which is not the task's.

// fleetTask is the link to the fleet and the task's id when task arg is
// the fleet's; nil when it is local.
func (s *Server) fleetTask(arg string) (*fleetlink.Link, string, error) {
	id, err := s.taskID(arg)
	if err != nil {
		return nil, "", nil // the local path refuses it
	}
	if known, err := fleetlink.Known(s.project.Root, id); err != nil || !known {
		return nil, "", nil
	}
	cfg, err := s.config()
	if err != nil {
		return nil, id, err
	}
	if !cfg.Fleet.Configured() {
		return nil, "", nil
	}
	l, err := fleetlink.Open(s.project.Root, cfg.Fleet)
	if err != nil {
		return nil, id, err
	}
	if s.opt.Environ != nil {
		l.Env = s.opt.Environ()
	}
	return l, id, nil
}

// notInFleet refuses tool's work on this clone's copy of task arg when
// the task is the fleet's: its workers run its phases (run_phase,
// submit_code and write_artifact would change a copy its workflow never
// reads).
func (s *Server) notInFleet(arg, tool string) error {
	id, err := s.taskID(arg)
	if err != nil {
		return nil // the tool itself refuses it
	}
	if known, err := fleetlink.Known(s.project.Root, id); err != nil || !known {
		return nil
	}
	if cfg, err := s.config(); err != nil || !cfg.Fleet.Configured() {
		return nil
	}
	return fleetlink.NotHere(id, tool)
}

// fleetNext is the next step of a fleet task whose status names run:
// a person's or agent's action at a gate, else waiting for the workflow.
func (s *Server) fleetNext(id, run string) Next {
	n := s.nextOf(id, nextstep.Step{Args: run})
	switch n.Tool {
	case ToolAnswer, ToolAccept, ToolRevert:
		n.Why = "the task is in the fleet and waits at a gate"
		return n
	}
	if n.Human {
		return n
	}
	why := "the task is in the fleet: its workflow takes the next step"
	if run != "" {
		why += " (orch " + run + ")"
	}
	return Next{Tool: ToolStatus, Arguments: map[string]string{"task": id}, Why: why + "; look at its status again later"}
}

// fleetStatus is status for a fleet task.
func (s *Server) fleetStatus(ctx context.Context, l *fleetlink.Link, id string) (StatusOutput, error) {
	st, err := l.Status(ctx, id)
	if err != nil {
		return StatusOutput{}, err
	}
	return StatusOutput{Status: st.Status, Next: s.fleetNext(id, st.Run)}, nil
}

// fleetSeen refuses an action on a fleet task whose revision is no longer
// rev (0: none named), from the workflow's status just before the action;
// it returns that status.
func fleetSeen(ctx context.Context, l *fleetlink.Link, id string, rev int64) (view.Status, error) {
	st, err := l.Status(ctx, id)
	if err != nil {
		return view.Status{}, err
	}
	if rev != 0 && st.Revision != rev {
		return view.Status{}, exit.New(exit.ErrRefused, "task %s moved on since revision %d: it is at revision %d, in %s; nothing done", id, rev, st.Revision, st.Phase).
			WithHint("read its status again and decide on what it is now")
	}
	return st.Status, nil
}

// fleetGate runs a gate's action on a fleet task through the link: the
// [mcp] allow check (gate "" for answer), the revision read, then do; it
// returns the status before and the result.
func (s *Server) fleetGate(ctx context.Context, l *fleetlink.Link, gate, id string, rev int64, do func() (fleetlink.GateResult, error)) (view.Status, fleetlink.GateResult, error) {
	if gate != "" {
		if err := s.gate(gate); err != nil {
			return view.Status{}, fleetlink.GateResult{}, err
		}
	}
	before, err := fleetSeen(ctx, l, id, rev)
	if err != nil {
		return view.Status{}, fleetlink.GateResult{}, err
	}
	res, err := do()
	return before, res, err
}

// fleetLog is log for a fleet task: the events of its workflow.
func (s *Server) fleetLog(ctx context.Context, l *fleetlink.Link, id string, in LogInput) (LogOutput, error) {
	evs, err := l.Log(ctx, id)
	if err != nil {
		return LogOutput{}, err
	}
	out := pageLog(id, evs, in)
	st, err := l.Status(ctx, id)
	if err == nil {
		out.Next = s.fleetNext(id, st.Run)
	} else {
		out.Next = Next{Tool: ToolStatus, Arguments: map[string]string{"task": id}, Why: fmt.Sprintf("the fleet's status could not be read: %v", err)}
	}
	return out, nil
}

// fleetNextOutput is next's and override's result for a fleet task.
func fleetNextOutput(id string, before view.Status, res fleetlink.GateResult, reason string, next Next) NextOutput {
	return NextOutput{NextResult: orchestrator.NextResult{Task: id, From: before.Phase, To: res.Phase, Override: true, Reason: reason, Revision: res.Revision}, Fleet: &res, Next: next}
}

// fleetListing is the fleet's listing for list_tasks, nil when no fleet
// is configured.
func (s *Server) fleetListing(ctx context.Context) (*fleetlink.Listing, error) {
	cfg, err := s.config()
	if err != nil || !cfg.Fleet.Configured() {
		return nil, err
	}
	l, err := fleetlink.Open(s.project.Root, cfg.Fleet)
	if err != nil {
		return nil, err
	}
	if s.opt.Environ != nil {
		l.Env = s.opt.Environ()
	}
	fl, err := l.List(ctx)
	if err != nil {
		return nil, err
	}
	return &fl, nil
}

// fleetRefuse is the tool's error for a fleet task's refusal.
func (s *Server) fleetRefuse(id string, err error) error {
	return &toolError{err: err, next: Next{Tool: ToolStatus, Arguments: map[string]string{"task": id}, Why: "the task is in the fleet: read its status"}}
}
