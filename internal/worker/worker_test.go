package worker

import (
	"context"
	"errors"
	"testing"

	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/lifecycle"
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
