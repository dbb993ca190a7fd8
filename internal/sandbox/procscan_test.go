package sandbox

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/procstat"
)

func TestEnvBlockHas(t *testing.T) {
	block := []byte("A=1\x00ORCH_SUITE_ab=x\x00B=ORCH_SUITE_cd=y\x00")
	tests := []struct {
		kv   string
		want bool
	}{
		{"A=1", true},
		{"ORCH_SUITE_ab=x", true},
		{"ORCH_SUITE_cd=y", false}, // only inside another value
		{"ORCH_SUITE_ab=", false},
		{"A=", false},
	}
	for _, tt := range tests {
		if got := envBlockHas(block, tt.kv); got != tt.want {
			t.Errorf("envBlockHas(%q) = %v, want %v", tt.kv, got, tt.want)
		}
	}
	if !envBlockHas([]byte("X=1"), "X=1") {
		t.Error("an entry without a trailing NUL is not found")
	}
}

func TestProcessLiveAndSignalVerified(t *testing.T) {
	cmd := exec.Command("sleep", "300")
	cmd.Env = append(os.Environ(), "ORCH_TESTRUN_PROBE=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	// Start returns once execve closed the child's close-on-exec pipe,
	// which the kernel does before it lays out the new environment: poll
	// until /proc shows it.
	marked := false
	for i := 0; i < 500 && !marked; i++ {
		if marked = hasEnvEntry(pid, "ORCH_TESTRUN_PROBE=1"); !marked {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if !procstat.Live(pid) || !marked {
		t.Fatalf("pid %d not seen as live with its marker", pid)
	}
	// Not a member: the signal is not sent.
	signalVerified(pid, syscall.SIGKILL, func(int) bool { return false })
	if !procstat.Live(pid) {
		t.Fatal("signalVerified killed a process that is not a member")
	}
	signalVerified(pid, syscall.SIGKILL, func(p int) bool { return hasEnvEntry(p, "ORCH_TESTRUN_PROBE=1") })
	if err := cmd.Wait(); err == nil {
		t.Error("sleep was not killed")
	}
	if procstat.Live(pid) {
		t.Errorf("pid %d still live after it was reaped", pid)
	}
}

func FuzzEnvBlockHas(f *testing.F) {
	f.Add([]byte("A=1\x00B=2\x00"), "B=2")
	f.Add([]byte("A=1\x00B=2"), "B=2")
	f.Add([]byte("A=1\x00B=2\x00"), "A")
	f.Add([]byte("XA=1\x00"), "A=1")
	f.Fuzz(func(t *testing.T, block []byte, kv string) {
		got := envBlockHas(block, kv)
		if got && len(kv) > len(block) {
			t.Fatalf("found %q in a shorter block", kv)
		}
		// The block is NUL-terminated entries (environ(7)); the last
		// one may lack its NUL.
		entries := strings.Split(string(block), "\x00")
		if entries[len(entries)-1] == "" {
			entries = entries[:len(entries)-1]
		}
		if want := slices.Contains(entries, kv); got != want {
			t.Fatalf("envBlockHas(%q, %q) = %v, the entries %q say %v", block, kv, got, entries, want)
		}
	})
}
