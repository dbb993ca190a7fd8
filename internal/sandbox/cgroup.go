package sandbox

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/orchdev/orch/internal/procstat"
)

// Names of the controllers a suite's cgroup may use.
const (
	ctrlPids   = "pids"
	ctrlMemory = "memory"
)

// cgroupMount is one mounted cgroup hierarchy and orch's own cgroup in it.
type cgroupMount struct {
	v2          bool
	controllers []string // v1: the controllers of the hierarchy
	own         string   // absolute directory of orch's own cgroup
	rel         string   // orch's cgroup as /proc/<pid>/cgroup names it
}

// Cgroups is what orch can use of the machine's cgroups: the v2
// hierarchy and the v1 pids and memory hierarchies, each present only when
// orch's own cgroup there is known. Read it once per run (ReadCgroups);
// the zero value makes no cgroups.
type Cgroups struct {
	v2     *cgroupMount
	pids   *cgroupMount // v1
	memory *cgroupMount // v1
}

// ReadCgroups finds orch's cgroups from /proc/self/mountinfo and
// /proc/self/cgroup. Missing files mean no cgroups.
func ReadCgroups() Cgroups {
	mi, err1 := os.ReadFile("/proc/self/mountinfo")
	cg, err2 := os.ReadFile("/proc/self/cgroup")
	if err1 != nil || err2 != nil {
		return Cgroups{}
	}
	return cgroupsFrom(parseMountinfo(mi), parseProcCgroup(cg))
}

// mountEntry is a line of /proc/self/mountinfo reduced to what matters.
type mountEntry struct {
	root, point, fstype string
	superOpts           []string
}

// parseMountinfo parses /proc/<pid>/mountinfo (see proc(5)), skipping
// malformed lines. The kernel writes a mount's root and mount point as
// absolute paths: a line with a relative one is malformed too (a mount
// point "." would put orch's own cgroup, and the suites' made in it,
// under the current directory).
func parseMountinfo(data []byte) []mountEntry {
	var out []mountEntry
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		sep := slices.Index(fields, "-")
		if sep < 6 || len(fields) < sep+4 {
			continue
		}
		root, point := unescapeMount(fields[3]), unescapeMount(fields[4])
		if !filepath.IsAbs(root) || !filepath.IsAbs(point) {
			continue
		}
		out = append(out, mountEntry{
			root:      root,
			point:     point,
			fstype:    fields[sep+1],
			superOpts: strings.Split(fields[sep+3], ","),
		})
	}
	return out
}

// unescapeMount undoes the octal escapes (\040 for a space) of mountinfo.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// procCgroup is a line of /proc/self/cgroup: "id:controllers:path".
type procCgroup struct {
	id          string
	controllers []string
	path        string
}

func parseProcCgroup(data []byte) []procCgroup {
	var out []procCgroup
	for line := range strings.Lines(string(data)) {
		line = strings.TrimRight(line, "\n")
		id, rest, ok1 := strings.Cut(line, ":")
		ctrls, path, ok2 := strings.Cut(rest, ":")
		if !ok1 || !ok2 || !strings.HasPrefix(path, "/") {
			continue
		}
		var list []string
		if ctrls != "" {
			list = strings.Split(ctrls, ",")
		}
		out = append(out, procCgroup{id: id, controllers: list, path: path})
	}
	return out
}

// cgroupsFrom matches the hierarchies orch belongs to with their mounts.
func cgroupsFrom(mounts []mountEntry, groups []procCgroup) Cgroups {
	var h Cgroups
	ownDir := func(m mountEntry, path string) (string, bool) {
		rel, ok := strings.CutPrefix(path, m.root)
		if m.root == "/" {
			rel, ok = path, true
		}
		if !ok || (rel != "" && !strings.HasPrefix(rel, "/")) || strings.Contains(rel, "/../") || strings.HasSuffix(rel, "/..") {
			return "", false
		}
		return filepath.Join(m.point, rel), true
	}
	for _, g := range groups {
		for _, m := range mounts {
			switch {
			case g.id == "0" && len(g.controllers) == 0 && m.fstype == "cgroup2" && h.v2 == nil:
				if dir, ok := ownDir(m, g.path); ok {
					h.v2 = &cgroupMount{v2: true, own: dir, rel: g.path}
				}
			case m.fstype == "cgroup":
				for _, c := range []string{ctrlPids, ctrlMemory} {
					if !slices.Contains(g.controllers, c) || !slices.Contains(m.superOpts, c) {
						continue
					}
					dir, ok := ownDir(m, g.path)
					if !ok {
						continue
					}
					cm := &cgroupMount{controllers: g.controllers, own: dir, rel: g.path}
					if c == ctrlPids && h.pids == nil {
						h.pids = cm
					}
					if c == ctrlMemory && h.memory == nil {
						h.memory = cm
					}
				}
			}
		}
	}
	return h
}

// suiteCgroup is the set of cgroups made for one suite: every process of
// the suite is moved into each of them before it runs.
type suiteCgroup struct {
	dirs     []string // created directories, the tracking one first
	ids      []cgroupID
	v2       string   // the v2 directory, if any (cgroup.kill)
	pidsMax  string   // the file that bounds processes, "" if none
	memMax   string   // the file that bounds memory, "" if none
	problems []string // limits that could not be set
}

// newSuiteCgroup creates the cgroups of a suite named name under orch's own
// ones, with the given bounds (0: none). It returns nil when no cgroup
// could be created (no permission, read-only cgroupfs): the suite then runs
// with rlimits only.
func newSuiteCgroup(h Cgroups, name string, maxProcs int, maxMem int64) *suiteCgroup {
	c := &suiteCgroup{}
	mk := func(m *cgroupMount) (string, bool) {
		if m == nil {
			return "", false
		}
		dir := filepath.Join(m.own, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			return "", false
		}
		c.dirs = append(c.dirs, dir)
		c.ids = append(c.ids, m.id(name))
		return dir, true
	}
	needPids, needMem := maxProcs > 0, maxMem > 0
	if dir, ok := mk(h.v2); ok {
		c.v2 = dir
		ctrls, _ := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
		have := strings.Fields(string(ctrls))
		if needPids && slices.Contains(have, ctrlPids) {
			c.setLimit(&c.pidsMax, filepath.Join(dir, "pids.max"), strconv.Itoa(maxProcs))
			needPids = c.pidsMax == ""
		}
		if needMem && slices.Contains(have, ctrlMemory) {
			c.setLimit(&c.memMax, filepath.Join(dir, "memory.max"), strconv.FormatInt(maxMem, 10))
			needMem = c.memMax == ""
			// Keep the suite from swapping instead of failing; absent
			// without swap accounting, which is fine.
			_ = writeCgroupFile(filepath.Join(dir, "memory.swap.max"), "0")
		}
	}
	if needPids {
		if dir, ok := mk(h.pids); ok {
			c.setLimit(&c.pidsMax, filepath.Join(dir, "pids.max"), strconv.Itoa(maxProcs))
		}
	}
	if needMem {
		if dir, ok := mk(h.memory); ok {
			c.setLimit(&c.memMax, filepath.Join(dir, "memory.limit_in_bytes"), strconv.FormatInt(maxMem, 10))
			if c.memMax != "" {
				// With swap accounting, bound memory plus swap the same.
				_ = writeCgroupFile(filepath.Join(dir, "memory.memsw.limit_in_bytes"), strconv.FormatInt(maxMem, 10))
			}
		}
	}
	if len(c.dirs) == 0 {
		return nil
	}
	return c
}

func (c *suiteCgroup) setLimit(dst *string, file, value string) {
	if err := writeCgroupFile(file, value); err != nil {
		c.problems = append(c.problems, err.Error())
		return
	}
	*dst = file
}

func writeCgroupFile(path, value string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("cgroup %s: %w", path, err)
	}
	_, err = io.WriteString(f, value)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cgroup: write %q to %s: %w", value, path, err)
	}
	return nil
}

// add moves pid into every cgroup of the suite.
func (c *suiteCgroup) add(pid int) error {
	for _, d := range c.dirs {
		if err := writeCgroupFile(filepath.Join(d, "cgroup.procs"), strconv.Itoa(pid)); err != nil {
			return err
		}
	}
	return nil
}

// pids lists the processes in the suite's tracking cgroup.
func (c *suiteCgroup) pids() []int {
	data, err := os.ReadFile(filepath.Join(c.dirs[0], "cgroup.procs"))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
			out = append(out, pid)
		}
	}
	return out
}

// cgroupID names a suite cgroup the way /proc/<pid>/cgroup does.
type cgroupID struct {
	v2         bool
	controller string // v1: a controller of the hierarchy
	rel        string
}

// id names the suite cgroup name below m the way /proc/<pid>/cgroup does.
func (m *cgroupMount) id(name string) cgroupID {
	id := cgroupID{v2: m.v2, rel: path.Join(m.rel, name)}
	if !m.v2 {
		id.controller = m.controllers[0]
	}
	return id
}

// contains reports whether pid is in one of the suite's cgroups (or below).
func (c *suiteCgroup) contains(pid int) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cgroup"))
	if err != nil {
		return false
	}
	for _, g := range parseProcCgroup(data) {
		for _, id := range c.ids {
			if g.path != id.rel && !strings.HasPrefix(g.path, id.rel+"/") {
				continue
			}
			if id.v2 && g.id == "0" && len(g.controllers) == 0 {
				return true
			}
			if !id.v2 && slices.Contains(g.controllers, id.controller) {
				return true
			}
		}
	}
	return false
}

// hasLive reports whether a process of the cgroup is alive (zombies do not
// count).
func (c *suiteCgroup) hasLive() bool {
	return slices.ContainsFunc(c.pids(), procstat.Live)
}

// kill sends SIGKILL to every process of the cgroup: at once through
// cgroup.kill where the kernel has it (v2, Linux 5.14), otherwise to each
// listed process.
func (c *suiteCgroup) kill() {
	if c.v2 != "" && writeCgroupFile(filepath.Join(c.v2, "cgroup.kill"), "1") == nil {
		return
	}
	c.signal(syscall.SIGKILL)
}

// signal sends sig to every listed process.
func (c *suiteCgroup) signal(sig syscall.Signal) {
	for _, pid := range c.pids() {
		signalVerified(pid, sig, c.contains)
	}
}

// remove deletes the suite's cgroups, waiting briefly for the kernel to
// release exited processes.
func (c *suiteCgroup) remove() error {
	var errs []error
	for i := len(c.dirs) - 1; i >= 0; i-- {
		d := c.dirs[i]
		deadline := time.Now().Add(2 * time.Second)
		for {
			err := syscall.Rmdir(d)
			if err == nil || errors.Is(err, syscall.ENOENT) {
				break
			}
			if !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
				errs = append(errs, fmt.Errorf("remove cgroup %s: %w", d, err))
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return errors.Join(errs...)
}

// mechanisms says which limits the cgroups enforce, for RunInfo.
func (c *suiteCgroup) mechanisms() (procs, mem string) {
	if c == nil {
		return "", ""
	}
	if c.pidsMax != "" {
		procs = "cgroup " + filepath.Base(c.pidsMax)
	}
	if c.memMax != "" {
		mem = "cgroup " + filepath.Base(c.memMax)
	}
	return procs, mem
}
