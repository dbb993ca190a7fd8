package board

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/task"
)

// TestCostTails: a card's cost is read from the transcript's tail — what
// was appended since the last refresh — and is always the sum over the
// whole transcript: a transcript replaced or cut is read again whole.
func TestCostTails(t *testing.T) {
	f := NewFixture(t)
	f.Task("c1", "costs")
	tk, err := f.P.Open("c1")
	if err != nil {
		t.Fatal(err)
	}
	call := func(in int64) {
		t.Helper()
		usd := 0.5
		if err := tk.Append(task.NewEvent(event.ModelCall{Phase: "planning", Role: "planner", Provider: "test", Model: "m", TokensIn: in, TokensOut: 1, CostUSD: &usd})); err != nil {
			t.Fatal(err)
		}
	}
	var ct costTails
	check := func(what string) {
		t.Helper()
		got, entered, err := ct.of(tk)
		if err != nil {
			t.Fatal(err)
		}
		evs, err := tk.Transcript()
		if err != nil {
			t.Fatal(err)
		}
		want := agent.SumCosts(task.ModelCalls(evs))
		if got.Total != want.Total {
			t.Fatalf("%s: %+v, want %+v", what, got.Total, want.Total)
		}
		if sp := phaseSpans(evs); len(sp) == 0 || entered.Phase != sp[len(sp)-1].Phase || !entered.Start.Equal(sp[len(sp)-1].Start) {
			t.Fatalf("%s: entered %+v, spans %+v", what, entered, sp)
		}
	}
	check("no call")
	call(100)
	check("one call")
	reason := "cards test"
	if _, err := f.O.Next(t.Context(), "c1", orchestrator.NextRequest{To: lifecycle.PlanReview, Override: &reason}); err != nil {
		t.Fatal(err)
	}
	check("moved")
	offset := ct.m["c1"].offset
	call(200)
	call(300)
	check("two more calls")
	if ct.m["c1"].offset <= offset || len(ct.m["c1"].calls) != 3 {
		t.Fatalf("tail not read: %+v", ct.m["c1"])
	}
	// Replaced by a shorter transcript (a copy, another inode).
	p := filepath.Join(tk.Dir, task.TranscriptFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	cut := b[:offset]
	if err := os.WriteFile(p+".new", cut, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(p+".new", p); err != nil {
		t.Fatal(err)
	}
	check("replaced")
	// Rewritten in place with the same size (a line's bytes changed).
	call(400)
	check("after a call")
	b, _ = os.ReadFile(p)
	edited := bytes.Replace(b, []byte(`"tokens_in":400`), []byte(`"tokens_in":900`), 1)
	if bytes.Equal(edited, b) {
		t.Fatalf("no tokens_in 400 in %s", b)
	}
	if err := os.WriteFile(p, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := ct.of(tk); got.Total.TokensIn != 1000 {
		t.Fatalf("a rewritten last line was not read again whole: %+v", got.Total)
	}
}
