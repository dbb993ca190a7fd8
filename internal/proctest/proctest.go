// Package proctest holds what tests need to run orch as separate
// processes: Run runs one to its end and returns its exit code and
// output; Race starts several at once and checks that the task lock let
// exactly the expected ones through. Only tests import it.
package proctest

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"

	"github.com/orchdev/orch/internal/procstat"
)

// Run runs cmd to its end and returns its exit code — minus the signal's
// number when a signal ended it — and its standard output and error
// together. A command that cannot be run fails t.
func Run(t testing.TB, cmd *exec.Cmd) (int, string) {
	t.Helper()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String()
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return -int(ws.Signal()), out.String()
		}
		return ee.ExitCode(), out.String()
	}
	t.Fatalf("run %s: %v", cmd, err)
	return 0, ""
}

// Race runs n calls of run at once — started together, then also, when
// not nil, in the test's goroutine — and waits for them. Each run returns
// an orch process's exit code and output. It returns how many exited 0
// (moved the task) and every exit code, and fails t for any exit code but
// 0, 3 (the task had moved already) and 5 (the task was busy).
func Race(t testing.TB, n int, run func() (int, string), also func()) (moved int, codes []int) {
	t.Helper()
	codes = make([]int, n)
	outs := make([]string, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			codes[i], outs[i] = run()
		})
	}
	close(start)
	if also != nil {
		also()
	}
	wg.Wait()
	for i, c := range codes {
		switch c {
		case 0:
			moved++
		case 3, 5:
		default:
			t.Errorf("process %d exited %d:\n%s", i, c, outs[i])
		}
	}
	return moved, codes
}

// WithEnv returns the pids of the live processes, this one excepted,
// whose environment holds the entry kv (NAME=value) and, when prefix is
// not "", an entry starting with prefix. Processes inside a pid namespace
// (a bwrap sandbox) appear with their host pids.
func WithEnv(kv, prefix string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		if hasEntry(data, kv, false) && (prefix == "" || hasEntry(data, prefix, true)) && procstat.Live(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// hasEntry reports whether the NUL-separated environment block holds kv,
// or with prefix set an entry starting with kv.
func hasEntry(block []byte, kv string, prefix bool) bool {
	for entry := range bytes.SplitSeq(block, []byte{0}) {
		if string(entry) == kv || (prefix && bytes.HasPrefix(entry, []byte(kv))) {
			return true
		}
	}
	return false
}

// Child is a child process of the test that stays until Exit and is then
// left unreaped: a zombie, until Reap.
type Child struct {
	t     testing.TB
	cmd   *exec.Cmd
	stdin io.WriteCloser
	// Pid is the child's pid.
	Pid int
}

// StartChild starts a child that runs until Exit.
func StartChild(t testing.TB) *Child {
	t.Helper()
	cmd := exec.Command("sh", "-c", "read x; true")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &Child{t: t, cmd: cmd, stdin: stdin, Pid: cmd.Process.Pid}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return c
}

// Exit ends the child and returns once it is a zombie (exited, not yet
// reaped: nobody waits for it until Reap).
func (c *Child) Exit() {
	c.t.Helper()
	c.stdin.Close()
	for i := 0; ; i++ {
		info, ok := procstat.Read(c.Pid)
		if !ok {
			c.t.Fatalf("pid %d: /proc/%d/stat unreadable before it was reaped", c.Pid, c.Pid)
		}
		if info.State == 'Z' {
			return
		}
		if i == 10000 {
			c.t.Fatalf("pid %d never became a zombie (state %c)", c.Pid, info.State)
		}
		_ = exec.Command("true").Run() // let the child run
	}
}

// Reap waits for the exited child, which then is gone.
func (c *Child) Reap() {
	c.t.Helper()
	if err := c.cmd.Wait(); err != nil {
		c.t.Fatal(err)
	}
}
