package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/orchdev/orch/internal/lazyre"
	"github.com/orchdev/orch/internal/procstat"
)

// staleName matches the cgroups Start makes, "orch-<pid>-<8 hex>-<suite>",
// and captures the pid of the orch process that made it.
var staleName = lazyre.New(`^orch-([0-9]+)-[0-9a-f]{8}-`)

// ReapStale finds the suite cgroups below orch's own whose orch process is
// gone — killed (SIGKILL, a crash) before it could stop its suite — and
// kills what still runs in them, then removes them. Without it such a
// suite runs on unowned: bwrap's --die-with-parent ends a sandboxed one,
// but a suite run without the sandbox keeps running and writing into the
// worktree the next run reuses. A cgroup whose orch process lives (this
// one, or another run) is left alone, and so is one whose pid was taken by
// another process since: it is reaped when that one is gone. The test
// phase calls it once per run, before it resets the warm worktree such a
// suite may still write into; the notes say what was killed.
func ReapStale(h Cgroups) []string {
	type stale struct {
		owner int
		c     suiteCgroup
	}
	found := map[string]*stale{}
	var order []string
	for _, m := range []*cgroupMount{h.v2, h.pids, h.memory} {
		if m == nil {
			continue
		}
		entries, err := os.ReadDir(m.own)
		if err != nil {
			continue
		}
		for _, e := range entries {
			sub := staleName.FindStringSubmatch(e.Name())
			if !e.IsDir() || sub == nil {
				continue
			}
			owner, err := strconv.Atoi(sub[1])
			if err != nil || owner == os.Getpid() || procstat.Live(owner) {
				continue
			}
			s := found[e.Name()]
			if s == nil {
				s = &stale{owner: owner}
				found[e.Name()] = s
				order = append(order, e.Name())
			}
			dir := filepath.Join(m.own, e.Name())
			s.c.dirs = append(s.c.dirs, dir)
			s.c.ids = append(s.c.ids, m.id(e.Name()))
			if m.v2 {
				s.c.v2 = dir
			}
		}
	}
	var notes []string
	for _, name := range order {
		s := found[name]
		var live []int
		for _, pid := range s.c.pids() {
			if procstat.Live(pid) {
				live = append(live, pid)
			}
		}
		if len(live) > 0 {
			s.c.kill()
			// SIGKILL is acted on when each process next runs: wait (a
			// little) until none of them runs code of its own any more.
			for deadline := time.Now().Add(2 * time.Second); slices.ContainsFunc(live, procstat.Live) && time.Now().Before(deadline); {
				time.Sleep(5 * time.Millisecond)
			}
			notes = append(notes, fmt.Sprintf("killed %d process(es) of a suite left running by orch process %d, which was killed before it could stop them (cgroup %s)", len(live), s.owner, name))
		}
		if err := s.c.remove(); err != nil {
			notes = append(notes, err.Error())
		}
	}
	return notes
}
