// Package procstat reads what Linux's /proc/<pid>/stat (macOS: the
// kern.proc.pid sysctl) says about a process, and answers the question
// every part of orch that records or stops processes asks: is this pid
// still a live process? A zombie — a process that has exited but was not
// yet reaped by its parent, as happens for a moment after `kill -9`, or
// for good under a container init that does not reap — is not live.
package procstat

import (
	"bytes"
	"errors"
	"strconv"
	"syscall"
)

// Info is what /proc/<pid>/stat says about a process (on macOS, what
// read_darwin.go makes of the kernel's answer in the same terms).
type Info struct {
	State byte   // R, S, D, Z, X, …
	Pgrp  int    // process group
	Sid   int    // session (-1: not known, a zombie's on macOS)
	Flags uint64 // the kernel's PF_* flags of the process, 0 when not shown
}

// pfExiting is the kernel's PF_EXITING: the process is in exit(2) (killed,
// or returning from main), past running any code of its own; it becomes a
// zombie shortly.
const pfExiting = 0x4

// Live reports whether the process runs: not a zombie, not dead, and not
// on its way out (a SIGKILLed process leaves its cgroup and frees its
// memory before it becomes a zombie).
func (i Info) Live() bool { return i.State != 'Z' && i.State != 'X' && i.Flags&pfExiting == 0 }

// Parse parses "pid (comm) state ppid pgrp session tty_nr tpgid flags
// ...": comm may hold
// spaces and parentheses, so the fields start after the last ')'. A
// failed parse returns the zero Info.
func Parse(data []byte) (Info, bool) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return Info{}, false
	}
	fields := bytes.Fields(data[i+1:])
	if len(fields) < 4 || len(fields[0]) != 1 {
		return Info{}, false
	}
	pg, err1 := strconv.Atoi(string(fields[2]))
	sid, err2 := strconv.Atoi(string(fields[3]))
	if err1 != nil || err2 != nil {
		return Info{}, false
	}
	info := Info{State: fields[0][0], Pgrp: pg, Sid: sid}
	if len(fields) >= 7 { // tty_nr, tpgid, flags
		flags, err := strconv.ParseUint(string(fields[6]), 10, 64)
		if err != nil {
			return Info{}, false
		}
		info.Flags = flags
	}
	return info, true
}

// Live reports whether pid is a live process: its stat says so, or, where
// /proc cannot tell (not mounted, hidden), signal 0 finds it (EPERM: it
// exists, owned by someone else).
func Live(pid int) bool {
	if pid <= 0 {
		return false
	}
	if info, ok := Read(pid); ok {
		return info.Live()
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
