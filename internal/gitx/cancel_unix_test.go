//go:build linux

package gitx

import (
	"bufio"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCancelStopsChildren: cancelling the context stops git and the
// helper it runs (here a clean filter; hooks never run), the whole process
// group, and the call returns the context error.
func TestCancelStopsChildren(t *testing.T) {
	t.Parallel()
	r, _ := seedRepo(t, map[string]string{"a": "a\n"})
	fifo := filepath.Join(t.TempDir(), "pid")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	runGit(t, r.Dir, "config", "filter.slow.clean", "sh -c 'echo $$ > "+fifo+"; exec sleep 300'")
	writeFile(t, r, ".gitattributes", "a filter=slow\n")
	writeFile(t, r, "a", "changed\n")

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := r.Commit(ctx, "m", []string{"a"})
		done <- err
	}()
	f, err := os.Open(fifo) // blocks until the filter writes its pid
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(f).ReadString('\n')
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Commit after cancel = %v, want context.Canceled", err)
	}
	if _, err := os.Stat(filepath.Join(r.Dir, ".git", "index.lock")); !os.IsNotExist(err) {
		t.Errorf("git left index.lock behind (err %v)", err)
	}
	// The filter's sleep got SIGTERM with the group; wait (bounded) until it
	// is gone or a zombie.
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("filter process %d survived the cancellation", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// alive reports whether pid runs and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z'
}
