package proctest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"sync/atomic"
	"testing"
	"time"
)

func TestRun(t *testing.T) {
	for _, tc := range []struct {
		script string
		code   int
		out    string
	}{
		{"echo out; echo err >&2", 0, "out\nerr\n"},
		{"echo out; exit 4", 4, "out\n"},
		{"kill -9 $$", -9, ""},
	} {
		code, out := Run(t, exec.Command("sh", "-c", tc.script))
		if code != tc.code || out != tc.out {
			t.Errorf("%s: %d %q, want %d %q", tc.script, code, out, tc.code, tc.out)
		}
	}
}

// errorsTB records the errors Race reports.
type errorsTB struct {
	testing.TB
	errs atomic.Int32
}

func (e *errorsTB) Helper()                   {}
func (e *errorsTB) Errorf(string, ...any)     { e.errs.Add(1) }
func (e *errorsTB) Fatalf(f string, a ...any) { panic(fmt.Sprintf(f, a...)) }

// Race counts the movers and reports every exit code but 0, 3 and 5.
func TestRace(t *testing.T) {
	var n atomic.Int32
	codes := []int{0, 3, 5, 0, 1}
	rec := &errorsTB{TB: t}
	also := false
	moved, got := Race(rec, len(codes), func() (int, string) { return codes[n.Add(1)-1], "" }, func() { also = true })
	if moved != 2 || len(got) != len(codes) || rec.errs.Load() != 1 || !also {
		t.Errorf("moved %d codes %v errors %d also %v, want 2 movers of 5, one error (exit 1), also run", moved, got, rec.errs.Load(), also)
	}
}

// WithEnv finds a process by an entry of its environment, and by a prefix
// of another only when it has one.
func TestWithEnv(t *testing.T) {
	kv := fmt.Sprintf("PROCTEST_PROBE=%d", os.Getpid())
	cmd := exec.Command("sh", "-c", "echo ready; read x")
	cmd.Env = append(os.Environ(), kv, "PROCTEST_SUITE_1=x")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); _ = cmd.Wait() }()
	if line, err := bufio.NewReader(stdout).ReadString('\n'); line != "ready\n" {
		t.Fatalf("the shell said %q (%v)", line, err)
	}
	pid := cmd.Process.Pid
	// Its environment can lag behind its start for a moment (exec).
	var got []int
	for range 500 {
		if got = WithEnv(kv, ""); len(got) > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(got) != 1 || got[0] != pid {
		t.Fatalf("WithEnv(%s) = %v, want [%d]", kv, got, pid)
	}
	if got := WithEnv(kv, "PROCTEST_SUITE_"); len(got) != 1 {
		t.Errorf("with the prefix: %v", got)
	}
	if got := WithEnv(kv, "PROCTEST_OTHER_"); len(got) != 0 {
		t.Errorf("with a prefix it lacks: %v", got)
	}
}
