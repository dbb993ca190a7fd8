package orchestrator

import (
	"context"
	"time"

	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/task"
	"github.com/orchdev/orch/internal/work"
)

// Edit runs fn under task id's lock, after crash recovery, with the task
// as committed: a short edit outside a phase run (work.Tasks).
func (o *Orchestrator) Edit(ctx context.Context, id string, fn func(t work.Locked) error) error {
	return o.withTask(ctx, id, func(t *task.Task, st task.State) error {
		return fn(locked{o: o, t: t, st: st})
	})
}

// locked is a task under its lock (work.Locked).
type locked struct {
	o  *Orchestrator
	t  *task.Task
	st task.State
}

func (l locked) ID() string             { return l.t.ID }
func (l locked) Dir() string            { return l.t.Dir }
func (l locked) Phase() lifecycle.Phase { return l.st.Phase }
func (l locked) Revision() int64        { return l.st.Revision }
func (l locked) Now() time.Time         { return l.o.Now().UTC() }
func (l locked) Append(p event.Payload) error {
	return l.t.Append(task.Event{TS: l.o.now(), Payload: p})
}
func (l locked) Spent() (work.Spent, error)            { return spentOf(l.t) }
func (l locked) Running(p lifecycle.Phase) (int, bool) { return l.st.Actor(p).LivePID() }
