package task

import (
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/lifecycle"
)

// A commit whose state.json rename fails (an I/O error, or a kill at that
// moment) leaves the event durable in the log and state.json one step
// behind: readers report the committed state and verify passes, saying the
// next command rolls it forward.
func TestCommittedStateAfterFailedRename(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	tk := newTask(t, p, "0001-a")
	lock(t, tk)
	step(t, tk, "plan_review")

	renameOfState := func(_ int, o op) bool {
		return o.Kind == opRename && filepath.Base(o.Path) == StateFile
	}
	ff := newFaultFS(renameOfState, fault{name: "EIO", errno: syscall.EIO})
	tk.fs = ff
	st, _ := tk.ReadState()
	next := st
	next.Phase, next.Revision = "codegen", st.Revision+1
	err := tk.Commit(Event{TS: t0, Kind: "transition", Data: map[string]any{"from": "plan_review", "to": "codegen"}}, next)
	tk.fs = nil
	if err == nil || len(ff.failed) != 1 {
		t.Fatalf("Commit with a failing rename: err %v, failed ops %v", err, ff.failed)
	}
	if cur, _ := tk.ReadState(); cur.Phase != "plan_review" || cur.Revision != 2 {
		t.Fatalf("state.json moved although its rename failed: %+v", cur)
	}

	got, pend, err := tk.CommittedState()
	if err != nil || got.Phase != "codegen" || got.Revision != 3 {
		t.Fatalf("CommittedState = %+v, %v; want codegen at revision 3", got, err)
	}
	if pend == nil || pend.Seq != 3 || pend.Kind != "transition" || pend.Revision != 3 || pend.Behind != 2 {
		t.Fatalf("pending = %+v", pend)
	}
	if !strings.Contains(pend.String(), "rolls it forward") {
		t.Errorf("pending says %q", pend.String())
	}
	rep := mustVerify(t, tk)
	if rep.Pending == nil || *rep.Pending != *pend {
		t.Fatalf("verify's pending = %+v, want %+v", rep.Pending, pend)
	}
	sums, err := p.List()
	if err != nil || len(sums) != 1 || sums[0].Phase != "codegen" || sums[0].Revision != 3 {
		t.Fatalf("List = %+v, %v; want codegen at revision 3", sums, err)
	}

	// The next command rolls forward; nothing is pending any more.
	if rec, err := tk.Recover(t0); err != nil || !rec.RolledForward {
		t.Fatalf("Recover = %+v, %v", rec, err)
	}
	got, pend, err = tk.CommittedState()
	if err != nil || pend != nil || got.Phase != "codegen" || got.Revision != 3 {
		t.Fatalf("after recovery: %+v, %+v, %v", got, pend, err)
	}
	if rep := mustVerify(t, tk); rep.Pending != nil {
		t.Fatalf("after recovery verify still reports %+v", rep.Pending)
	}
}

// Only an interrupted commit is excused: a state.json that no event
// explains is damage. Readers report the transcript's state and a
// *DisagreeError (exit 4) naming both phases; they never show state.json's.
func TestCommittedStateDamage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		edit   func(t *testing.T, tk *Task, lines []string) []string
		phase  lifecycle.Phase // what CommittedState reports: the transcript's
		stated lifecycle.Phase // what state.json says
		wantIn string          // verify's problem
	}{
		{name: "state.json two behind", phase: "review", stated: "plan_review", wantIn: "does not match the transcript's last state",
			edit: func(t *testing.T, tk *Task, lines []string) []string {
				// Log two more transitions while state.json stays.
				old := gittest.ReadFile(t, filepath.Join(tk.Dir, StateFile))
				step(t, tk, "codegen")
				step(t, tk, "review")
				writeFile(t, filepath.Join(tk.Dir, StateFile), old)
				return nil
			}},
		{name: "phase set by hand", phase: "plan_review", stated: "accept", wantIn: "changed outside orch",
			edit: func(t *testing.T, tk *Task, lines []string) []string {
				old := gittest.ReadFile(t, filepath.Join(tk.Dir, StateFile))
				writeFile(t, filepath.Join(tk.Dir, StateFile), strings.Replace(old, `"plan_review"`, `"accept"`, 1))
				return nil
			}},
		{name: "one behind but edited", phase: "codegen", stated: "planning", wantIn: "changed outside orch",
			edit: func(t *testing.T, tk *Task, lines []string) []string {
				old := gittest.ReadFile(t, filepath.Join(tk.Dir, StateFile))
				step(t, tk, "codegen")
				writeFile(t, filepath.Join(tk.Dir, StateFile), strings.Replace(old, `"plan_review"`, `"planning"`, 1))
				return nil
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProject(t)
			tk := newTask(t, p, "0001-a")
			lock(t, tk)
			step(t, tk, "plan_review")
			tc.edit(t, tk, logLines(t, tk))
			st, pend, err := tk.CommittedState()
			var de *DisagreeError
			if !errors.As(err, &de) || st.Phase != tc.phase || pend != nil || exit.Of(err) != exit.Invalid {
				t.Fatalf("CommittedState = %+v, %v, %v; want phase %s and a *DisagreeError", st, pend, err, tc.phase)
			}
			if de.StateJSON.Phase != tc.stated || de.Logged.Phase != tc.phase ||
				!strings.Contains(err.Error(), "state.json says phase "+string(tc.stated)) ||
				!strings.Contains(err.Error(), "the transcript committed phase "+string(tc.phase)) {
				t.Fatalf("error = %v; want both phases named", err)
			}
			// orch list reports the same.
			sums, err := p.List()
			if err != nil || len(sums) != 1 || sums[0].Phase != tc.phase || !strings.Contains(sums[0].Disagree, "state.json says phase "+string(tc.stated)) {
				t.Fatalf("List = %+v, %v; want phase %s flagged", sums, err, tc.phase)
			}
			rep, err := tk.Verify()
			if err != nil || rep.OK || rep.Pending != nil || !strings.Contains(rep.Problems[0].Msg, tc.wantIn) {
				t.Fatalf("Verify = %+v, %v; want a problem containing %q", rep, err, tc.wantIn)
			}
		})
	}
}
