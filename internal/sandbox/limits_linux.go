package sandbox

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// applyRlimits sets the per-process limits of pid (inherited by everything
// it starts), soft and hard alike so the suite cannot raise them, never
// above a hard limit already in place:
//   - RLIMIT_DATA bounds the private writable memory of each process. It
//     is used rather than RLIMIT_AS because runtimes reserve far more
//     address space than they use (the JVM's heap, V8's pointer cage) and
//     would not start under an address-space limit; a cgroup, when there
//     is one, bounds the whole suite anyway.
//   - RLIMIT_NPROC only when nproc is set: the kernel counts it per user
//     (per user namespace and uid), so it bounds one suite only inside
//     bwrap's own user namespace, and never binds root.
//
// It returns the mechanisms it set.
func applyRlimits(pid, maxProcs int, maxMem int64, nproc bool) (procs, mem string, err error) {
	if maxMem > 0 {
		if err := lowerRlimit(pid, unix.RLIMIT_DATA, uint64(maxMem)); err != nil {
			return "", "", fmt.Errorf("limit the memory of the suite (RLIMIT_DATA): %w", err)
		}
		mem = "RLIMIT_DATA per process"
	}
	if nproc && maxProcs > 0 {
		if err := lowerRlimit(pid, unix.RLIMIT_NPROC, uint64(maxProcs)); err != nil {
			return "", "", fmt.Errorf("limit the processes of the suite (RLIMIT_NPROC): %w", err)
		}
		procs = "RLIMIT_NPROC in the sandbox's user namespace"
	}
	return procs, mem, nil
}

// lowerRlimit sets resource of pid to at most limit.
func lowerRlimit(pid, resource int, limit uint64) error {
	var old unix.Rlimit
	if err := unix.Prlimit(pid, resource, nil, &old); err != nil {
		return fmt.Errorf("read the limit of pid %d: %w", pid, err)
	}
	lim := unix.Rlimit{Cur: min(limit, old.Max), Max: min(limit, old.Max)}
	if err := unix.Prlimit(pid, resource, &lim, nil); err != nil {
		return fmt.Errorf("set the limit of pid %d: %w", pid, err)
	}
	return nil
}
