package worker

import (
	"context"
	"errors"
	"testing"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/landing"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/phasetest"
)

// TestRegistryCoversEveryPhase: every phase but done has exactly one
// worker, filed under its own phase, with a distinct command.
func TestRegistryCoversEveryPhase(t *testing.T) {
	reg := Registry(Deps{})
	commands := map[string]lifecycle.Phase{}
	for _, p := range lifecycle.Phases() {
		w, ok := reg.For(p)
		if p == lifecycle.Done {
			if ok {
				t.Errorf("done has a worker (%s)", w.Command())
			}
			continue
		}
		if !ok {
			t.Errorf("phase %s has no worker", p)
			continue
		}
		if w.Phase() != p {
			t.Errorf("the worker filed under %s serves %s", p, w.Phase())
		}
		if q, dup := commands[w.Command()]; dup {
			t.Errorf("command %q serves %s and %s", w.Command(), q, p)
		}
		commands[w.Command()] = p
	}
	if len(reg) != len(lifecycle.Phases())-1 {
		t.Errorf("%d workers, want %d", len(reg), len(lifecycle.Phases())-1)
	}
}

// TestAcceptNeedsADecision: without a decision in the run or the
// registry, accept refuses before anything runs (usage, exit 2).
func TestAcceptNeedsADecision(t *testing.T) {
	w, _ := Registry(Deps{}).For(lifecycle.Accept)
	_, err := w.Work(context.Background(), Run{Task: "t"})
	var e *exit.Error
	if !errors.As(err, &e) || exit.Of(err) != exit.Usage {
		t.Fatalf("err = %v, want a usage error", err)
	}
}

// TestAcceptSeen: the standing decision (orch run --yes) is taken on the
// revision the caller observed: a task that moved on since is refused
// (a StaleError, exit 3) and nothing is recorded; the same revision passes.
func TestAcceptSeen(t *testing.T) {
	f := phasetest.New(t, lifecycle.Accept)
	st, err := f.Task.ReadState()
	if err != nil {
		t.Fatal(err)
	}
	dec := &landing.AcceptOptions{Verdict: artifact.VerdictRejected, Reasons: []string{"not now"}, Decider: artifact.Decider{Kind: "human", Name: "t"}}
	w, _ := Registry(Deps{Orch: f.O, Config: f.Cfg, Accept: dec}).For(lifecycle.Accept)
	_, err = w.Work(context.Background(), Run{Task: "t", Seen: st.Revision - 1})
	var stale *orchestrator.StaleError
	if !errors.As(err, &stale) || exit.Of(err) != exit.Refused {
		t.Fatalf("a decision on revision %d of a task at %d: %v, want a StaleError", st.Revision-1, st.Revision, err)
	}
	if d := artifact.LoadDecision(f.Task.Dir); d.Present {
		t.Fatalf("a decision was recorded: %+v", d.Value)
	}
	if _, err := w.Work(context.Background(), Run{Task: "t", Seen: st.Revision}); err != nil {
		t.Fatalf("a decision on the task's revision: %v", err)
	}
	if d := artifact.LoadDecision(f.Task.Dir); !d.OK() || d.Value.Verdict != artifact.VerdictRejected {
		t.Fatalf("decision %+v", d)
	}
}
