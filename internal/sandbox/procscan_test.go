package sandbox

import (
	"bytes"
	"encoding/binary"
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

// procArgs builds a KERN_PROCARGS2 answer.
func procArgs(argc int32, exe string, pad int, strs ...string) []byte {
	b := binary.NativeEndian.AppendUint32(nil, uint32(argc))
	b = append(b, exe...)
	b = append(b, make([]byte, 1+pad)...)
	for _, s := range strs {
		b = append(append(b, s...), 0)
	}
	return b
}

// TestProcArgsEnvHas: the marker is found in the environment of macOS's
// kern.procargs2 answer, never in the executable's path or the
// arguments, and a cut answer finds nothing.
func TestProcArgsEnvHas(t *testing.T) {
	const kv = "ORCH_SUITE_ab=go"
	tests := []struct {
		name string
		data []byte
		want bool
	}{
		{"in the environment", procArgs(2, "/bin/sh", 3, "sh", "-c", "PATH=/bin", kv, "executable_path=/bin/sh"), true},
		{"last entry unterminated", append(procArgs(1, "/bin/sh", 0, "sh", "A=1"), kv...), true},
		{"as an argument only", procArgs(2, "/bin/sh", 3, "sh", kv, "PATH=/bin"), false},
		{"as the executable", procArgs(0, kv, 1, "PATH=/bin"), false},
		{"a longer entry", procArgs(1, "/bin/sh", 1, "sh", kv+"x", "x"+kv), false},
		{"no arguments", procArgs(0, "/bin/sh", 2, kv), true},
		{"arguments cut", procArgs(5, "/bin/sh", 0, "sh", "-c"), false},
		{"path cut", binary.NativeEndian.AppendUint32(nil, 1), false},
		{"too short", []byte{1, 0}, false},
		{"negative argc", procArgs(-1, "/bin/sh", 0, kv), true},
	}
	for _, tt := range tests {
		if got := procArgsEnvHas(tt.data, kv); got != tt.want {
			t.Errorf("%s: procArgsEnvHas = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// FuzzProcArgsEnvHas: whatever a process's kern.procargs2 holds, a marker
// is found only as a whole NUL-separated entry after the count.
func FuzzProcArgsEnvHas(f *testing.F) {
	f.Add(procArgs(1, "/bin/sh", 2, "sh", "A=1", "ORCH_SUITE_ab=go"), "ORCH_SUITE_ab=go")
	f.Add(procArgs(3, "x", 0, "a"), "a")
	f.Fuzz(func(t *testing.T, data []byte, kv string) {
		if !procArgsEnvHas(data, kv) {
			return
		}
		if len(data) < 4 || !bytes.Contains(append(append([]byte{0}, data[4:]...), 0), append(append([]byte{0}, kv...), 0)) {
			t.Fatalf("procArgsEnvHas(%q, %q) found an entry that is not there", data, kv)
		}
	})
}
