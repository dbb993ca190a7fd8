// Package ptytest holds what tests need to run a program in a
// pseudo-terminal and read it like a screen: Start runs the command in
// one, Terminal collects what it shows, types keys, and waits for the
// program's exit code; Text strips escape sequences. Only tests import it.
package ptytest

import (
	"errors"
	"os"
	"os/exec"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/orchdev/orch/internal/syncbuf"
)

// Terminal is a program running in a pseudo-terminal.
type Terminal struct {
	// Output is everything the program has shown, escape codes
	// included; it is closed when the terminal has nothing more to read.
	Output syncbuf.Buffer

	t       testing.TB
	pty     *os.File
	read    chan struct{} // closed when the terminal has nothing more to read
	exited  chan struct{}
	waitErr error
}

// Start runs cmd in a rows×cols pseudo-terminal that is its standard input,
// output and error, in a session of its own. When the test ends, a program
// still running is killed with its process group, and the terminal closed.
func Start(t testing.TB, cmd *exec.Cmd, rows, cols uint16) *Terminal {
	t.Helper()
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: rows, Cols: cols})
	if err != nil {
		t.Fatalf("start %s in a pty: %v", cmd.Path, err)
	}
	tm := &Terminal{t: t, pty: f, read: make(chan struct{}), exited: make(chan struct{})}
	go func() {
		defer close(tm.read)
		defer tm.Output.Close()
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			_, _ = tm.Output.Write(buf[:n])
			if err != nil { // EIO once every holder of the terminal is gone
				return
			}
		}
	}()
	go func() {
		tm.waitErr = cmd.Wait()
		close(tm.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-tm.exited:
		default:
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-tm.exited
		}
		f.Close()
	})
	return tm
}

// Type writes keys to the terminal as a person would type them.
func (tm *Terminal) Type(keys string) {
	tm.t.Helper()
	if _, err := tm.pty.Write([]byte(keys)); err != nil {
		tm.t.Fatalf("type %q: %v", keys, err)
	}
}

// Exited is closed when the program has ended.
func (tm *Terminal) Exited() <-chan struct{} { return tm.exited }

// Exit waits up to timeout for the program to end and returns its exit
// code; it fails the test when the program does not end or cannot be
// waited for.
func (tm *Terminal) Exit(timeout time.Duration) int {
	tm.t.Helper()
	select {
	case <-tm.exited:
	case <-time.After(timeout):
		tm.t.Fatalf("the program did not exit within %v; screen:\n%s", timeout, Text(tm.Output.String()))
	}
	var ee *exec.ExitError
	if errors.As(tm.waitErr, &ee) {
		return ee.ExitCode()
	}
	if tm.waitErr != nil {
		tm.t.Fatalf("wait for the program: %v", tm.waitErr)
	}
	return 0
}

// ReadAll waits up to timeout until the terminal has nothing more to read
// and returns everything the program showed.
func (tm *Terminal) ReadAll(timeout time.Duration) string {
	tm.t.Helper()
	select {
	case <-tm.read:
	case <-time.After(timeout):
		tm.t.Fatalf("the terminal was still open after %v; screen:\n%s", timeout, Text(tm.Output.String()))
	}
	return tm.Output.String()
}

var escapes = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[()][A-Za-z0-9]|\r`)

// Text is raw terminal output as text: escape sequences and carriage
// returns removed.
func Text(raw string) string { return escapes.ReplaceAllString(raw, "") }
