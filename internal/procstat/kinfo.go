package procstat

// What macOS's kern.proc.pid sysctl says of a process (struct
// kinfo_proc, <sys/sysctl.h>) in the terms of Info. The translation is
// here, built on every platform, so its table test runs on Linux too
// (read_darwin.go makes the call).

// Process states of <sys/proc.h> (kinfo_proc's p_stat).
const (
	darwinSIDL   = 1 // being created by fork
	darwinSRUN   = 2 // runnable
	darwinSSLEEP = 3 // sleeping on an address
	darwinSSTOP  = 4 // stopped
	darwinSZOMB  = 5 // exited, waiting for its parent to collect it
)

// darwinPWEXIT is <sys/proc.h>'s P_WEXIT in kinfo_proc's p_flag: the
// process is working on exiting (the kernel sets it from P_LEXIT), like
// Linux's PF_EXITING.
const darwinPWEXIT = 0x00002000

// fromKinfo turns kinfo_proc's p_stat, p_flag and e_pgid, and the
// process's session as getsid(2) told it (sidOK false: getsid failed),
// into an Info: the state as the letter /proc/<pid>/stat would show, and
// PF_EXITING for P_WEXIT. ok is false for a state the kernel does not
// define, and for a process whose session could not be read unless it is
// a zombie (whose session does not matter: it is not live).
func fromKinfo(stat int8, flag int32, pgid int32, sid int, sidOK bool) (Info, bool) {
	var state byte
	switch stat {
	case darwinSIDL, darwinSRUN:
		state = 'R'
	case darwinSSLEEP:
		state = 'S'
	case darwinSSTOP:
		state = 'T'
	case darwinSZOMB:
		state = 'Z'
	default:
		return Info{}, false
	}
	if !sidOK {
		if state != 'Z' {
			return Info{}, false
		}
		sid = -1
	}
	info := Info{State: state, Pgrp: int(pgid), Sid: sid}
	if flag&darwinPWEXIT != 0 {
		info.Flags = pfExiting
	}
	return info, true
}
