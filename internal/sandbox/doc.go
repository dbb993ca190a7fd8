// Package sandbox runs the suites of orch's test phase contained: under
// bubblewrap, with a filtered environment, bounded resources, and a kill
// that leaves no process behind. Package testrun decides what to run and
// reads the results; this package decides how a command is held.
//
// The API a runner uses: New (with Config: the directory, the
// environment, extra read-only binds, extra writable cache folders, extra
// variables) makes the Sandbox of a run, Sandbox.Env the environment of
// one suite in it, Start (with Launch) starts a suite, and its Process is
// waited for (Exited, WaitGone), stopped (Stop) and finished (Finish).
// SanitizeEnv filters the environment, Check and Available tell whether
// bwrap works here.
//
// The sandbox fails closed: unless the mode is None (an explicit
// opt-out, to be recorded), every suite runs under bubblewrap, and New
// and Check refuse with ErrNoSandbox (saying how to install bubblewrap or
// opt out)
// when bwrap does not work here. Check tells callers in advance.
// Inside the sandbox a suite has:
//   - a read-only view of the machine, a private /tmp, an empty /run, no
//     network, its own pid namespace and (when not root) user namespace;
//   - the directory and a dedicated GOCACHE writable, nothing else of the
//     host;
//   - the user's home folders ($HOME, orch's own $HOME, the password
//     database's) under an empty tmpfs, so ~/.ssh, ~/.aws, ~/.config and
//     the rest are not readable; toolchains in them are bound back
//     read-only: PATH entries (and the lib next to a bin), what their
//     symlinks point to, Go's GOROOT and GOMODCACHE, rustup's toolchains,
//     cargo's registry and git checkouts, pyenv — never ~/.ssh, ~/.gnupg,
//     ~/.aws, ~/.config and the like (secretHomeDirs);
//   - git's directories read-only: the directory's .git (a worktree's link
//     file) and the git and common directory `git rev-parse` reports, so a
//     suite cannot plant a hook or change the main repository's config, yet
//     `git status` and `git log` work.
//
// Every suite, sandboxed or not:
//   - has its environment sanitized (SanitizeEnv: names with KEY, SECRET,
//     TOKEN, PASSWORD... and the model providers' variables are removed,
//     unless listed in Options.AllowEnv);
//   - is held before its command runs until its limits are in place
//     (bwrap's --block-fd, or a /bin/sh gate without sandbox): a cgroup of
//     its own when orch may create one (pids.max for MaxProcesses, memory
//     max for MaxMemory, v2 or v1), RLIMIT_DATA per process, RLIMIT_NPROC
//     inside bwrap's user namespace, and each tmpfs of the sandbox capped
//     at MaxMemory; RunInfo.Limits says which mechanisms held;
//   - has its output go live to Options.Stream and to LogDir/<suite>.log,
//     capped at Options.MaxLogBytes; the rest is dropped with a marker and a
//     count, never buffered in memory (orch's peak RSS stays far under
//     200 MiB — about 15 MiB measured — while a suite prints 1 GB; see
//     memory_test.go);
//   - is stopped at its timeout or a cancelled context — SIGTERM, then
//     SIGKILL after KillGrace, repeated until nothing is left — and Run
//     returns only when no process of it remains. Its processes are found
//     by its session (the leader's zombie is reaped last, so the ids are
//     not reused meanwhile), the sandbox's pid namespace (whose end kills
//     everything in it), its cgroup, and a marker variable in its
//     environment; processes left behind by a suite that exited are
//     stopped the same way.
//
// What cannot be guaranteed:
//   - without a writable cgroup and as root, the process count is not
//     bounded (root is exempt from RLIMIT_NPROC); outside bwrap,
//     RLIMIT_NPROC is not used at all, since it counts every process of the
//     user. RunInfo.Limits and a note say so;
//   - without a cgroup, memory is bounded per process (RLIMIT_DATA), not
//     per suite;
//   - without the sandbox ("none"), a process that leaves the session
//     (setsid), clears its environment and runs outside any cgroup of the
//     suite cannot be found, and so survives; so does a process started by
//     another service on the suite's behalf (a docker container, a systemd
//     unit). Under bwrap the pid namespace holds every process, and /run
//     (with the sockets of such services) is empty;
//   - under bwrap SIGTERM ends the sandbox at once (bwrap does not forward
//     it), so the grace period only matters without a sandbox;
//   - the sandbox does not hide other users' world-readable files, nor
//     system-wide secrets readable by the user outside their home.
package sandbox
