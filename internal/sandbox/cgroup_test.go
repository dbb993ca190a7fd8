package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

const hybridMountinfo = `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`

const hybridCgroup = `9:name=systemd:/
8:pids:/
4:memory:/process_api/abc
1:cpu:/
0::/
`

func TestCgroupHostFrom(t *testing.T) {
	tests := []struct {
		name       string
		mountinfo  string
		cgroup     string
		v2, pids   string // own directories, "" for none
		memory     string
		v2Rel      string
		memRelWant string
	}{
		{
			name:       "hybrid v1 and v2",
			mountinfo:  hybridMountinfo,
			cgroup:     hybridCgroup,
			v2:         "/sys/fs/cgroup/unified",
			pids:       "/sys/fs/cgroup/pids",
			memory:     "/sys/fs/cgroup/memory/process_api/abc",
			v2Rel:      "/",
			memRelWant: "/process_api/abc",
		},
		{
			name:      "v2 only, a user session",
			mountinfo: "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n",
			cgroup:    "0::/user.slice/user-1000.slice/user@1000.service/app.slice/term.scope\n",
			v2:        "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/term.scope",
			v2Rel:     "/user.slice/user-1000.slice/user@1000.service/app.slice/term.scope",
		},
		{
			name:      "mount root inside the hierarchy (a container)",
			mountinfo: "30 23 0:26 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
			cgroup:    "0::/docker/abc/sub\n",
			v2:        "/sys/fs/cgroup/sub",
			v2Rel:     "/docker/abc/sub",
		},
		{
			name:      "own cgroup outside the mounted part",
			mountinfo: "30 23 0:26 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
			cgroup:    "0::/elsewhere\n",
		},
		{
			name:      "no cgroup mounts",
			mountinfo: "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n",
			cgroup:    hybridCgroup,
		},
		{
			// Found by FuzzParseMountinfo: the suites' cgroups would have
			// been made under the current directory.
			name:      "relative mount point",
			mountinfo: "41 31 0:38 / . rw - cgroup2 cgroup2 rw\n42 31 0:36 / sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n",
			cgroup:    "0::/a\n8:pids:/b\n",
		},
		{
			name:      "escaped mount point",
			mountinfo: `40 31 0:36 / /sys/fs/my\040cgroups rw - cgroup cgroup rw,pids` + "\n",
			cgroup:    "8:pids:/x\n",
			pids:      "/sys/fs/my cgroups/x",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := cgroupsFrom(parseMountinfo([]byte(tt.mountinfo)), parseProcCgroup([]byte(tt.cgroup)))
			dir := func(m *cgroupMount) string {
				if m == nil {
					return ""
				}
				return m.own
			}
			if dir(h.v2) != tt.v2 || dir(h.pids) != tt.pids || dir(h.memory) != tt.memory {
				t.Errorf("v2 %q pids %q memory %q, want %q %q %q", dir(h.v2), dir(h.pids), dir(h.memory), tt.v2, tt.pids, tt.memory)
			}
			if tt.v2Rel != "" && h.v2.rel != tt.v2Rel {
				t.Errorf("v2 rel %q, want %q", h.v2.rel, tt.v2Rel)
			}
			if tt.memRelWant != "" && h.memory.rel != tt.memRelWant {
				t.Errorf("memory rel %q, want %q", h.memory.rel, tt.memRelWant)
			}
		})
	}
}

func TestParseProcCgroup(t *testing.T) {
	got := parseProcCgroup([]byte("4:memory:/a/b\n0::/\nbroken\n5:cpu,cpuacct:/c\n6:x:relative\n"))
	want := []procCgroup{
		{id: "4", controllers: []string{"memory"}, path: "/a/b"},
		{id: "0", path: "/"},
		{id: "5", controllers: []string{"cpu", "cpuacct"}, path: "/c"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseProcCgroup = %+v, want %+v", got, want)
	}
}

// TestSuiteCgroupWithoutLimitFiles: over folders that are not a cgroupfs
// (no limit files appear on mkdir), the limits are reported as not set,
// and the folders are removed again.
func TestSuiteCgroupWithoutLimitFiles(t *testing.T) {
	root := t.TempDir()
	mount := func(name string, v2 bool) *cgroupMount {
		own := filepath.Join(root, name)
		if err := os.Mkdir(own, 0o755); err != nil {
			t.Fatal(err)
		}
		return &cgroupMount{v2: v2, controllers: []string{name}, own: own, rel: "/"}
	}
	h := Cgroups{v2: mount("unified", true), pids: mount("pids", false), memory: mount("memory", false)}
	c := newSuiteCgroup(h, "suite", 64, 1<<30)
	if c == nil {
		t.Fatal("no cgroup made over writable folders")
	}
	if procs, mem := c.mechanisms(); procs != "" || mem != "" {
		t.Errorf("mechanisms %q %q, want none: no limit file could be written", procs, mem)
	}
	if len(c.problems) != 2 || len(c.dirs) != 3 {
		t.Errorf("problems %q dirs %q, want 2 problems (pids, memory) and 3 folders", c.problems, c.dirs)
	}
	if err := c.add(os.Getpid()); err == nil {
		t.Error("add into a folder without cgroup.procs succeeded")
	}
	if err := c.remove(); err != nil {
		t.Fatal(err)
	}
	for _, d := range c.dirs {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("%s left behind", d)
		}
	}
	if c := newSuiteCgroup(Cgroups{}, "s2", 64, 1<<30); c != nil {
		t.Errorf("cgroup %+v without any hierarchy", c)
	}
}

// TestSuiteCgroupReal uses the machine's cgroups when orch may write them
// (root, or a delegated v2 subtree): a child process is moved in, listed,
// found by contains, killed through the cgroup, and the cgroup removed.
func TestSuiteCgroupReal(t *testing.T) {
	c := newSuiteCgroup(ReadCgroups(), fmt.Sprintf("orch-test-%d", os.Getpid()), 64, 256<<20)
	if c == nil {
		t.Skip("no writable cgroup here")
	}
	t.Cleanup(func() { _ = c.remove() })
	procs, mem := c.mechanisms()
	t.Logf("limits here: processes by %q, memory by %q", procs, mem)
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	if err := c.add(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(c.pids(), cmd.Process.Pid) || !c.contains(cmd.Process.Pid) || !c.hasLive() {
		t.Fatalf("pid %d not found in the cgroup: pids %v", cmd.Process.Pid, c.pids())
	}
	if c.contains(os.Getpid()) {
		t.Error("the test process is said to be in the suite's cgroup")
	}
	c.kill()
	if err := <-done; err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("sleep ended with %v, want killed", err)
	}
	done <- nil // for the cleanup
	if err := c.remove(); err != nil {
		t.Fatal(err)
	}
	for _, d := range c.dirs {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("cgroup %s left behind", d)
		}
	}
}

func FuzzParseProcCgroup(f *testing.F) {
	f.Add([]byte(hybridCgroup))
	f.Add([]byte("0::/a:b\n::\n1:x:\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, g := range parseProcCgroup(data) {
			if !strings.HasPrefix(g.path, "/") {
				t.Fatalf("relative path %q accepted", g.path)
			}
		}
	})
}

func FuzzParseMountinfo(f *testing.F) {
	f.Add([]byte(hybridMountinfo))
	f.Add([]byte(`1 2 3:4 / /a\040b\ rw - cgroup x rw,pids` + "\n- - - -\n"))
	f.Add([]byte(hybridMountinfo + "0::/../../etc\n4:memory:/process_api/x/..\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		// The same bytes are read as mountinfo and as /proc/self/cgroup
		// lines, so that the fuzzer can shape both.
		mounts := parseMountinfo(data)
		h := cgroupsFrom(mounts, append(parseProcCgroup(data), parseProcCgroup([]byte(hybridCgroup))...))
		// orch's own cgroup, where suites' cgroups are made, is always
		// inside a mounted hierarchy: never above or beside it.
		for _, cm := range []*cgroupMount{h.v2, h.pids, h.memory} {
			if cm == nil {
				continue
			}
			inside := false
			for _, m := range mounts {
				point := filepath.Clean(m.point)
				inside = inside || cm.own == point || strings.HasPrefix(cm.own, strings.TrimSuffix(point, "/")+"/")
			}
			if !inside {
				t.Fatalf("own cgroup %q (%q) is outside every mount point", cm.own, cm.rel)
			}
		}
	})
}
