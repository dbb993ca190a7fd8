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

// TestPollLock drives PollLock with a try that is busy a given number of
// times: it stops at the first success or error, tries once with no wait,
// gives up at the deadline after backing off (not spinning), and returns
// the context's error when it is cancelled while waiting.
func TestPollLock(t *testing.T) {
	t.Parallel()
	failed := errors.New("flock: bad file descriptor")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name     string
		ctx      context.Context
		wait     time.Duration
		busy     int   // tries that find the lock busy before the outcome
		tryErr   error // the outcome of the last try: this error, or the lock taken
		want     bool
		wantErr  error
		minTries int
		maxTries int
		minWait  time.Duration
	}{
		{name: "free", ctx: context.Background(), wait: time.Hour, want: true, minTries: 1, maxTries: 1},
		{name: "free, no wait", ctx: context.Background(), want: true, minTries: 1, maxTries: 1},
		{name: "busy, no wait", ctx: context.Background(), busy: 1 << 30, minTries: 1, maxTries: 1},
		{name: "freed on the third try", ctx: context.Background(), wait: time.Hour, busy: 2, want: true, minTries: 3, maxTries: 3},
		{name: "try fails", ctx: context.Background(), wait: time.Hour, busy: 1, tryErr: failed, wantErr: failed, minTries: 2, maxTries: 2},
		// 5, 10, 20, 40, 80, 100, 45 ms: 8 tries when nothing is late.
		{name: "busy until the deadline", ctx: context.Background(), wait: 300 * time.Millisecond, busy: 1 << 30, minTries: 2, maxTries: 8, minWait: 300 * time.Millisecond},
		{name: "cancelled", ctx: cancelled, wait: time.Hour, busy: 1 << 30, wantErr: context.Canceled, minTries: 1, maxTries: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tries := 0
			try := func() (bool, error) {
				tries++
				if tries <= tc.busy {
					return false, nil
				}
				return tc.tryErr == nil, tc.tryErr
			}
			start := time.Now()
			got, err := PollLock(tc.ctx, tc.wait, try)
			elapsed := time.Since(start)
			if got != tc.want || !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Errorf("PollLock = %v, %v; want %v, %v", got, err, tc.want, tc.wantErr)
			}
			if tries < tc.minTries || tries > tc.maxTries {
				t.Errorf("%d tries, want %d to %d", tries, tc.minTries, tc.maxTries)
			}
			if elapsed < tc.minWait {
				t.Errorf("gave up after %v, before the wait of %v", elapsed, tc.wait)
			}
		})
	}
}
