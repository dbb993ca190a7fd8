package procstat

import "golang.org/x/sys/unix"

// Read asks the kernel about pid (the kern.proc.pid sysctl, and getsid(2)
// for its session: kinfo_proc has no session id); ok is false when the
// process is gone. macOS has no /proc.
func Read(pid int) (info Info, ok bool) {
	if pid <= 0 {
		return Info{}, false
	}
	k, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || int(k.Proc.P_pid) != pid {
		return Info{}, false
	}
	sid, err := unix.Getsid(pid)
	return fromKinfo(k.Proc.P_stat, k.Proc.P_flag, k.Eproc.Pgid, sid, err == nil)
}
