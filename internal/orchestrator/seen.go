package orchestrator

import (
	"context"
	"fmt"
	"strings"

	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/task"
)

// StaleError refuses a gate action taken on what a person (or a client)
// saw at an earlier revision of the task, or on evidence whose bytes
// changed since: the action names what it acted on (README, "Every gate
// action names what it acted on") and nothing was done. It wraps
// task.ErrStale (exit 3).
type StaleError struct {
	Task string
	// Seen is the revision the action named; Now the task's revision.
	Seen, Now int64
	// Changes says what happened since Seen, oldest first ("codegen was
	// redone", "moved codegen → review").
	Changes []string
	// Redone: the change itself was redone or produced again since.
	Redone bool
	// Hashes names the evidence whose bytes differ from what was seen:
	// "code/diff.patch: shown 1a2b3c4d5e6f, now 6f5e4d3c2b1a".
	Hashes []string
}

func (e *StaleError) Error() string {
	return e.Explain("after revision " + fmt.Sprint(e.Seen) + " was shown")
}

// Explain is the message with when the person looked: "after this page
// was loaded", "after you read it".
func (e *StaleError) Explain(when string) string {
	var b strings.Builder
	what := "the task changed"
	switch {
	case e.Redone:
		what = "the change was redone"
	case len(e.Hashes) > 0:
		what = "the evidence changed"
	}
	fmt.Fprintf(&b, "task %s: %s %s", e.Task, what, when)
	var details []string
	if e.Now != e.Seen {
		details = append(details, fmt.Sprintf("revision %d then, %d now", e.Seen, e.Now))
	}
	details = append(details, e.Changes...)
	details = append(details, e.Hashes...)
	if len(details) > 0 {
		b.WriteString(" (" + strings.Join(details, "; ") + ")")
	}
	b.WriteString(": review it again; nothing was done")
	return b.String()
}

// Unwrap returns task.ErrStale.
func (e *StaleError) Unwrap() error { return task.ErrStale }

// maxChanges bounds the changes a StaleError lists.
const maxChanges = 6

// staleSince builds the refusal for an action that saw revision seen of t,
// now at revision now, from the transcript's events since.
func staleSince(t *task.Task, seen, now int64) *StaleError {
	e := &StaleError{Task: t.ID, Seen: seen, Now: now}
	evs, err := t.Transcript()
	if err != nil {
		return e
	}
	var changes []string
	for _, ev := range evs {
		if ev.State == nil || ev.State.Revision <= seen {
			continue
		}
		var c string
		p, err := ev.Decode()
		if err != nil { // an event of an unknown kind (a newer orch): named
			p = nil
		}
		switch p := p.(type) {
		case event.Redo:
			c = fmt.Sprintf("%s was redone", p.To)
			switch p.To {
			case lifecycle.Planning, lifecycle.PlanReview, lifecycle.Codegen:
				e.Redone = true
			}
		case event.Transition:
			c = fmt.Sprintf("moved %s → %s", p.From, p.To)
		case event.Override:
			c = fmt.Sprintf("moved %s → %s by override", p.From, p.To)
		case event.PhaseStarted:
			c = fmt.Sprintf("%s ran", p.Phase)
			if p.Phase == lifecycle.Codegen || p.Phase == lifecycle.Planning {
				e.Redone = true
			}
		case event.PhaseFinished:
			continue
		default:
			c = string(ev.Kind)
		}
		if len(changes) == 0 || changes[len(changes)-1] != c {
			changes = append(changes, c)
		}
	}
	if len(changes) > maxChanges {
		changes = append(changes[:maxChanges-1:maxChanges-1], fmt.Sprintf("%d more", len(changes)-maxChanges+1))
	}
	e.Changes = changes
	return e
}

// checkSeen refuses when the task is no longer at revision seen; seen 0
// names no revision and is never refused.
func checkSeen(t *task.Task, st task.State, seen int64) error {
	if seen == 0 || st.Revision == seen {
		return nil
	}
	return staleSince(t, seen, st.Revision)
}

// CheckSeen refuses (a *StaleError) when task id is no longer at
// revision seen, reading its state under its lock. A caller that acts
// later without holding the lock re-checks where it commits.
func (o *Orchestrator) CheckSeen(ctx context.Context, id string, seen int64) error {
	if seen == 0 {
		return nil
	}
	return o.withTask(ctx, id, func(t *task.Task, st task.State) error { return checkSeen(t, st, seen) })
}

// Stale builds the refusal for an action that saw revision seen of task
// t, now at revision now (hashes: the evidence that changed).
func Stale(t *task.Task, seen, now int64, hashes []string) *StaleError {
	e := &StaleError{Task: t.ID, Seen: seen, Now: now}
	if seen != 0 && seen != now {
		e = staleSince(t, seen, now)
	}
	e.Hashes = hashes
	return e
}
