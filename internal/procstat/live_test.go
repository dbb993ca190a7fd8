package procstat_test

import (
	"os"
	"testing"

	"github.com/orchdev/orch/internal/procstat"
	"github.com/orchdev/orch/internal/proctest"
)

// TestLive: a running process is live; once it has exited it is not, both
// while it is a zombie (not yet reaped by its parent, here this test) and
// after it was reaped.
func TestLive(t *testing.T) {
	if !procstat.Live(os.Getpid()) {
		t.Fatal("this process is not live")
	}
	if procstat.Live(0) || procstat.Live(-1) {
		t.Error("pid 0 or -1 is live")
	}
	c := proctest.StartChild(t)
	if !procstat.Live(c.Pid) {
		t.Fatalf("running pid %d is not live", c.Pid)
	}
	c.Exit()
	if procstat.Live(c.Pid) {
		t.Errorf("zombie pid %d is live", c.Pid)
	}
	c.Reap()
	if procstat.Live(c.Pid) {
		t.Errorf("reaped pid %d is live", c.Pid)
	}
}
