package sandbox

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
)

func TestParseStat(t *testing.T) {
	tests := []struct {
		name string
		line string
		want procInfo
		ok   bool
	}{
		{"plain", "123 (sleep) S 1 120 110 0 -1", procInfo{state: 'S', pgrp: 120, sid: 110}, true},
		{"comm with spaces and parens", "7 (a) Z 9 9 (b) x) R 5 44 33 0", procInfo{state: 'R', pgrp: 44, sid: 33}, true},
		{"zombie", "8 (sh) Z 1 8 8 0", procInfo{state: 'Z', pgrp: 8, sid: 8}, true},
		{"no paren", "8 sh S 1 8 8", procInfo{}, false},
		{"too short", "8 (sh) S 1 8", procInfo{}, false},
		{"bad number", "8 (sh) S 1 x 8", procInfo{}, false},
		{"long state", "8 (sh) SS 1 8 8", procInfo{}, false},
	}
	for _, tt := range tests {
		got, ok := parseStat([]byte(tt.line))
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: parseStat(%q) = %+v, %v; want %+v, %v", tt.name, tt.line, got, ok, tt.want, tt.ok)
		}
	}
}

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
	if !processLive(pid) || !hasEnvEntry(pid, "ORCH_TESTRUN_PROBE=1") {
		t.Fatalf("pid %d not seen as live with its marker", pid)
	}
	// Not a member: the signal is not sent.
	signalVerified(pid, syscall.SIGKILL, func(int) bool { return false })
	if !processLive(pid) {
		t.Fatal("signalVerified killed a process that is not a member")
	}
	signalVerified(pid, syscall.SIGKILL, func(p int) bool { return hasEnvEntry(p, "ORCH_TESTRUN_PROBE=1") })
	if err := cmd.Wait(); err == nil {
		t.Error("sleep was not killed")
	}
	if processLive(pid) {
		t.Errorf("pid %d still live after it was reaped", pid)
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte("123 (sleep) S 1 120 110 0 -1"))
	f.Add([]byte("7 (a) b) R 5 44 33"))
	f.Fuzz(func(t *testing.T, data []byte) {
		info, ok := parseStat(data)
		if !ok && info != (procInfo{}) {
			t.Fatalf("failed parse returned %+v", info)
		}
	})
}

func FuzzEnvBlockHas(f *testing.F) {
	f.Add([]byte("A=1\x00B=2\x00"), "B=2")
	f.Fuzz(func(t *testing.T, block []byte, kv string) {
		got := envBlockHas(block, kv)
		if got && len(kv) > len(block) {
			t.Fatalf("found %q in a shorter block", kv)
		}
	})
}
