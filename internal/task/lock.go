package task

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gofrs/flock"

	"github.com/orchdev/orch/internal/durable"
)

// How often PollLock tries a busy lock: from lockPollMin, doubling up to
// lockPollMax.
const (
	lockPollMin = 5 * time.Millisecond
	lockPollMax = 100 * time.Millisecond
)

// PollLock takes a lock that can only be tried without waiting (flock with
// LOCK_NB): it calls try until try takes the lock (true, nil) or fails
// (false and try's error), wait has elapsed (false, nil; after one try
// when wait is 0) or ctx is done (false and ctx's error). Between two
// tries it sleeps from 5 ms, doubling up to 100 ms, never past the
// deadline. The task lock and the git effect's lock (internal/orchestrator)
// are taken this way.
func PollLock(ctx context.Context, wait time.Duration, try func() (bool, error)) (bool, error) {
	deadline := time.Now().Add(wait)
	poll := lockPollMin
	for {
		ok, err := try()
		if err != nil || ok {
			return ok, err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return false, nil
		}
		timer := time.NewTimer(min(poll, left))
		select {
		case <-ctx.Done():
			timer.Stop()
			return false, ctx.Err()
		case <-timer.C:
		}
		poll = min(2*poll, lockPollMax)
	}
}

// Lock is a held task lock.
type Lock struct {
	fl   *flock.Flock
	path string
	fs   fileSystem
}

// Lock takes the exclusive lock of the task (flock on <task>/.lock, created
// if absent, never deleted), trying until wait has elapsed (once when wait
// is 0) or ctx is done. Once held, "pid <pid>\n" is written into the file so
// that a process that finds the task busy can name the holder. When the
// lock stays busy the error is a *BusyError wrapping ErrBusy.
func (t *Task) Lock(ctx context.Context, wait time.Duration) (*Lock, error) {
	path := filepath.Join(t.Dir, LockFile)
	fl := flock.New(path)
	ok, err := PollLock(ctx, wait, fl.TryLock)
	if err != nil {
		return nil, fmt.Errorf("lock task %s: %w", t.ID, err)
	}
	if !ok {
		return nil, &BusyError{Task: t.ID, PID: readLockPID(path)}
	}
	l := &Lock{fl: fl, path: path, fs: t.fsys()}
	if err := l.writePID(os.Getpid()); err != nil {
		fl.Unlock()
		return nil, fmt.Errorf("lock task %s: %w", t.ID, err)
	}
	return l, nil
}

// writePID records the holder in the lock file (truncating it first). pid
// 0 empties the file.
func (l *Lock) writePID(pid int) error {
	f, err := l.fs.OpenFile(l.path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return fmt.Errorf("write pid into %s: %w", l.path, err)
	}
	if pid > 0 {
		err = durable.WriteAll(f, fmt.Appendf(nil, "pid %d\n", pid))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write pid into %s: %w", l.path, err)
	}
	return nil
}

// Unlock empties the lock file and releases the lock. The file stays.
func (l *Lock) Unlock() error {
	if l == nil || l.fl == nil {
		return nil
	}
	werr := l.writePID(0)
	if err := l.fl.Unlock(); err != nil {
		return fmt.Errorf("unlock %s: %w", l.path, err)
	}
	l.fl = nil
	return werr
}

// readLockPID reads the holder's pid from a lock file; 0 when unknown.
func readLockPID(path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	rest, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "pid ")
	if !ok {
		return 0
	}
	pid, err := strconv.Atoi(rest)
	if err != nil || pid < 0 {
		return 0
	}
	return pid
}
