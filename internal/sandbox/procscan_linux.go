package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// hasEnvEntry reports whether the environment of pid (as /proc shows it)
// holds the entry kv ("NAME=value").
func hasEnvEntry(pid int, kv string) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
	if err != nil {
		return false
	}
	return envBlockHas(data, kv)
}

// listPids returns the numeric entries of /proc. ok is false when /proc
// cannot be read.
func listPids() (pids []int, ok bool) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, false
	}
	self := os.Getpid()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err == nil && pid > 0 && pid != self {
			pids = append(pids, pid)
		}
	}
	return pids, true
}

// signalVerified sends sig to pid only if member(pid) holds, without
// hitting another process that reused the number: the pidfd pins the
// process first, membership is checked after, and the signal goes through
// the pidfd (a dead process gives ESRCH). Kernels without pidfds (before
// 5.3) get a plain kill after the check.
func signalVerified(pid int, sig syscall.Signal, member func(int) bool) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		if errors.Is(err, unix.ENOSYS) && member(pid) {
			_ = syscall.Kill(pid, sig)
		}
		return
	}
	defer unix.Close(fd)
	if member(pid) {
		_ = unix.PidfdSendSignal(fd, sig, nil, 0)
	}
}
