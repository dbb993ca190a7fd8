package cli

import (
	"fmt"

	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/task"
)

// interruptedNote says, for `orch verify`, that the current phase's run
// died (its actor is running with a pid that is gone), what of its git
// effect is in place, and the command that resumes it; "" when no run was
// interrupted. The transcript may verify while the task is not all well.
func (env *Env) interruptedNote(t *task.Task) string {
	st, _, err := t.CommittedState()
	if err != nil {
		return ""
	}
	phase := lifecycle.Phase(st.Phase)
	a, ok := st.Actors[phase]
	if !ok || !a.Interrupted() {
		return ""
	}
	msg := fmt.Sprintf("the last %s run (%s) was interrupted: pid %d is gone", phase, a.Run, a.PID)
	if evs, err := t.Transcript(); err == nil {
		for _, ev := range evs {
			if ev.Kind != event.KindGitDone {
				continue
			}
			if p, err := ev.Decode(); err == nil {
				if d := p.(event.GitDone); d.Run == a.Run && d.Outcome == event.GitCommitted {
					msg += fmt.Sprintf("; its commit %v is in place (the record is not written yet)", d.Commit)
				}
			}
		}
	}
	v := orchestrator.StatusView{Task: t.ID, Phase: phase, Actors: st.Actors}
	if s := stepFor(v, ""); s.Args != "" {
		msg += fmt.Sprintf("; run %s to finish it", env.command(s.Args))
	}
	return msg
}
