package sandbox

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// procInfo is what /proc/<pid>/stat says about a process.
type procInfo struct {
	state byte
	pgrp  int
	sid   int
}

func (p procInfo) live() bool { return p.state != 'Z' && p.state != 'X' }

// procStat reads /proc/<pid>/stat.
func procStat(pid int) (procInfo, bool) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return procInfo{}, false
	}
	return parseStat(data)
}

// parseStat parses "pid (comm) state ppid pgrp session ...": comm may hold
// spaces and parentheses, so the fields start after the last ')'.
func parseStat(data []byte) (procInfo, bool) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return procInfo{}, false
	}
	fields := bytes.Fields(data[i+1:])
	if len(fields) < 4 || len(fields[0]) != 1 {
		return procInfo{}, false
	}
	pg, err1 := strconv.Atoi(string(fields[2]))
	sid, err2 := strconv.Atoi(string(fields[3]))
	if err1 != nil || err2 != nil {
		return procInfo{}, false
	}
	return procInfo{state: fields[0][0], pgrp: pg, sid: sid}, true
}

// processLive reports whether pid exists and is not a zombie.
func processLive(pid int) bool {
	info, ok := procStat(pid)
	if !ok {
		return syscall.Kill(pid, 0) == nil
	}
	return info.live()
}

// hasEnvEntry reports whether the environment of pid (as /proc shows it)
// holds the entry kv ("NAME=value").
func hasEnvEntry(pid int, kv string) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
	if err != nil {
		return false
	}
	return envBlockHas(data, kv)
}

// envBlockHas reports whether a NUL-separated environment block holds kv
// as a whole entry.
func envBlockHas(block []byte, kv string) bool {
	for len(block) > 0 {
		entry, rest, _ := bytes.Cut(block, []byte{0})
		if string(entry) == kv {
			return true
		}
		block = rest
	}
	return false
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
