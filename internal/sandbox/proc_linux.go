package sandbox

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// What the bwrap sandbox and a suite's process handling use of Linux
// (docs/sandbox.md, "Platforms"): the sandbox itself, cgroups, per-process
// limits of another process (prlimit), waiting without reaping
// (waitid's WNOWAIT), pidfds, and /proc to find a suite's processes.

// installHint says what to do when the sandbox is unavailable.
const installHint = `install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap) or opt out of the sandbox with sandbox = "none" under [test] in .orch/config.toml (or --sandbox none); an opt-out is recorded in the report as sandbox "none"`

// Supported reports whether the bwrap sandbox can work on this operating
// system at all (it may still be unavailable on the machine: Available
// says).
const Supported = true

// bwrapPlatform is nil: bubblewrap runs on Linux.
func bwrapPlatform() error { return nil }

// startsSuites is nil: Start runs suites on Linux.
func startsSuites() error { return nil }

// processLimitGap and memoryLimitGap say, in a suite's Limits, why its
// processes or memory are not bounded when no mechanism held.
const (
	processLimitGap = "no writable cgroup; RLIMIT_NPROC counts every process of the user outside a sandbox and never binds root"
	memoryLimitGap  = ""
)

// keepReadEnd is false: unread asks the release pipe's write end.
const keepReadEnd = false

// startInCgroup makes the process start in the cgroup open as fd (clone3's
// CLONE_INTO_CGROUP) and reports that it will.
func startInCgroup(attr *syscall.SysProcAttr, fd int) bool {
	attr.UseCgroupFD, attr.CgroupFD = true, fd
	return true
}

// waitExited returns once pid, a child of orch, has exited, without
// reaping it.
func waitExited(pid int) {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, syscall.EINTR) {
			return
		}
	}
}

// unread returns how many bytes wait in the release pipe (asked of its
// write end, which Linux answers for the pipe).
func (g *Process) unread() int {
	rc, err := g.release.SyscallConn()
	if err != nil {
		return 0
	}
	n := 0
	_ = rc.Control(func(fd uintptr) {
		n, _ = unix.IoctlGetInt(int(fd), unix.TIOCINQ) // FIONREAD
	})
	return n
}
