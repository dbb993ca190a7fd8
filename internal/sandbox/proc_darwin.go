package sandbox

import (
	"errors"
	"os"
	"syscall"
	"time"

	"github.com/orchdev/orch/internal/procstat"
	"golang.org/x/sys/unix"
)

// On macOS (docs/sandbox.md, "Platforms") there is no bubblewrap: the
// sandbox is unavailable, exactly as on a Linux machine without bwrap, and
// suites run only with the explicit opt-out (sandbox "none"). Such a suite
// is held, limited and stopped with what macOS has: its own session, a
// marker variable in its environment, the process table and each
// process's environment from sysctl (kern.proc.all, kern.procargs2) to
// find its processes, kqueue to see its first process exit without
// reaping it. macOS has no cgroups and orch sets no rlimit there, so the
// processes and memory of a suite are not bounded (Limits say so).

// installHint says what to do when the sandbox is unavailable: on macOS,
// only the opt-out.
const installHint = `bubblewrap runs on Linux only; to run the suites here without a sandbox, opt out with sandbox = "none" under [test] in .orch/config.toml (or --sandbox none); an opt-out is recorded in the report as sandbox "none"`

// Supported reports whether the bwrap sandbox can work on this operating
// system at all: not on macOS.
const Supported = false

// bwrapPlatform says why there is no bwrap sandbox on macOS.
func bwrapPlatform() error {
	return &Error{Reason: "macOS has no bubblewrap, nor the Linux namespaces it is built on, so orch cannot sandbox a suite here"}
}

// startsSuites is nil: Start runs suites (without a sandbox) on macOS.
func startsSuites() error { return nil }

// processLimitGap and memoryLimitGap say, in a suite's Limits, why its
// processes or memory are not bounded when no mechanism held.
const (
	processLimitGap = "macOS has no cgroups, and RLIMIT_NPROC counts every process of the user"
	memoryLimitGap  = " (macOS has no cgroups, and orch sets no rlimit there)"
)

// keepReadEnd is true: macOS answers FIONREAD for what a pipe's read end
// holds, not its write end, so orch keeps a copy of the read end.
const keepReadEnd = true

// startInCgroup does nothing: macOS has no cgroups.
func startInCgroup(*syscall.SysProcAttr, int) bool { return false }

// waitExited returns once pid, a child of orch, has exited, without
// reaping it: kqueue's EVFILT_PROC NOTE_EXIT tells the exit and leaves
// the zombie to wait(2). A process that has exited already is refused
// (ESRCH). Once a second, and when kqueue cannot be used, the process
// table says whether it still lives (a zombie does not).
func waitExited(pid int) {
	kq, err := unix.Kqueue()
	if err != nil {
		pollExited(pid)
		return
	}
	defer unix.Close(kq)
	var ev unix.Kevent_t
	unix.SetKevent(&ev, pid, unix.EVFILT_PROC, unix.EV_ADD|unix.EV_ONESHOT)
	ev.Fflags = unix.NOTE_EXIT
	for {
		_, err = unix.Kevent(kq, []unix.Kevent_t{ev}, nil, nil)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if errors.Is(err, syscall.ESRCH) {
		return
	}
	if err != nil {
		pollExited(pid)
		return
	}
	events := make([]unix.Kevent_t, 1)
	second := unix.NsecToTimespec(int64(time.Second))
	for {
		n, err := unix.Kevent(kq, nil, events, &second)
		switch {
		case n > 0:
			return
		case err != nil && !errors.Is(err, syscall.EINTR):
			pollExited(pid)
			return
		case !procstat.Live(pid):
			return
		}
	}
}

// pollExited returns once pid is no longer live (exited: a zombie).
func pollExited(pid int) {
	for procstat.Live(pid) {
		time.Sleep(10 * time.Millisecond)
	}
}

// unread returns how many bytes wait in the release pipe, read from
// orch's copy of its read end (a byte the suite never read).
func (g *Process) unread() int {
	if g.readEnd == nil {
		return 0
	}
	rc, err := g.readEnd.SyscallConn()
	if err != nil {
		return 0
	}
	n := 0
	_ = rc.Control(func(fd uintptr) {
		n, _ = unix.IoctlGetInt(int(fd), fionread)
	})
	return n
}

// fionread is FIONREAD of macOS's <sys/filio.h>, _IOR('f', 127, int):
// IOC_OUT 0x40000000, sizeof(int) 4 << 16, 'f' << 8, 127. golang.org/x/sys
// does not define it for darwin.
const fionread = 0x40000000 | 4<<16 | 'f'<<8 | 127

// applyRlimits sets nothing on macOS: no other process's limits can be
// set there (no prlimit), RLIMIT_NPROC would count every process of the
// user, and a limit set in the held shell before exec is not one orch has
// seen bound anything there. The suite's Limits say the bounds are not
// enforced.
func applyRlimits(pid, maxProcs int, maxMem int64, nproc bool) (procs, mem string, err error) {
	return "", "", nil
}

// listPids returns the processes of the machine (sysctl kern.proc.all),
// without this one. ok is false when the kernel does not answer.
func listPids() (pids []int, ok bool) {
	procs, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil, false
	}
	self := os.Getpid()
	for i := range procs {
		pid := int(procs[i].Proc.P_pid)
		if pid > 0 && pid != self {
			pids = append(pids, pid)
		}
	}
	return pids, true
}

// hasEnvEntry reports whether the environment of pid (sysctl
// kern.procargs2: orch's user's processes only) holds the entry kv
// ("NAME=value").
func hasEnvEntry(pid int, kv string) bool {
	data, err := unix.SysctlRaw("kern.procargs2", pid)
	if err != nil {
		return false
	}
	return procArgsEnvHas(data, kv)
}

// signalVerified sends sig to pid only if member(pid) holds. macOS has no
// pidfd to pin the process first: the number could be reused between the
// check and the signal, which macOS makes unlikely by handing out pids in
// increasing order.
func signalVerified(pid int, sig syscall.Signal, member func(int) bool) {
	if member(pid) {
		_ = syscall.Kill(pid, sig)
	}
}
