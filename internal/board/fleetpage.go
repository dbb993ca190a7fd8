package board

import (
	"context"
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/fleetlink"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/nextstep"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/task"
)

// FleetPage is the page of a fleet task: what the fleet returns for it
// (its status and log, and from its listing why its workflow waits), and
// the gate actions that go to the fleet.
type FleetPage struct {
	// Card's Err says why the fleet's status could not be read: the
	// page shows it and offers no action.
	Card
	Revision int64
	Updated  time.Time
	Status   orchestrator.StatusView
	// Step is the command `orch status` names for the task.
	Step nextstep.Step
	// Commit is, in done, orch's commit of the change (found by the
	// fleet in the landing clone's branch).
	Commit string
	// Waiting is why the task's workflow waits for a person, "" while
	// it moves (or when the listing did not answer).
	Waiting string
	// LogErr says why the log could not be read.
	LogErr     string
	Diagram    template.HTML
	Mermaid    string
	Timeline   []Entry
	Stays      []Stay
	CostPhases []agent.PhaseCost
	CostTotal  agent.CostLine
	// Questions are the open questions the fleet's workflow waits for
	// (else the one the status names: "answer q1 TEXT").
	Questions  []artifact.Question
	CanAnswer  bool
	CanAccept  bool
	CanRevert  bool
	CanAct     bool
	OverrideTo []lifecycle.Phase
	Forward    lifecycle.Phase // where an override without --to goes ("" none)
	RedoTo     []lifecycle.Phase
	Targets    []string
	Job        *Job
	// JobState is the job as it was before the fleet was read: a job
	// that ends meanwhile shows as running, and its end reloads the
	// page, never a finished job over what the fleet said before it.
	JobState JobState
	Tasks    []NavTask
	// Ref is the task's ref on the shared remote (its folder).
	Ref string
}

// fleetPage reads task id's page from the fleet: its status, its log and
// the listing, at once.
func (s *Server) fleetPage(ctx context.Context, id string) *FleetPage {
	pg := &FleetPage{Card: Card{ID: id, Title: s.fleetTitle(id), Fleet: true}, Ref: "refs/orch/tasks/" + id, Targets: []string{"codegen", "review", "planning"}}
	if pg.Job = s.jobs.last(id); pg.Job != nil {
		pg.JobState = pg.Job.State(0)
	}
	if s.fleet.broken != nil {
		pg.Err = exit.Format(s.fleet.broken)
		return pg
	}
	var (
		wg     sync.WaitGroup
		st     fleetlink.Status
		stErr  error
		evs    []task.Event
		logErr error
		l      fleetlink.Listing
		lErr   error
	)
	wg.Add(3)
	go func() { defer wg.Done(); st, stErr = s.fleet.link.Status(ctx, id) }()
	go func() { defer wg.Done(); evs, logErr = s.fleet.link.Log(ctx, id) }()
	go func() { defer wg.Done(); l, lErr = s.fleet.list(ctx, false) }()
	wg.Wait()
	pg.Tasks = s.fleetNav(l, lErr)
	if stErr != nil {
		pg.Err = exit.Format(stErr)
		return pg
	}
	// Why the workflow waits, when the listing is of the revision the
	// status is (a listing read while an action went on may be older).
	if lErr == nil {
		if tl, _, ok := line(l, id); ok && tl.Revision == st.Revision {
			pg.Waiting = tl.Waiting
		}
	}
	v := st.StatusView
	pg.Phase, pg.Status, pg.Revision, pg.Updated, pg.Commit = v.Phase, v, v.Revision, v.UpdatedAt, st.Commit
	pg.Step = nextstep.Step{Args: st.Run, Why: v.Reason}
	pg.Waits, pg.Human = fleetWaits(v.Phase, pg.Waiting)
	pg.Why = pg.Waiting
	if pg.Questions = openQuestionsOf(pg.Waiting); len(pg.Questions) == 0 {
		if q, ok := strings.CutPrefix(st.Run, "answer "); ok {
			id, _, _ := strings.Cut(q, " ")
			pg.Questions = []artifact.Question{{ID: id, Blocking: true}}
		}
	}
	pg.Diagram = diagramSVG(s.orch.Table, v.Phase, v.Suggested)
	pg.Mermaid = s.orch.Table.Mermaid()
	if logErr != nil {
		pg.LogErr = exit.Format(logErr)
	} else {
		pg.Timeline = timeline(evs)
		spans := phaseSpans(evs)
		pg.Stays = stays(spans, s.now())
		if len(spans) > 0 {
			if last := spans[len(spans)-1]; last.Phase == v.Phase {
				pg.InPhase = ago(last.Took(s.now()))
			}
		}
		for _, ev := range evs {
			if ev.Kind == "created" {
				pg.Age = ago(s.now().Sub(ev.TS))
				break
			}
		}
		cs := agent.SumCosts(task.ModelCalls(evs))
		pg.CostPhases, pg.CostTotal = cs.Phases, cs.Total
		if cs.Total.Calls > 0 {
			pg.Cost = agent.FormatUSD(cs.Total.CostUSD)
		}
		pg.Tokens = cs.Total.TokensIn + cs.Total.TokensOut
	}
	running := pg.Job != nil && !pg.JobState.Done
	pg.CanAct = !running
	pg.CanAnswer = v.Phase == lifecycle.Planning && !running && len(pg.Questions) > 0
	pg.CanAccept = v.Phase == lifecycle.Accept && !running
	pg.CanRevert = v.Phase == lifecycle.Revert && !running
	pg.OverrideTo, pg.RedoTo = gateTargets(s.orch.Table, v.Phase)
	if e, ok := s.orch.Table.Forward(v.Phase); ok {
		pg.Forward = e.To
	}
	return pg
}

// fleetNav is the task list of a fleet task's page: the local tasks the
// fleet does not own and the fleet's listed tasks.
func (s *Server) fleetNav(l fleetlink.Listing, lErr error) []NavTask {
	var out []NavTask
	for _, n := range s.navTasks() {
		if !s.known(n.ID) {
			out = append(out, n)
		}
	}
	if lErr == nil {
		for _, p := range lifecycle.Phases() {
			for _, tl := range l.Phases[p] {
				out = append(out, NavTask{ID: tl.Task, Phase: p, Fleet: true})
			}
		}
	}
	return out
}

// gateTargets are the phases an override may go to from phase (those
// reachable through the graph, Table.Path; none from done or revert) and
// those a redo may go back to (up to the current one; every phase from
// done): what the override and redo forms offer.
func gateTargets(t *lifecycle.Table, phase lifecycle.Phase) (override, redo []lifecycle.Phase) {
	if phase != lifecycle.Done && phase != lifecycle.Revert {
		for _, p := range lifecycle.Phases() {
			if p == phase {
				continue
			}
			if _, ok := t.Path(phase, p); ok {
				override = append(override, p)
			}
		}
	}
	for _, p := range lifecycle.Phases() {
		if p != lifecycle.Done && p.Index() <= max(phase.Index(), 0) || phase == lifecycle.Done && p != lifecycle.Done {
			redo = append(redo, p)
		}
	}
	return override, redo
}

// handleFleetTask renders a fleet task's page.
func (s *Server) handleFleetTask(w http.ResponseWriter, r *http.Request, id string) {
	stamp := s.watch.Gen()
	pg := s.fleetPage(r.Context(), id)
	p := page{Title: pg.Title + " · orch fleet", Task: id, F: pg, Stamp: stamp}
	if f, ok := s.takeFlash(r.URL.Query().Get("flash")); ok && f.Task == id && !(f.Started && pg.Job != nil && !pg.Job.Running()) {
		p.Flash = &f
	}
	s.render(w, "fleet.tmpl", p)
}

// fleetConflict answers a gate form of a fleet task's page older than the
// task: 409 and the page as the fleet now returns it, the refusal on top.
func (s *Server) fleetConflict(w http.ResponseWriter, r *http.Request, id string, e *orchestrator.StaleError) {
	stamp := s.watch.Gen()
	pg := s.fleetPage(r.Context(), id)
	f := flash{Task: id, Text: exit.Prefix + e.Explain("after this page was loaded"), Code: int(exit.Refused), Exit: exitWords[exit.Refused], at: s.now()}
	s.renderStatus(w, "fleet.tmpl", page{Title: pg.Title + " · orch fleet", Task: id, F: pg, Stamp: stamp, Flash: &f}, http.StatusConflict)
}

// fleetSeen refuses a form whose revision is not the task's revision as
// the fleet returns it now (the page was loaded before the task moved).
// The fleet's own checks run again when the action is carried out: its
// Update's validator on the workflow's last observation, and orch's
// engine under the task's lock on the worker.
func (s *Server) fleetSeen(ctx context.Context, r *http.Request, id string) error {
	seen, err := seenRevision(r)
	if err != nil {
		return err
	}
	if s.fleet.broken != nil {
		return s.fleet.broken
	}
	st, err := s.fleet.link.Status(ctx, id)
	if err != nil {
		return err
	}
	if st.Revision != seen {
		return &orchestrator.StaleError{Task: id, Seen: seen, Now: st.Revision}
	}
	return nil
}

// fleetAct checks what the page showed and sends a gate action to the
// fleet as a job: the fleet's Update returns once a worker carried it
// out, which can take a while when the workers are busy. Its progress and
// outcome (or the fleet's refusal, with orch's message and exit code)
// show on the task page.
func (s *Server) fleetAct(w http.ResponseWriter, r *http.Request, id, action, command string, send func(ctx context.Context, l *fleetlink.Link) (fleetlink.GateResult, error)) {
	if err := s.fleetSeen(r.Context(), r, id); err != nil {
		s.failed(w, r, id, err)
		return
	}
	link := s.fleet.link
	s.launch(w, r, id, "fleet "+action, nil, func(ctx context.Context, j *Job) (string, error) {
		j.say("sent to the fleet: orch-fleet " + command)
		// The next read asks the fleet again (and publishes what
		// changed); this task's page reloads at once.
		defer func() {
			s.fleet.invalidate(id)
			s.watch.publish([]string{id})
		}()
		res, err := send(ctx, link)
		if err != nil {
			return "", err
		}
		return fleetDescribe(res), nil
	})
}

// The gate actions of a fleet task: each is the orch-fleet command the
// CLI's fleet commands run (docs/fleet.md, "Gates and queries").

func (s *Server) fleetAnswer(w http.ResponseWriter, r *http.Request, id string) {
	qid := strings.TrimSpace(r.PostForm.Get("question"))
	text := strings.TrimRight(r.PostForm.Get("answer"), "\r\n")
	s.fleetAct(w, r, id, "answer", fmt.Sprintf("answer --task %s %s …", id, qid), func(ctx context.Context, l *fleetlink.Link) (fleetlink.GateResult, error) {
		return l.Answer(ctx, id, qid, text)
	})
}

func (s *Server) fleetAccept(w http.ResponseWriter, r *http.Request, id string, d fleetlink.Decision) {
	s.fleetAct(w, r, id, "accept", fmt.Sprintf("accept --task %s --verdict %s", id, d.Verdict), func(ctx context.Context, l *fleetlink.Link) (fleetlink.GateResult, error) {
		return l.Accept(ctx, id, d)
	})
}

func (s *Server) fleetOverride(w http.ResponseWriter, r *http.Request, id, reason string, to lifecycle.Phase) {
	cmd := fmt.Sprintf("next --task %s --override …", id)
	if to != "" {
		cmd += " --to " + string(to)
	}
	s.fleetAct(w, r, id, "override", cmd, func(ctx context.Context, l *fleetlink.Link) (fleetlink.GateResult, error) {
		return l.Override(ctx, id, reason, to)
	})
}

func (s *Server) fleetRedo(w http.ResponseWriter, r *http.Request, id string, p lifecycle.Phase, reason string) {
	s.fleetAct(w, r, id, "redo", strings.TrimSpace(fmt.Sprintf("redo --task %s %s", id, p)), func(ctx context.Context, l *fleetlink.Link) (fleetlink.GateResult, error) {
		return l.Redo(ctx, id, p, reason)
	})
}

func (s *Server) fleetRevert(w http.ResponseWriter, r *http.Request, id, reason string) {
	s.fleetAct(w, r, id, "revert", fmt.Sprintf("revert --task %s --reason …", id), func(ctx context.Context, l *fleetlink.Link) (fleetlink.GateResult, error) {
		return l.Revert(ctx, id, reason)
	})
}
