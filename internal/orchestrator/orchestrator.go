// Package orchestrator is orch's reconcile step: observe a task's artifacts
// into a snapshot, decide with the lifecycle table (a pure function), and
// apply the outcome in one place — an event appended to the transcript,
// then state.json rewritten — under the task's lock.
package orchestrator

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/evidence"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/task"
)

// Orchestrator drives tasks of one project.
type Orchestrator struct {
	Project *task.Project
	Table   *lifecycle.Table
	// Now returns the current time; injected for tests.
	Now func() time.Time
	// Wait bounds how long a mutating command waits for the task lock.
	Wait time.Duration
	// Hooks are test-only crash points passed to the task store.
	Hooks task.Hooks
}

// New returns an orchestrator over project p with the standard table.
func New(p *task.Project) *Orchestrator {
	return &Orchestrator{Project: p, Table: lifecycle.Lifecycle(), Now: time.Now, Wait: 10 * time.Second}
}

func (o *Orchestrator) now() time.Time { return o.Now().UTC().Truncate(time.Millisecond) }

// EdgeView is one outgoing edge as shown by `orch status`.
type EdgeView struct {
	To     lifecycle.Phase    `json:"to"`
	Label  string             `json:"label,omitempty"`
	Cond   lifecycle.CondName `json:"condition"`
	Holds  bool               `json:"holds"`
	Reason string             `json:"reason"`
	// Unmet names the edge's requirement that did not hold once its
	// condition held (committed, new_plan, …; lifecycle.Edge.Requires).
	Unmet   lifecycle.CondName `json:"unmet,omitempty"`
	Forward bool               `json:"-"`
}

// StatusView is what `orch status` shows.
type StatusView struct {
	Task      string           `json:"task"`
	Phase     lifecycle.Phase  `json:"phase"`
	Revision  int64            `json:"revision"`
	UpdatedAt time.Time        `json:"updated_at"`
	Actors    task.Actors      `json:"actors"`
	Edges     []EdgeView       `json:"edges"`
	Suggested *lifecycle.Phase `json:"suggested"`
	Reason    string           `json:"reason"`
	// Invalid lists invalid artifacts met while deciding.
	Invalid []string `json:"invalid,omitempty"`
	// Warnings are remarks such as budgets at 80 % or more (filled by
	// the caller, which knows the configuration).
	Warnings []string `json:"warnings,omitempty"`
	// Pending is set when state.json is one step behind the transcript's
	// last durable event (an interrupted commit): the view shows that
	// event's state, which the next orch command rolls state.json to.
	Pending *task.Pending `json:"pending,omitempty"`
}

// edgeRecords is the decision's edges as the transcript records them.
func edgeRecords(d lifecycle.Decision) []event.Edge {
	out := make([]event.Edge, 0, len(d.Edges))
	for _, e := range d.Edges {
		out = append(out, event.Edge{To: e.Edge.To, Label: e.Edge.Label, Condition: e.Edge.Cond, Holds: e.Holds, Reason: e.Reason})
	}
	return out
}

func edgeViews(d lifecycle.Decision) []EdgeView {
	out := make([]EdgeView, 0, len(d.Edges))
	for _, e := range d.Edges {
		out = append(out, EdgeView{To: e.Edge.To, Label: e.Edge.Label, Cond: e.Edge.Cond, Holds: e.Holds, Reason: e.Reason, Unmet: e.Unmet, Forward: e.Edge.Forward})
	}
	return out
}

// Status inspects a task without changing anything.
func (o *Orchestrator) Status(id string) (StatusView, error) {
	t, err := o.Project.Open(id)
	if err != nil {
		return StatusView{}, err
	}
	// What is committed: state.json, or the transcript's last durable
	// state when a command was interrupted before replacing state.json.
	st, pending, err := t.CommittedState()
	if err != nil {
		return StatusView{}, err
	}
	return o.StatusFrom(t, st, pending)
}

// StatusFrom is Status of task t whose committed state the caller has
// just read (task.Task.CommittedState): the board's cards read it once
// for their ages and their decision.
func (o *Orchestrator) StatusFrom(t *task.Task, st task.State, pending *task.Pending) (StatusView, error) {
	// A reader: what did not change is taken from the observation cache.
	c := evidence.OpenCache(o.Project.Dir, t.Dir, t.ID)
	defer c.Save()
	return o.StatusCached(c, t, st, pending)
}

// StatusCached is StatusFrom observing through c, the task's observation
// cache, which the caller opened (evidence.OpenCache) and saves: the
// board's card loads the plan through it once, for its title and the
// decision.
func (o *Orchestrator) StatusCached(c *evidence.Cache, t *task.Task, st task.State, pending *task.Pending) (StatusView, error) {
	phase := st.Phase
	snap, err := o.observeCached(context.Background(), c, t, phase)
	if err != nil {
		return StatusView{}, err
	}
	d := o.Table.Decide(phase, snap)
	v := StatusView{Task: t.ID, Phase: phase, Revision: st.Revision, UpdatedAt: st.UpdatedAt, Actors: st.Actors, Edges: edgeViews(d), Reason: d.Reason, Pending: pending}
	if v.Actors == nil {
		v.Actors = task.Actors{}
	}
	if next, ok := d.Next(); ok {
		to := next.Edge.To
		v.Suggested = &to
	}
	for _, err := range d.Invalid() {
		v.Invalid = append(v.Invalid, err.Error())
	}
	return v, nil
}

// NextRequest holds the flags of `orch next`.
type NextRequest struct {
	To       lifecycle.Phase // "" means the suggested edge
	From     lifecycle.Phase // "" means any
	Override *string         // nil means no override
	// Revision is the task's revision the caller saw; 0 names none. Any
	// other revision is refused (*StaleError), nothing changed.
	Revision int64
}

// NextResult is what `orch next --json` prints.
type NextResult struct {
	Task     string          `json:"task"`
	From     lifecycle.Phase `json:"from"`
	To       lifecycle.Phase `json:"to"`
	Override bool            `json:"override"`
	Reason   string          `json:"reason"`
	Label    string          `json:"label,omitempty"`
	Skipped  []string        `json:"skipped,omitempty"`
	Archived string          `json:"archived,omitempty"`
	Revision int64           `json:"revision"`
}

// withTask locks task id, recovers it from a crash if needed, reads its
// state and runs fn, all under the lock.
func (o *Orchestrator) withTask(ctx context.Context, id string, fn func(t *task.Task, st task.State) error) error {
	t, err := o.Project.Open(id)
	if err != nil {
		return err
	}
	t.Hooks = o.Hooks
	lock, err := t.Lock(ctx, o.Wait)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	if _, err := t.Recover(o.now()); err != nil {
		return err
	}
	st, err := t.ReadState()
	if err != nil {
		return err
	}
	return fn(t, st)
}

// Next decides and takes one transition of task id.
func (o *Orchestrator) Next(ctx context.Context, id string, req NextRequest) (NextResult, error) {
	if req.Override != nil && strings.TrimSpace(*req.Override) == "" {
		return NextResult{}, blankOverride()
	}
	var res NextResult
	err := o.withTask(ctx, id, func(t *task.Task, st task.State) error {
		from := st.Phase
		if err := checkSeen(t, st, req.Revision); err != nil {
			return err
		}
		if req.From != "" && req.From != from {
			return exit.New(exit.ErrRefused, "task %s is in %s, not %s: nothing changed", t.ID, from, req.From)
		}
		if from.Terminal() {
			return terminal(t.ID)
		}
		if pid, ok := st.Actor(from).LivePID(); ok && req.Override == nil {
			return exit.New(exit.ErrRefused, "%s is running for task %s (pid %d): wait for it to finish", from, t.ID, pid)
		}
		snap, err := o.observe(ctx, t, from)
		if err != nil {
			return err
		}
		d := o.Table.Decide(from, snap)
		if req.Override != nil {
			res, err = o.override(t, st, d, snap, req, strings.TrimSpace(*req.Override))
		} else {
			res, err = o.take(t, st, d, snap, req.To)
		}
		return err
	})
	return res, err
}

// take follows a decided edge whose condition holds.
func (o *Orchestrator) take(t *task.Task, st task.State, d lifecycle.Decision, snap lifecycle.Snapshot, to lifecycle.Phase) (NextResult, error) {
	from := d.Phase
	var edge lifecycle.EdgeResult
	if to == "" {
		next, ok := d.Next()
		if !ok {
			return NextResult{}, o.noEdge(t.ID, d)
		}
		edge = next
	} else {
		direct := false
		for _, e := range d.Edges {
			direct = direct || e.Edge.To == to
		}
		if !direct {
			return NextResult{}, exit.New(exit.ErrRefused, "%s is not one step from %s (edges: %s); use --override \"REASON\" --to %s to skip phases", to, from, targets(d), to)
		}
		e, ok := d.Holding(to)
		if !ok {
			var reasons []string
			for _, e := range d.Edges {
				if e.Edge.To == to {
					reasons = append(reasons, fmt.Sprintf("%s: %s", e.Edge.Cond, e.Reason))
				}
			}
			msg := fmt.Sprintf("%s → %s refused: %s", from, to, strings.Join(reasons, "; "))
			for _, e := range d.Edges {
				if e.Edge.To == to && len(e.Invalid) > 0 {
					return NextResult{}, &exit.Error{Kind: exit.ErrInvalid, Msg: msg, Err: e.Invalid[0]}
				}
			}
			return NextResult{}, exit.New(exit.ErrRefused, "%s", msg)
		}
		edge = e
	}
	tr := event.Transition{
		From: from, To: edge.Edge.To, Label: edge.Edge.Label,
		Condition: edge.Edge.Cond, Reason: edge.Reason, Edges: edgeRecords(d), Inputs: inputs(snap),
		// A gate records the sha256 of what it judged (README, "Evidence is bound to the change").
		Evidence: snap.Evidence.Record(from, edge.Edge.To),
	}
	return o.commit(t, st, func(archived string) event.Payload {
		tr.Archived = archived
		return tr
	}, from, edge.Edge.To, edge.Reason, edge.Edge.Label)
}

// noEdge explains why nothing holds: invalid artifacts (exit 4) or unmet
// conditions (exit 3).
func (o *Orchestrator) noEdge(id string, d lifecycle.Decision) error {
	var lines []string
	for _, e := range d.Edges {
		lines = append(lines, fmt.Sprintf("  → %-11s %s: %s", e.Edge.To, e.Edge.Cond, e.Reason))
	}
	detail := strings.Join(lines, "\n")
	if inv := d.Invalid(); len(inv) > 0 {
		return exit.New(exit.ErrInvalid, "task %s stays in %s: invalid artifact: %w\n%s\nfix the file and run `orch next` again", id, d.Phase, inv[0], detail)
	}
	return exit.New(exit.ErrRefused, "task %s stays in %s: no transition holds\n%s", id, d.Phase, detail)
}

// override moves without checking conditions.
func (o *Orchestrator) override(t *task.Task, st task.State, d lifecycle.Decision, snap lifecycle.Snapshot, req NextRequest, reason string) (NextResult, error) {
	from := d.Phase
	to, label, path, err := overrideRoute(o.Table, from, req.To)
	if err != nil {
		return NextResult{}, err
	}
	skipped := []string{}
	for _, p := range path[1 : len(path)-1] {
		skipped = append(skipped, string(p))
	}
	var skippedConds []event.Edge
	for _, e := range edgeRecords(d) {
		if e.To == path[1] && !e.Holds {
			skippedConds = append(skippedConds, e)
		}
	}
	ov := event.Override{
		From: from, To: to, Reason: reason,
		Path: path, SkippedPhases: skipped, SkippedConditions: skippedConds, Edges: edgeRecords(d),
	}
	if to.Index() > from.Index() {
		// Skipping gates binds what is present: later gates and orch
		// accept hold the change to these bytes.
		ov.Evidence = snap.Evidence.Present()
	}
	res, err := o.commit(t, st, func(archived string) event.Payload {
		ov.Archived = archived
		return ov
	}, from, to, reason, label)
	res.Override = true
	res.Skipped = skipped
	return res, err
}

// commit archives stale artifacts on a backward move, appends the event
// (built once the history folder, if any, is known) and writes the new
// state.
func (o *Orchestrator) commit(t *task.Task, st task.State, payload func(archived string) event.Payload, from, to lifecycle.Phase, reason, label string) (NextResult, error) {
	res := NextResult{Task: t.ID, From: from, To: to, Reason: reason, Label: label}
	var moves []task.Move
	if to.Index() <= from.Index() && to != lifecycle.Done {
		// A regression: the target phase starts a fresh attempt; its
		// earlier artifacts and those of every later phase are stale and
		// go to history (planning's plan is revised in place).
		m, dest, err := archiveMoves(t.Dir, to, to == lifecycle.Planning, to)
		if err != nil {
			return res, err
		}
		moves, res.Archived = m, dest
	}
	ev := task.NewEvent(payload(res.Archived))
	ev.Moves = moves
	next := st
	next.Phase = to
	next.Revision = st.Revision + 1
	next.UpdatedAt = o.now()
	ev.TS = next.UpdatedAt // the event and the state it commits, on one clock (o.Now)
	next.Actors = enterPhase(st.Actors, to)
	if err := t.Commit(ev, next); err != nil {
		return res, err
	}
	res.Revision = next.Revision
	return res, nil
}

// enterPhase returns a copy of actors updated for entering phase to.
func enterPhase(actors task.Actors, to lifecycle.Phase) task.Actors {
	out := actors.Clone()
	if to == lifecycle.Done {
		return out
	}
	// The phases after the one entered have not run in this attempt: a
	// regression or a redo archived their artifacts, so what their actors
	// recorded (test passed, accept committed) would be stale.
	for p := range out {
		if p.Index() > to.Index() {
			delete(out, p)
		}
	}
	a := out[to]
	a.Status = lifecycle.EntryStatus(to)
	out[to] = a
	return out
}

func targets(d lifecycle.Decision) string {
	var ts []string
	seen := map[lifecycle.Phase]bool{}
	for _, e := range d.Edges {
		if !seen[e.Edge.To] {
			seen[e.Edge.To] = true
			ts = append(ts, string(e.Edge.To))
		}
	}
	return strings.Join(ts, ", ")
}

// RedoResult is what `orch redo` reports.
type RedoResult struct {
	Task     string          `json:"task"`
	From     lifecycle.Phase `json:"from"`
	To       lifecycle.Phase `json:"to"`
	Archived string          `json:"archived,omitempty"`
	Reason   string          `json:"reason,omitempty"`
	Revision int64           `json:"revision"`
}

// Redo re-runs phase p (default: the current phase; from done, planning):
// the artifacts of p and every later phase move to history/<n>-<p>/.
func (o *Orchestrator) Redo(ctx context.Context, id string, p lifecycle.Phase, reason string) (RedoResult, error) {
	return o.RedoSeen(ctx, id, p, reason, 0)
}

// RedoSeen is Redo by a caller that saw revision seen of the task (0:
// none): any other revision is refused (*StaleError), nothing changed.
func (o *Orchestrator) RedoSeen(ctx context.Context, id string, p lifecycle.Phase, reason string, seen int64) (RedoResult, error) {
	var res RedoResult
	err := o.withTask(ctx, id, func(t *task.Task, st task.State) error {
		if err := checkSeen(t, st, seen); err != nil {
			return err
		}
		cur := st.Phase
		target, err := RedoTarget(cur, p)
		if err != nil {
			return err
		}
		moves, dest, err := archiveMoves(t.Dir, target, false, target)
		if err != nil {
			return err
		}
		ev := task.NewEvent(event.Redo{From: cur, To: target, Reason: strings.TrimSpace(reason), Archived: dest})
		ev.Moves = moves
		next := st
		next.Phase = target
		next.Revision = st.Revision + 1
		next.UpdatedAt = o.now()
		ev.TS = next.UpdatedAt
		next.Actors = enterPhase(st.Actors, target)
		if target == lifecycle.Planning {
			a := next.Actors[target]
			a.Status = lifecycle.PlanDraft
			next.Actors[target] = a
		}
		if err := t.Commit(ev, next); err != nil {
			return err
		}
		res = RedoResult{Task: t.ID, From: cur, To: target, Archived: dest, Reason: strings.TrimSpace(reason), Revision: next.Revision}
		return nil
	})
	return res, err
}

// CheckOverride refuses, with `orch next --override`'s own messages and
// exit codes, an override of task id from phase from to phase to ("" =
// the forward edge) that Next would refuse, reading nothing: the fleet's
// override gate validates with it (docs/fleet.md). A revision the caller
// saw and a --from are checked by Next only.
func CheckOverride(t *lifecycle.Table, id string, from, to lifecycle.Phase, reason string) error {
	if strings.TrimSpace(reason) == "" {
		return blankOverride()
	}
	if from.Terminal() {
		return terminal(id)
	}
	_, _, _, err := overrideRoute(t, from, to)
	return err
}

func blankOverride() error {
	return exit.New(exit.ErrUsage, "--override needs a non-blank reason: say why the conditions are skipped, e.g. --override \"hotfix reviewed by hand\"")
}

func terminal(id string) error {
	return exit.New(exit.ErrRefused, "task %s is done (terminal): only `orch redo [PHASE]` re-opens it", id)
}

// overrideRoute is the route of an override from phase from to phase to
// ("" = the forward edge): the target, its edge's label, and the path.
func overrideRoute(t *lifecycle.Table, from, to lifecycle.Phase) (lifecycle.Phase, string, []lifecycle.Phase, error) {
	if from == lifecycle.Revert {
		return "", "", nil, exit.New(exit.ErrRefused, "nothing leaves revert by override: record the revert in revert/record.json (or run `orch revert`) and `orch next`")
	}
	label := ""
	if to == "" {
		fwd, ok := t.Forward(from)
		if !ok {
			return "", "", nil, exit.New(exit.ErrRefused, "%s has no forward edge; pass --to PHASE", from)
		}
		to, label = fwd.To, fwd.Label
	}
	if to == from {
		return "", "", nil, exit.New(exit.ErrRefused, "the task is already in %s; to re-run it use `orch redo %s`", from, from)
	}
	path, ok := t.Path(from, to)
	if !ok {
		return "", "", nil, exit.New(exit.ErrRefused, "%s is not reachable from %s through the lifecycle graph", to, from)
	}
	return to, label, path, nil
}

// RedoTarget is the phase `orch redo [p]` goes back to from phase cur (p
// "" = the current phase; from done, planning), or Redo's refusal. It
// reads nothing: the fleet's redo gate validates with it.
func RedoTarget(cur, p lifecycle.Phase) (lifecycle.Phase, error) {
	target := p
	if target == "" {
		target = cur
		if cur == lifecycle.Done {
			target = lifecycle.Planning
		}
	}
	if target == lifecycle.Done {
		return "", exit.New(exit.ErrUsage, "done cannot be redone: name a phase, e.g. `orch redo codegen`")
	}
	if cur != lifecycle.Done && target.Index() > cur.Index() {
		return "", exit.New(exit.ErrRefused, "cannot redo %s from %s: redo goes back to the current or an earlier phase (use `orch next` to move on)", target, cur)
	}
	return target, nil
}
