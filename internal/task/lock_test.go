package task

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/gittest"
)

func TestLockGoroutines(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	tk := newTask(t, p, "0001-a")
	l, err := tk.Lock(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := gittest.ReadFile(t, filepath.Join(tk.Dir, LockFile)); got != fmt.Sprintf("pid %d\n", os.Getpid()) {
		t.Fatalf("lock file = %q", got)
	}

	// A second locker in another goroutine finds it busy.
	errc := make(chan error, 1)
	go func() {
		_, err := tk.Lock(context.Background(), 0)
		errc <- err
	}()
	err = <-errc
	var be *BusyError
	if !errors.As(err, &be) || !errors.Is(err, ErrBusy) || be.PID != os.Getpid() {
		t.Fatalf("second Lock = %v", err)
	}
	if want := fmt.Sprintf("task 0001-a is busy: locked by pid %d; retry or pass --wait", os.Getpid()); err.Error() != want {
		t.Fatalf("message %q", err.Error())
	}

	// A waiting locker gets it once the first unlocks.
	got := make(chan *Lock, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		l2, err := tk.Lock(context.Background(), time.Minute)
		if err != nil {
			t.Error(err)
		}
		got <- l2
	}()
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	l2 := <-got
	if l2 == nil {
		t.Fatal("waiting locker did not get the lock")
	}
	if err := l2.Unlock(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(tk.Dir, LockFile)); err != nil {
		t.Fatalf("lock file removed: %v", err)
	}
	if err := l2.Unlock(); err != nil {
		t.Fatalf("second Unlock: %v", err)
	}
}

func TestLockContextCancel(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	tk := newTask(t, p, "0001-a")
	lock(t, tk)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := tk.Lock(ctx, time.Hour)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Lock with cancelled context = %v", err)
	}
}

// startChild re-executes the test binary in a child mode and waits for its
// first line of output.
func startChild(t testing.TB, mode string, p *Project, id, wantLine string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envChild+"="+mode, envProject+"="+p.Root, envTask+"="+id)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != wantLine {
		t.Fatalf("child said %q, %v", line, err)
	}
	return cmd
}

func TestLockProcesses(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	tk := newTask(t, p, "0001-a")
	child := startChild(t, childHoldLock, p, tk.ID, "locked")

	_, err := tk.Lock(context.Background(), 0)
	var be *BusyError
	if !errors.As(err, &be) || be.PID != child.Process.Pid {
		t.Fatalf("Lock while child holds it = %v (child pid %d)", err, child.Process.Pid)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("locked by pid %d", child.Process.Pid)) {
		t.Fatalf("message %q", err)
	}

	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	l, err := tk.Lock(context.Background(), 10*time.Second)
	if err != nil {
		t.Fatalf("Lock after the holder died: %v", err)
	}
	l.Unlock()
}
