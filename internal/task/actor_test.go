package task

import (
	"encoding/json"
	"testing"

	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/proctest"
)

// TestActorRoundTrip: typed fields take values of their type; anything else
// is kept verbatim and written back unchanged.
func TestActorRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		in     string
		status lifecycle.Status
		round  int
		pid    int
	}{
		{`{}`, "", 0, 0},
		{`{"round":3,"status":"workshop"}`, "workshop", 3, 0},
		{`{"pid":4242,"status":"running"}`, "running", 0, 4242},
		{`{"round":0,"status":"draft"}`, "draft", 0, 0},
		{`{"round":"7"}`, "", 0, 0},
		{`{"round":-1}`, "", 0, 0},
		{`{"round":1.5}`, "", 0, 0},
		{`{"round":2.0}`, "", 0, 0},
		{`{"status":null}`, "", 0, 0},
		{`{"status":""}`, "", 0, 0},
		{`{"big":12345678901234567890,"note":{"a":[1,2]},"status":"pending"}`, "pending", 0, 0},
	} {
		var a Actor
		if err := json.Unmarshal([]byte(tc.in), &a); err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if a.Status != tc.status || a.Round != tc.round || a.PID != tc.pid {
			t.Errorf("%s: status %q round %d pid %d; want %q %d %d", tc.in, a.Status, a.Round, a.PID, tc.status, tc.round, tc.pid)
		}
		out, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != tc.in {
			t.Errorf("%s written back as %s", tc.in, out)
		}
	}
}

// TestActorTypedOverridesKept: setting a typed field replaces a kept value
// of the wrong type; clearing a run drops its fields.
func TestActorTypedOverridesKept(t *testing.T) {
	var a Actor
	if err := json.Unmarshal([]byte(`{"round":0,"status":null,"x":1}`), &a); err != nil {
		t.Fatal(err)
	}
	a.Round, a.Status, a.PID, a.Run = 2, lifecycle.StatusRunning, 7, "r1"
	b := a.Clone()
	b.ClearRun()
	b.Status = lifecycle.PlanReviewReady
	if got, _ := json.Marshal(a); string(got) != `{"pid":7,"round":2,"run":"r1","status":"running","x":1}` {
		t.Errorf("a = %s", got)
	}
	if got, _ := json.Marshal(b); string(got) != `{"round":2,"status":"review_ready","x":1}` {
		t.Errorf("b = %s", got)
	}
}

// TestLivePID: a running actor blocks while its pid is a live process, and
// no longer once that process has exited — already while it is a zombie
// nobody has reaped (a `kill -9` under a parent that does not wait), not
// only once it is gone.
func TestLivePID(t *testing.T) {
	c := proctest.StartChild(t)
	a := Actor{Status: lifecycle.StatusRunning, PID: c.Pid}
	if pid, ok := a.LivePID(); !ok || pid != c.Pid {
		t.Fatalf("LivePID of a running process = %d, %v", pid, ok)
	}
	if _, ok := (Actor{Status: lifecycle.StatusPending, PID: c.Pid}).LivePID(); ok {
		t.Error("an actor that is not running has a live pid")
	}
	c.Exit()
	if _, ok := a.LivePID(); ok {
		t.Error("an exited, unreaped process (a zombie) still blocks the phase")
	}
	c.Reap()
	if _, ok := a.LivePID(); ok {
		t.Error("a reaped process still blocks the phase")
	}
}

// TestInterrupted: a running actor whose process is gone is interrupted;
// one whose process lives, or that is not running, is not.
func TestInterrupted(t *testing.T) {
	c := proctest.StartChild(t)
	running := Actor{Status: lifecycle.StatusRunning, PID: c.Pid}
	if running.Interrupted() {
		t.Error("a run whose process lives is interrupted")
	}
	if (Actor{Status: lifecycle.StatusPending}).Interrupted() {
		t.Error("a pending actor is interrupted")
	}
	c.Exit()
	if !running.Interrupted() {
		t.Error("a run whose process exited is not interrupted")
	}
	c.Reap()
}
