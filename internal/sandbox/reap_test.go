package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/procstat"
)

// TestReapStale uses the machine's cgroups when orch may write them: a
// suite cgroup whose orch process is gone, with a process still running
// in it, is killed and removed, and the note says so; one whose orch
// process lives is left alone with its process; anything not named like a
// suite cgroup is not touched.
func TestReapStale(t *testing.T) {
	h := ReadCgroups()
	// A pid that was an orch process and is gone now.
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	dead := gone.Process.Pid
	// A live process standing for another orch run.
	owner := exec.Command("sleep", "300")
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = owner.Process.Kill(); _ = owner.Wait() })

	mk := func(name string) (*suiteCgroup, *exec.Cmd, chan error) {
		c := newSuiteCgroup(h, name, 64, 256<<20)
		if c == nil {
			t.Skip("no writable cgroup here")
		}
		t.Cleanup(func() { _ = c.remove() })
		cmd := exec.Command("sleep", "300")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		t.Cleanup(func() { _ = cmd.Process.Kill() })
		if err := c.add(cmd.Process.Pid); err != nil {
			t.Fatal(err)
		}
		return c, cmd, done
	}
	staleCg, _, staleDone := mk(fmt.Sprintf("orch-%d-deadbeef-go-test", dead))
	liveCg, liveCmd, _ := mk(fmt.Sprintf("orch-%d-0badf00d-go-test", owner.Process.Pid))
	otherCg, otherCmd, _ := mk(fmt.Sprintf("other-%d-deadbeef-x", dead))

	notes := ReapStale(h)
	if err := <-staleDone; err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("the stale suite's process ended with %v, want killed", err)
	}
	for _, d := range staleCg.dirs {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("stale cgroup %s left behind", d)
		}
	}
	want := fmt.Sprintf("killed 1 process(es) of a suite left running by orch process %d", dead)
	if len(notes) != 1 || !strings.Contains(notes[0], want) {
		t.Errorf("notes %q, want one saying %q", notes, want)
	}
	for _, c := range []struct {
		cg  *suiteCgroup
		cmd *exec.Cmd
	}{{liveCg, liveCmd}, {otherCg, otherCmd}} {
		if !procstat.Live(c.cmd.Process.Pid) || !c.cg.contains(c.cmd.Process.Pid) {
			t.Errorf("process %d of cgroup %s was touched", c.cmd.Process.Pid, c.cg.dirs[0])
		}
	}
	// Nothing left to reap: no notes, nothing killed.
	if notes := ReapStale(h); len(notes) != 0 {
		t.Errorf("second reap: %q", notes)
	}
}
