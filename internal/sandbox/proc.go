package sandbox

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/orchdev/orch/internal/procstat"
)

const (
	// killWaitLimit bounds the wait for a suite to vanish after SIGKILL (a
	// process stuck in uninterruptible sleep does not die at once).
	killWaitLimit = 30 * time.Second
	// infoLimit bounds the wait for bwrap to report its sandbox.
	infoLimit = 30 * time.Second
)

// gateScript holds a suite run without sandbox until orch has applied its
// limits: it waits for a line on fd 3, closes it and execs the command,
// which keeps the pid, the limits and the cgroup. Exit 125 means orch
// never released it.
const gateScript = `read -r orch_gate <&3 || exit 125; exec 3<&-; exec "$@"`

// gateShell runs gateScript.
const gateShell = "/bin/sh"

// Launch describes one suite to start.
type Launch struct {
	// Argv is the command, Argv[0] resolved (LookPath).
	Argv []string
	// Dir is the directory it starts in.
	Dir string
	// Env is its whole environment (filtered, and passed through
	// Sandbox.Env when sandboxed). Start adds a marker variable.
	Env []string
	// Stdout and Stderr receive its output (may be the same file).
	Stdout, Stderr *os.File
	// Sandbox, when not nil, runs it under bwrap; nil runs it without one.
	Sandbox *Sandbox
	// Cgroups is where the suite's own cgroup is made (ReadCgroups); the
	// zero value makes none.
	Cgroups Cgroups
	// Name names the suite's cgroup (with orch's pid and a random token).
	Name string
	// MaxProcesses and MaxMemory bound the suite (0: no bound).
	MaxProcesses int
	MaxMemory    int64
}

// Process is a started suite: its first process and everything it
// starts. Every process of it is found by at least one
// of: the session and process group of the leader (whose zombie is not
// reaped until the end, so these numbers cannot be reused meanwhile), the
// sandbox's pid namespace, the suite's cgroup, and the marker variable in
// its environment.
type Process struct {
	cmd        *exec.Cmd
	leader     int
	marker     string
	cg         *suiteCgroup
	sandboxPID int    // host pid of the sandbox's first process, 0 without
	pidNS      string // the sandbox's pid namespace ("pid:[inode]")
	exited     chan struct{}
	state      *os.ProcessState
	reaped     bool
	limits     Limits
	// release is the write end of the pipe the suite is held on; kept open
	// until the end to tell whether the byte that released it was read.
	release *os.File
	// readEnd is orch's copy of the pipe's read end, kept where the
	// unread byte is told from that end (macOS); nil on Linux.
	readEnd *os.File
	// releaseFailed is set when the held process was gone before orch
	// could release it.
	releaseFailed bool
	// neverStarted is set by reap when the suite was never released or
	// never read the byte that released it: the command did not run
	// (bwrap failed to build the sandbox first).
	neverStarted bool
}

// Start starts the suite in a new session, in a cgroup of its own when
// l.Cgroups allows one, applies its limits while it is held (bwrap's
// --block-fd, or gateScript), then releases it. Nothing of the suite's own
// command runs before its limits are in place; if they cannot be applied
// the suite is killed and an error returned. The notes are remarks for the
// run's report. The caller waits for Exited (or stops the suite) and then
// calls Finish.
func Start(l Launch) (*Process, []string, error) {
	if err := startsSuites(); err != nil {
		return nil, nil, err
	}
	var notes []string
	token, err := randomHex(8)
	if err != nil {
		return nil, nil, err
	}
	// Every process of the suite inherits the marker: the kill finds the
	// ones that left the session (setsid) by it.
	marker := "ORCH_SUITE_" + token + "=" + l.Name
	cg := newSuiteCgroup(l.Cgroups, fmt.Sprintf("orch-%d-%s-%s", os.Getpid(), token[:8], l.Name), l.MaxProcesses, l.MaxMemory)
	if cg != nil {
		for _, p := range cg.problems {
			notes = append(notes, "cgroup limit not set: "+p)
		}
	}
	if l.Sandbox != nil {
		if err := l.Sandbox.handOverDir(); err != nil {
			if cg != nil {
				_ = cg.remove()
			}
			return nil, notes, err
		}
	}
	p, startNotes, err := start(l, marker, cg)
	notes = append(notes, startNotes...)
	if err != nil && cg != nil {
		if rerr := cg.remove(); rerr != nil {
			notes = append(notes, rerr.Error())
		}
	}
	return p, notes, err
}

// start is Start once the marker and cgroup are made.
func start(l Launch, marker string, cg *suiteCgroup) (*Process, []string, error) {
	var notes []string
	blockR, blockW, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("create pipe: %w", err)
	}
	var argv []string
	var extra []*os.File
	var infoR, infoW *os.File
	if l.Sandbox != nil {
		if infoR, infoW, err = os.Pipe(); err != nil {
			blockR.Close()
			return nil, nil, fmt.Errorf("create pipe: %w", err)
		}
		defer infoR.Close()
		extra = []*os.File{infoW, blockR} // fds 3 and 4
		argv = l.Sandbox.argv(l.Argv, l.Dir, 3, 4)
	} else {
		extra = []*os.File{blockR} // fd 3
		argv = append([]string{gateShell, "-c", gateScript, "orch-suite"}, l.Argv...)
	}
	dir := l.Dir
	if l.Sandbox != nil {
		// bwrap enters the directory itself (--chdir), inside the sandbox.
		dir = "/"
	}
	newCmd := func() *exec.Cmd {
		return &exec.Cmd{
			Path:        argv[0],
			Args:        argv,
			Dir:         dir,
			Env:         append(slices.Clip(l.Env), marker),
			Stdout:      l.Stdout,
			Stderr:      l.Stderr,
			ExtraFiles:  extra,
			SysProcAttr: &syscall.SysProcAttr{Setsid: true},
		}
	}
	cmd := newCmd()
	// The suite's first process is born in its v2 cgroup (clone3's
	// CLONE_INTO_CGROUP): if orch is killed before it moved it there,
	// ReapStale still finds it. Otherwise a bwrap whose parent died
	// before bwrap set its parent-death signal ran on, in no cgroup of
	// the suite, found by nothing (seen by the kill test of orch test).
	intoCgroup := false
	if cg != nil && cg.v2 != "" {
		if d, err := os.Open(cg.v2); err == nil {
			defer d.Close()
			intoCgroup = startInCgroup(cmd.SysProcAttr, int(d.Fd()))
		}
	}
	err = cmd.Start()
	if err != nil && intoCgroup {
		// A kernel without CLONE_INTO_CGROUP (before 5.7): moved after
		// the start, as on v1.
		cmd = newCmd()
		err = cmd.Start()
	}
	// Where unread needs the read end of the release pipe (macOS), orch
	// keeps a copy of it until reap.
	var readEnd *os.File
	if keepReadEnd {
		readEnd = blockR
	} else {
		blockR.Close()
	}
	if infoW != nil {
		infoW.Close()
	}
	if err != nil {
		blockW.Close()
		if readEnd != nil {
			readEnd.Close()
		}
		return nil, nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	g := &Process{cmd: cmd, leader: cmd.Process.Pid, marker: marker, cg: cg, exited: make(chan struct{}), release: blockW, readEnd: readEnd,
		limits: Limits{MaxProcesses: l.MaxProcesses, MaxMemory: l.MaxMemory}}
	go g.watch()
	// end kills whatever started; the release pipe is closed unwritten.
	end := func() {
		g.kill()
		g.waitGone(killWaitLimit, true)
		g.reap()
	}
	abort := func(err error) (*Process, []string, error) {
		end()
		return nil, notes, err
	}

	target := g.leader
	if l.Sandbox != nil {
		pid, err := readChildPID(infoR)
		if err != nil {
			end()
			return nil, notes, fmt.Errorf("%w: bwrap did not start the sandbox (%v, %s); its message is in the log", ErrNoSandbox, err, describeExit(g.state))
		}
		g.sandboxPID, target = pid, pid
		g.pidNS, _ = os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "ns", "pid"))
		if self, _ := os.Readlink("/proc/self/ns/pid"); g.pidNS == self {
			g.pidNS = "" // not a namespace of its own: useless for finding members
		}
	}
	// A target that is already gone (ESRCH) died while being set up —
	// bwrap failing to build the sandbox — and never ran the command:
	// the suite then just ends, and reap finds it was never released.
	if g.cg != nil {
		if err := g.cg.add(target); err != nil && !errors.Is(err, syscall.ESRCH) {
			notes = append(notes, fmt.Sprintf("cgroup not used: %v", err))
			if rerr := g.cg.remove(); rerr != nil {
				notes = append(notes, rerr.Error())
			}
			g.cg = nil
		} else {
			p, m := g.cg.mechanisms()
			g.limits.add(p, m)
		}
	}
	// RLIMIT_NPROC counts per user namespace and uid: it bounds the suite
	// alone only in a user namespace of its own (never as root, whose
	// suites run as SuiteUID in the host's).
	nproc := l.Sandbox != nil && ownUserNS(target)
	p, m, err := applyRlimits(target, l.MaxProcesses, l.MaxMemory, nproc)
	switch {
	case errors.Is(err, syscall.ESRCH):
		g.releaseFailed = true
		return g, notes, nil
	case err != nil:
		return abort(err)
	}
	g.limits.add(p, m)
	if _, err := io.WriteString(blockW, "\n"); errors.Is(err, syscall.EPIPE) {
		g.releaseFailed = true // nobody is left to read it
	} else if err != nil {
		return abort(fmt.Errorf("release the suite: %w", err))
	}
	return g, notes, nil
}

func (a *Limits) add(procs, mem string) {
	if procs != "" {
		a.Processes = append(a.Processes, procs)
	}
	if mem != "" {
		a.Memory = append(a.Memory, mem)
	}
}

// readChildPID reads bwrap's {"child-pid": N} from its info pipe.
func readChildPID(r *os.File) (int, error) {
	_ = r.SetReadDeadline(time.Now().Add(infoLimit))
	var info struct {
		ChildPID int `json:"child-pid"`
	}
	if err := json.NewDecoder(io.LimitReader(r, 64<<10)).Decode(&info); err != nil {
		return 0, fmt.Errorf("read bwrap's info: %w", err)
	}
	if info.ChildPID <= 0 {
		return 0, errors.New("bwrap reported no child pid")
	}
	return info.ChildPID, nil
}

// ownUserNS reports whether pid lives in another user namespace than orch.
func ownUserNS(pid int) bool {
	theirs, err1 := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "ns", "user"))
	ours, err2 := os.Readlink("/proc/self/ns/user")
	return err1 == nil && err2 == nil && theirs != ours
}

// watch waits for the leader to exit without reaping it: the zombie keeps
// its pid, and so the session and process group ids, from being reused
// while orch still looks for the suite's processes.
func (g *Process) watch() {
	defer close(g.exited)
	waitExited(g.leader)
}

// reap collects the leader's exit status, once it exited, and finds out
// whether the suite was ever released.
func (g *Process) reap() {
	if g.reaped {
		return
	}
	<-g.exited
	_ = g.cmd.Wait()
	g.state = g.cmd.ProcessState
	g.reaped = true
	g.neverStarted = g.releaseFailed || g.unread() > 0
	g.release.Close()
	if g.readEnd != nil {
		g.readEnd.Close()
	}
}

func (g *Process) leaderExited() bool {
	select {
	case <-g.exited:
		return true
	default:
		return false
	}
}

// isMember reports whether pid is a live process of the suite.
func (g *Process) isMember(pid int) bool {
	return g.scanMember(pid) || (g.cg != nil && procstat.Live(pid) && g.cg.contains(pid))
}

// scanMember is isMember without the cgroup, whose members are listed by
// the cgroup itself: the checks a scan of /proc makes for every process.
func (g *Process) scanMember(pid int) bool {
	st, ok := procstat.Read(pid)
	if !ok || !st.Live() {
		return false
	}
	if st.Sid == g.leader || st.Pgrp == g.leader {
		return true
	}
	if g.pidNS != "" {
		if ns, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "ns", "pid")); err == nil && ns == g.pidNS {
			return true
		}
	}
	return g.marker != "" && hasEnvEntry(pid, g.marker)
}

// members returns the live processes of the suite (the leader excluded
// once it exited): those of its cgroup, and those a scan of /proc finds.
// With first it stops at the first one. ok is false when /proc cannot be
// read.
func (g *Process) members(first bool) ([]int, bool) {
	var out []int
	if g.cg != nil {
		for _, pid := range g.cg.pids() {
			if procstat.Live(pid) {
				out = append(out, pid)
				if first {
					return out, true
				}
			}
		}
	}
	pids, ok := listPids()
	if !ok {
		return out, false
	}
	for _, pid := range pids {
		if !slices.Contains(out, pid) && g.scanMember(pid) {
			out = append(out, pid)
			if first {
				break
			}
		}
	}
	return out, true
}

// signal sends sig to every process of the suite.
func (g *Process) signal(sig syscall.Signal) {
	// The leader's zombie keeps the group id valid: kill(-pgid) reaches
	// the members that stayed in the group even before /proc is scanned.
	_ = syscall.Kill(-g.leader, sig)
	if sig == syscall.SIGKILL {
		if g.cg != nil {
			g.cg.kill()
		}
		if g.sandboxPID != 0 {
			// Killing the sandbox's first process ends its pid namespace:
			// the kernel kills every process in it.
			signalVerified(g.sandboxPID, sig, g.isMember)
		}
	}
	pids, ok := g.members(false)
	if !ok {
		return
	}
	for _, pid := range pids {
		signalVerified(pid, sig, g.isMember)
	}
}

func (g *Process) kill() { g.signal(syscall.SIGKILL) }

// gone reports whether nothing of the suite runs any more.
func (g *Process) gone() bool {
	if !g.leaderExited() {
		return false
	}
	live, ok := g.members(true)
	if !ok {
		// No /proc: the process group is all orch can check.
		return errors.Is(syscall.Kill(-g.leader, 0), syscall.ESRCH)
	}
	return len(live) == 0
}

// waitGone polls gone until it holds or limit passes; with kill it sends
// SIGKILL to whatever is still there on every round (a fork bomb makes new
// processes between two scans).
func (g *Process) waitGone(limit time.Duration, kill bool) bool {
	deadline := time.Now().Add(limit)
	pause := 5 * time.Millisecond
	for {
		if kill {
			g.kill()
		}
		if g.gone() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pause)
		pause = min(pause*2, 100*time.Millisecond)
	}
}

// stop ends the suite: SIGTERM to every process of it, SIGKILL after
// grace, until no process is left. It returns a note when processes
// survived SIGKILL for killWaitLimit.
func (g *Process) stop(grace time.Duration) string {
	g.signal(syscall.SIGTERM)
	if g.waitGone(grace, false) {
		return ""
	}
	if g.waitGone(killWaitLimit, true) {
		return ""
	}
	left, _ := g.members(false)
	return fmt.Sprintf("processes %v of the suite were still present %s after SIGKILL", left, killWaitLimit)
}

// describeExit renders a process state for messages.
func describeExit(st *os.ProcessState) string {
	if st == nil {
		return "not exited"
	}
	return fmt.Sprintf("exit status %d", exitCode(st))
}

// Exited is closed when the suite's first process has exited (others may
// still run: WaitGone and Stop deal with them).
func (g *Process) Exited() <-chan struct{} { return g.exited }

// WaitGone waits up to limit for every process of the suite to end, and
// reports whether they did; with kill it sends SIGKILL to whatever is
// still there on every round.
func (g *Process) WaitGone(limit time.Duration, kill bool) bool { return g.waitGone(limit, kill) }

// Stop ends the suite: SIGTERM to every process of it, SIGKILL after
// grace, until no process is left. It returns a note when processes
// survived SIGKILL for a long while (30 s).
func (g *Process) Stop(grace time.Duration) string { return g.stop(grace) }

// Limits are the bounds of the suite and the mechanisms that enforce them.
func (g *Process) Limits() Limits { return g.limits }

// Outcome is how a suite ended.
type Outcome struct {
	// ExitCode is the exit status of the suite's command, or 128+signal.
	ExitCode int
	// NeverStarted is true when the command never ran: its process ended
	// before orch released it (bwrap failing to build the sandbox).
	NeverStarted bool
	// Notes are remarks for the run's report (a cgroup not removed).
	Notes []string
}

// Finish waits for the suite's first process, collects its exit status
// and removes the suite's cgroup. Call it once the suite is gone (after
// Exited and WaitGone, or Stop).
func (g *Process) Finish() Outcome {
	g.reap()
	var o Outcome
	if g.cg != nil {
		if err := g.cg.remove(); err != nil {
			o.Notes = append(o.Notes, err.Error())
		}
	}
	o.ExitCode = exitCode(g.state)
	o.NeverStarted = g.neverStarted
	return o
}

// exitCode turns a process state into a shell-style exit code: the exit
// status, or 128+signal for a process killed by a signal.
func exitCode(st *os.ProcessState) int {
	if st == nil {
		return -1
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return st.ExitCode()
}

// randomHex returns n random bytes in hex.
func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random marker: %w", err)
	}
	return hex.EncodeToString(b), nil
}
