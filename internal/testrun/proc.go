package testrun

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// killWaitLimit bounds the wait for a process group to vanish after
// SIGKILL (a process stuck in uninterruptible sleep does not die at once).
const killWaitLimit = 30 * time.Second

// group is a started suite: the leader process, its process group, and,
// under bwrap, the sandbox's init process (whose pid namespace holds every
// process of the suite).
type group struct {
	cmd    *exec.Cmd
	pgid   int
	exited chan struct{} // closed once the leader is reaped
	state  *os.ProcessState
	werr   error

	mu         sync.Mutex
	sandboxPID int // host pid of the sandbox's init, 0 if none or unknown
	infoDone   chan struct{}
}

// startGroup starts argv (argv[0] already resolved to a path) in its own
// process group with stdin from /dev/null. infoR, when not nil, is the read
// end of bwrap's --info-fd pipe, whose write end is in extra.
func startGroup(argv []string, dir string, env []string, stdout, stderr *os.File, extra []*os.File, infoR *os.File) (*group, error) {
	cmd := &exec.Cmd{
		Path:        argv[0],
		Args:        argv,
		Dir:         dir,
		Env:         env,
		Stdout:      stdout,
		Stderr:      stderr,
		ExtraFiles:  extra,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	g := &group{cmd: cmd, pgid: cmd.Process.Pid, exited: make(chan struct{}), infoDone: make(chan struct{})}
	go func() {
		g.werr = cmd.Wait()
		g.state = cmd.ProcessState
		close(g.exited)
	}()
	if infoR != nil {
		go g.readInfo(infoR)
	} else {
		close(g.infoDone)
	}
	return g, nil
}

// readInfo reads bwrap's {"child-pid": N} from the info pipe.
func (g *group) readInfo(r *os.File) {
	defer close(g.infoDone)
	defer r.Close()
	var info struct {
		ChildPID int `json:"child-pid"`
	}
	if err := json.NewDecoder(io.LimitReader(r, 64<<10)).Decode(&info); err == nil && info.ChildPID > 0 {
		g.mu.Lock()
		g.sandboxPID = info.ChildPID
		g.mu.Unlock()
	}
}

// waitInfo waits, at most limit, until bwrap's info pipe was read.
func (g *group) waitInfo(limit time.Duration) {
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-g.infoDone:
	case <-t.C:
	}
}

func (g *group) leaderExited() bool {
	select {
	case <-g.exited:
		return true
	default:
		return false
	}
}

// signal sends sig to the whole process group.
func (g *group) signal(sig syscall.Signal) {
	// ESRCH: nobody left. EPERM: a member changed credentials (setuid);
	// nothing more can be done from here.
	_ = syscall.Kill(-g.pgid, sig)
}

// gone reports whether nothing of the suite runs any more: the leader was
// reaped, kill(-pgid, 0) finds no live member, and the sandbox's init (if
// any) has exited.
func (g *group) gone() bool {
	if !g.leaderExited() {
		return false
	}
	if groupAlive(g.pgid) {
		return false
	}
	select {
	case <-g.infoDone:
	default:
		// bwrap writes the info before it starts the command; once the
		// leader exited the pipe is at EOF, so this resolves quickly.
		return false
	}
	g.mu.Lock()
	pid := g.sandboxPID
	g.mu.Unlock()
	return pid == 0 || !processLive(pid)
}

// waitGone polls gone until it holds or limit passes.
func (g *group) waitGone(limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	pause := 5 * time.Millisecond
	for {
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

// stop ends the suite: SIGTERM to the group, SIGKILL after grace, then it
// waits until no process is left. It returns a note when processes
// survived even SIGKILL for killWaitLimit.
func (g *group) stop(grace time.Duration) string {
	g.signal(syscall.SIGTERM)
	if g.waitGone(grace) {
		return ""
	}
	g.signal(syscall.SIGKILL)
	g.mu.Lock()
	pid := g.sandboxPID
	g.mu.Unlock()
	if pid != 0 && processLive(pid) {
		// Normally the sandbox dies with bwrap (--die-with-parent);
		// this is the belt to those braces.
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	if g.waitGone(killWaitLimit) {
		return ""
	}
	return fmt.Sprintf("processes of process group %d were still present %s after SIGKILL", g.pgid, killWaitLimit)
}

// groupAlive reports whether process group pgid has a member that is not a
// zombie. kill(-pgid, 0) returning ESRCH means none; zombies (whose parent
// has not reaped them yet) still count for kill, so /proc decides then.
func groupAlive(pgid int) bool {
	err := syscall.Kill(-pgid, 0)
	if errors.Is(err, syscall.ESRCH) {
		return false
	}
	live, ok := procGroupHasLive(pgid)
	if !ok {
		return true // no /proc: trust kill
	}
	return live
}

// procGroupHasLive scans /proc for a non-zombie member of pgid. ok is false
// when /proc cannot be read.
func procGroupHasLive(pgid int) (live, ok bool) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return false, false
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		state, pg, ok := procStat(pid)
		if ok && pg == pgid && state != 'Z' && state != 'X' {
			return true, true
		}
	}
	return false, true
}

// processLive reports whether pid exists and is not a zombie.
func processLive(pid int) bool {
	state, _, ok := procStat(pid)
	if !ok {
		return syscall.Kill(pid, 0) == nil
	}
	return state != 'Z' && state != 'X'
}

// procStat reads the state and process group of pid from /proc/<pid>/stat.
func procStat(pid int) (state byte, pgrp int, ok bool) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, 0, false
	}
	// "pid (comm) state ppid pgrp ...": comm may hold spaces and parens.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, 0, false
	}
	fields := bytes.Fields(data[i+1:])
	if len(fields) < 3 || len(fields[0]) != 1 {
		return 0, 0, false
	}
	pg, err := strconv.Atoi(string(fields[2]))
	if err != nil {
		return 0, 0, false
	}
	return fields[0][0], pg, true
}

// lookPathIn finds file the way execvp would with the given PATH, relative
// entries and names taken relative to dir.
func lookPathIn(file, pathEnv, dir string) (string, error) {
	if filepath.Base(file) != file || file == "." || file == ".." {
		p := file
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if err := executable(p); err != nil {
			return "", fmt.Errorf("%w: %s: %v", ErrCommandNotFound, file, err)
		}
		return p, nil
	}
	for _, entry := range filepath.SplitList(pathEnv) {
		if entry == "" {
			entry = "."
		}
		if !filepath.IsAbs(entry) {
			entry = filepath.Join(dir, entry)
		}
		p := filepath.Join(entry, file)
		if executable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: %s is not in PATH (%s)", ErrCommandNotFound, file, pathEnv)
}

func executable(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", path)
	}
	if info.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s is not executable", path)
	}
	return nil
}
