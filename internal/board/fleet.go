package board

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/clip"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/fleetlink"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/nextstep"
	"github.com/orchdev/orch/internal/orchestrator"
)

// The board against the fleet (docs/board.md, "The board and the fleet"):
// when [fleet] is configured, the fleet's tasks are a second source of
// cards beside the task folders. What the board knows of them is what
// orch-fleet answers through internal/fleetlink — the listing (tasks by
// phase, what each workflow waits for), a task's status and log — and its
// gate actions are orch-fleet's, whose refusals keep orch's message and
// exit code. The Temporal SDK is never linked into orch.

// defaultFleetPoll is how often the board asks the fleet for its listing
// while a page is open (the fleet's changes happen on other machines: no
// file tells of them).
const defaultFleetPoll = 2 * time.Second

// fleetSource is the fleet as the board reads it: the link to orch-fleet
// and the last listing, shared by the board's pages and its poller.
type fleetSource struct {
	link *fleetlink.Link
	// broken is why the fleet cannot be asked at all (orch-fleet not
	// found): shown on the board, every fleet task's page says it.
	broken error
	poll   time.Duration
	// publish tells the board's pages which tasks changed (the
	// watcher's publish).
	publish func([]string)

	fetch sync.Mutex // one listing read at a time

	mu      sync.Mutex
	listing fleetlink.Listing
	listErr error
	at      time.Time // when the listing was read; zero: read it again
	// gen counts invalidations: a listing whose read began before one
	// is not kept (it may predate the action that invalidated it).
	gen int64
	// seen is what the last listing said, per task (nil before the
	// first): every listing read is compared with the one before.
	seen map[string]fleetSig
	// ended caches the status of tasks this clone knows (their local
	// ref) that the listing no longer names: their workflow ended.
	ended map[string]endedStatus
}

// fleetSig tells a fleet task's change: its phase, revision and what its
// workflow waits for.
type fleetSig struct {
	phase    lifecycle.Phase
	revision int64
	waiting  string
}

type endedStatus struct {
	st  fleetlink.Status
	err error
	at  time.Time
}

// endedTTL is how long an ended task's status is kept before it is asked
// again.
const endedTTL = time.Minute

func newFleetSource(link *fleetlink.Link, broken error, poll time.Duration, publish func([]string)) *fleetSource {
	if poll <= 0 {
		poll = defaultFleetPoll
	}
	return &fleetSource{link: link, broken: broken, poll: poll, publish: publish, ended: map[string]endedStatus{}}
}

// list returns the fleet's listing, read again when older than the poll
// interval (or when fresh is set). A listing read that differs from the
// one before publishes the tasks that changed, whoever read it: a page
// rendered from a listing is told of every later change.
func (f *fleetSource) list(ctx context.Context, fresh bool) (fleetlink.Listing, error) {
	if f.broken != nil {
		return fleetlink.Listing{}, f.broken
	}
	f.fetch.Lock()
	defer f.fetch.Unlock()
	f.mu.Lock()
	if !fresh && !f.at.IsZero() && time.Since(f.at) < f.poll {
		l, err := f.listing, f.listErr
		f.mu.Unlock()
		return l, err
	}
	gen := f.gen
	f.mu.Unlock()
	l, err := f.link.List(ctx)
	if ctx.Err() != nil {
		return l, err // the request went away: nothing learnt
	}
	f.mu.Lock()
	if gen == f.gen {
		f.listing, f.listErr, f.at = l, err, time.Now()
	}
	f.mu.Unlock()
	if err == nil {
		if ids := f.changes(l); len(ids) > 0 && f.publish != nil {
			f.publish(ids)
		}
	}
	return l, err
}

// invalidate makes the next read ask the fleet again (a gate action
// changed a task).
func (f *fleetSource) invalidate(id string) {
	f.mu.Lock()
	f.at = time.Time{}
	f.gen++
	delete(f.ended, id)
	f.mu.Unlock()
}

// line finds task id in a listing.
func line(l fleetlink.Listing, id string) (fleetlink.TaskLine, lifecycle.Phase, bool) {
	for p, ls := range l.Phases {
		for _, tl := range ls {
			if tl.Task == id {
				return tl, p, true
			}
		}
	}
	return fleetlink.TaskLine{}, "", false
}

// endedStatus returns the status of a task the listing no longer names,
// asked once a minute.
func (f *fleetSource) endedStatus(ctx context.Context, id string) (fleetlink.Status, error) {
	f.mu.Lock()
	e, ok := f.ended[id]
	f.mu.Unlock()
	if ok && time.Since(e.at) < endedTTL {
		return e.st, e.err
	}
	st, err := f.link.Status(ctx, id)
	if ctx.Err() == nil {
		f.mu.Lock()
		f.ended[id] = endedStatus{st: st, err: err, at: time.Now()}
		f.mu.Unlock()
	}
	return st, err
}

// fleetOwns reports whether task id is the fleet's: this clone has its
// ref (the task was submitted or pulled here, fleetlink.Known: the rule
// of orch's own commands), or it has no folder here (a task submitted
// elsewhere, as the board lists it: the fleet is asked). Without [fleet]
// no task is the fleet's.
func (s *Server) fleetOwns(id string) bool {
	if s.fleet == nil {
		return false
	}
	if known, err := fleetlink.Known(s.opt.Project.Root, id); err == nil && known {
		return true
	}
	_, err := os.Lstat(filepath.Join(s.opt.Project.TasksDir(), id))
	return errors.Is(err, fs.ErrNotExist)
}

// known reports whether this clone has task id's fleet ref.
func (s *Server) known(id string) bool {
	ok, err := fleetlink.Known(s.opt.Project.Root, id)
	return err == nil && ok
}

// withFleet puts the fleet's tasks into the board's columns: a local
// card of a task the fleet owns is replaced by the fleet's card (its
// folder here is what was submitted, not where the task is), every task
// of the fleet's listing gets a card, and a task this clone knows that
// the listing no longer names (its workflow ended) shows the status the
// fleet returns for it. It returns what to say above the board when the
// fleet could not be asked ("" when it answered).
func (s *Server) withFleet(ctx context.Context, cols []Column) ([]Column, string) {
	if s.fleet == nil {
		return cols, ""
	}
	l, err := s.fleet.list(ctx, false)
	idx := map[lifecycle.Phase]int{}
	var knownLocal []Card
	for i := range cols {
		idx[cols[i].Phase] = i
		kept := cols[i].Cards[:0]
		for _, c := range cols[i].Cards {
			if s.known(c.ID) {
				knownLocal = append(knownLocal, c)
				continue
			}
			kept = append(kept, c)
		}
		cols[i].Cards = kept
	}
	add := func(c Card) {
		i, ok := idx[c.Phase]
		if !ok {
			i = 0
		}
		cols[i].Cards = append(cols[i].Cards, c)
	}
	banner := ""
	if err != nil {
		banner = "the fleet did not answer: " + exit.Format(err)
		for _, c := range knownLocal {
			add(Card{ID: c.ID, Title: c.Title, Phase: c.Phase, Fleet: true, Err: "the fleet did not answer; its folder here may be out of date"})
		}
	} else {
		listed := map[string]bool{}
		for p, ls := range l.Phases {
			for _, tl := range ls {
				listed[tl.Task] = true
				add(s.fleetCard(tl, p))
			}
		}
		for _, c := range knownLocal {
			if listed[c.ID] {
				continue
			}
			st, err := s.fleet.endedStatus(ctx, c.ID)
			if err != nil {
				add(Card{ID: c.ID, Title: c.Title, Phase: c.Phase, Fleet: true, Err: "the fleet: " + exit.Format(err)})
				continue
			}
			add(s.fleetCard(fleetlink.TaskLine{Task: c.ID, Revision: st.Revision}, st.Phase))
		}
	}
	for i := range cols {
		slices.SortStableFunc(cols[i].Cards, func(a, b Card) int { return strings.Compare(a.ID, b.ID) })
	}
	return cols, banner
}

// fleetCard is the card of a fleet task, from its line in the listing.
func (s *Server) fleetCard(tl fleetlink.TaskLine, p lifecycle.Phase) Card {
	c := Card{ID: tl.Task, Title: s.fleetTitle(tl.Task), Phase: p, Fleet: true}
	c.Waits, c.Human = fleetWaits(p, tl.Waiting)
	c.Why = tl.Waiting
	return c
}

// fleetTitle is the title of a fleet task: its plan's title or brief's
// first line when this clone has its folder (it was submitted or pulled
// here), else its id.
func (s *Server) fleetTitle(id string) string {
	t, err := s.orch.Project.Open(id)
	if err != nil {
		return id
	}
	return taskTitle(t, artifact.LoadPlan(t.Dir))
}

// fleetWaits says what a fleet task waits for, in the words of a local
// card (nextstep.Waits): a person when its workflow waits (waiting is
// the workflow's reason: the open questions, the accept decision, a
// revert, or a step orch refused), else the fleet's worker for the phase.
func fleetWaits(p lifecycle.Phase, waiting string) (string, bool) {
	if p == lifecycle.Done {
		return "done", false
	}
	if waiting == "" {
		w, _ := nextstep.Waits(nextstep.Step{Args: lifecycle.PhaseCommand(p)}, orchestrator.StatusView{Phase: p})
		return "in the fleet: " + w, false
	}
	switch p {
	case lifecycle.Planning:
		if qs := openQuestionsOf(waiting); len(qs) > 0 {
			return "waits for your answer to " + qs[0].ID, true
		}
	case lifecycle.Accept:
		return "waits for your accept decision", true
	case lifecycle.Revert:
		return "waits for a revert with your reason", true
	}
	first, _, _ := strings.Cut(waiting, "\n")
	return "waits for you: " + clip.Runes(strings.TrimSpace(first), 120), true
}

// openQuestionsOf reads the open questions of the workflow's reason for
// waiting while planning: "open blocking question(s): …" followed by one
// "  ID: TEXT" line per question (lifecycle.Pilot). A line that does not
// read so ends the list.
func openQuestionsOf(waiting string) []artifact.Question {
	lines := strings.Split(waiting, "\n")
	if !strings.HasPrefix(lines[0], "open blocking question") {
		return nil
	}
	var out []artifact.Question
	for _, l := range lines[1:] {
		id, text, ok := strings.Cut(strings.TrimSpace(l), ": ")
		if !ok || id == "" || strings.ContainsAny(id, " \t") {
			break
		}
		out = append(out, artifact.Question{ID: id, Text: text, Blocking: true})
	}
	return out
}

// subscribed reports whether any page listens for changes.
func (w *watcher) subscribed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.subs) > 0
}

// pollFleet asks the fleet for its listing every poll interval while a
// page listens; the read publishes the tasks whose phase, revision or
// reason for waiting changed, appeared or left the listing (list): the
// fleet's changes reach open pages as the folders' do.
func (s *Server) pollFleet(ctx context.Context) {
	tick := time.NewTicker(s.fleet.poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if !s.watch.subscribed() {
			continue
		}
		// An error is said when the board is read.
		_, _ = s.fleet.list(ctx, true)
	}
}

// changes compares listing l with the one seen before and returns the
// ids of the tasks that changed.
func (f *fleetSource) changes(l fleetlink.Listing) []string {
	now := map[string]fleetSig{}
	for p, ls := range l.Phases {
		for _, tl := range ls {
			now[tl.Task] = fleetSig{phase: p, revision: tl.Revision, waiting: tl.Waiting}
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.seen == nil {
		// The first listing is the baseline: nothing changed yet.
		f.seen = now
		return nil
	}
	changed := changedKeys(f.seen, now)
	for _, id := range changed {
		if _, ok := now[id]; !ok {
			delete(f.ended, id) // its workflow ended: ask for its status
		}
	}
	f.seen = now
	slices.Sort(changed)
	return changed
}

// changedKeys returns the keys whose value differs between old and now,
// or that only one of them has.
func changedKeys[V comparable](old, now map[string]V) []string {
	var changed []string
	for k, v := range now {
		if o, ok := old[k]; !ok || o != v {
			changed = append(changed, k)
		}
	}
	for k := range old {
		if _, ok := now[k]; !ok {
			changed = append(changed, k)
		}
	}
	return changed
}

// fleetRefusedHere is the refusal of what only a local task has: the
// fleet's workflow takes the transitions that hold and runs the phases
// itself (docs/fleet.md).
func fleetRefusedHere(id, what string) error {
	return exit.New(exit.ErrUsage, "task %s is the fleet's: its workflow %s by itself; through the fleet a person answers, decides at accept, reverts, overrides with a reason or redoes (docs/fleet.md)", id, what)
}

// fleetDescribe names a gate result in a flash's words.
func fleetDescribe(res fleetlink.GateResult) string {
	msg := fmt.Sprintf("the fleet: task %s is in %s at revision %d", res.Task, res.Phase, res.Revision)
	if res.Commit != "" {
		msg += fmt.Sprintf(" (its ref at %.12s)", res.Commit)
	}
	return msg
}
