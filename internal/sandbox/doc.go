// Package sandbox runs the suites of orch's test phase contained: under
// bubblewrap, with a filtered environment, bounded resources, and a kill
// that leaves no process behind. Package testrun decides what to run and
// reads the results; this package decides how a command is held.
//
// The API a runner uses:
//   - FilterEnv turns orch's environment into the suites' (an allow-list
//     plus the configuration's env_allow, values with URL credentials
//     dropped: FilterEnvNotes names them), EnvNames names it for a report;
//   - New (Config: the directory, that environment, extra read-only binds
//     at their own path or another, extra writable cache folders, extra
//     variables) makes the Sandbox of a run; Sandbox.Env is the
//     environment of one suite in it; Close ends the run;
//   - Start (Launch) starts a suite, sandboxed or not; its Process is
//     waited for (Exited, WaitGone), stopped (Stop) and finished (Finish);
//   - git's folders are bound read-only; that a suite left
//     them alone is checked by the caller with gitx.Fingerprint (package
//     testrun, after each suite);
//   - Check and Available tell whether bwrap works here.
//
// The sandbox fails closed: unless the mode is None (an explicit
// opt-out, to be recorded), every suite runs under bubblewrap, and New
// and Check refuse with ErrNoSandbox (saying how to install bubblewrap or
// opt out) when bwrap does not work here. Check tells callers in advance.
// Inside the sandbox a suite has:
//   - no privilege: as a normal user, a user namespace of its own, no
//     capabilities and (where bwrap can) no further user namespaces; as
//     root, bwrap builds the sandbox with root's rights and setpriv drops
//     the suite to SuiteUID/SuiteGID (65534) with no groups, empty
//     capability and bounding sets and no new privileges, then a second
//     bwrap as that user gives it a user namespace in which no further one
//     can be made (identity.go). A user namespace made by root alone would
//     map the suite to root outside, the owner of /etc/shadow and /root.
//     The directory is handed to SuiteUID for each suite (git's files
//     stay root's) and given back by Close;
//   - an empty root with the system folders read-only (system.go:
//     /usr, /bin, /lib*, /sys, a part of /etc), a private /tmp, an empty
//     /run, no network, its own pid namespace; the user's working tree,
//     other repositories and homes are not there (docs/sandbox.md);
//   - its writes in layers of the run (layers.go): the directory, the
//     GOCACHE, Config.Writable and the Mounts with Layer are overlays
//     over what orch prepared, with /tmp and the home in the same tmpfs of
//     Config.MaxWrite bytes, in a mount namespace a holder process keeps
//     for the run; what the suites left in the directory is written to it
//     by Close (copyback.go), the rest is gone. Sandbox.View is where
//     orch reads the directory meanwhile. The GOCACHE's lower layer is
//     written only by the go toolchain's warm-up (warm.go) before the
//     suites;
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
//   - gets the environment FilterEnv passes: PATH, HOME, the locale, TERM,
//     TZ, TMPDIR, CI and the toolchains' variables minus auth-like names,
//     plus env_allow; nothing else (DATABASE_URL, SENTRY_DSN, GH_PAT...);
//   - is held before its command runs until its limits are in place
//     (bwrap's --block-fd, or a /bin/sh gate without sandbox): a cgroup of
//     its own when orch may create one (pids.max for MaxProcesses, memory
//     max for MaxMemory, v2 or v1), RLIMIT_DATA per process, RLIMIT_NPROC
//     inside bwrap's user namespace when orch is not root, and each tmpfs
//     of the sandbox capped at MaxMemory; Process.Limits says which
//     mechanisms held;
//   - is stopped at its timeout or a cancelled context — SIGTERM, then
//     SIGKILL after the grace, repeated until nothing is left — and Stop
//     returns only when no process of it remains. Its processes are found
//     by its session (the leader's zombie is reaped last, so the ids are
//     not reused meanwhile), the sandbox's pid namespace (whose end kills
//     everything in it), its cgroup, and a marker variable in its
//     environment; processes left behind by a suite that exited are
//     stopped the same way.
//
// What cannot be guaranteed:
//   - without a writable cgroup and as root, the process count is not
//     bounded (RLIMIT_NPROC would count every process of uid 65534, or
//     of root without a sandbox); outside bwrap, RLIMIT_NPROC is not used
//     at all, since it counts every process of the user. Limits and a note
//     say so;
//   - as root where unprivileged user namespaces are disabled, the suite
//     still runs as SuiteUID without capabilities, but further user
//     namespaces are not forbidden (the sandbox's note says so);
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
//   - the system folders and the main repository's .git (its config may
//     hold a remote URL with credentials) are readable;
//   - without the sandbox, a suite runs as the user — as root, with every
//     capability.
//
// All of the above is Linux (the *_linux.go files). On macOS the sandbox
// is unavailable as on Linux without bwrap, and a suite run without it is
// found and stopped with sysctl and kqueue, unbounded (proc_darwin.go);
// elsewhere Start refuses (proc_other.go). docs/sandbox.md, "Platforms".
package sandbox
