package testrun

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// memoryHelperEnv makes TestOrchMemoryHelper do its work: it is run by
// TestOrchMemoryWhileASuitePrints1GB in a fresh process.
const memoryHelperEnv = "ORCH_TESTRUN_MEMORY_HELPER"

// oneGB is what the suites print.
const oneGB = 1_000_000_000

// TestOrchMemoryWhileASuitePrints1GB runs Run in a fresh process (this test
// binary again) with suites that print 1 GB each — plain output, and a
// go-json suite whose 1 GB has no newline — under the default log cap, and
// reads that process's peak resident memory (VmHWM, which a fresh process
// does not inherit the way ru_maxrss inherits a big parent's). orch must
// stay under 200 MiB.
func TestOrchMemoryWhileASuitePrints1GB(t *testing.T) {
	t.Parallel()
	logDir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestOrchMemoryHelper$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), memoryHelperEnv+"="+logDir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	var before, after int64 = -1, -1
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if _, err := fmt.Sscanf(strings.TrimSpace(sc.Text()), "orch-memory: vmhwm_before_kib=%d vmhwm_after_kib=%d", &before, &after); err == nil {
			break
		}
	}
	if after < 0 {
		t.Fatalf("the helper reported no memory figure:\n%s", out)
	}
	const limitKiB = 200 << 10
	t.Logf("orch's peak RSS (VmHWM): %d KiB before the suites, %d KiB after printing 2 × 1 GB", before, after)
	if after >= limitKiB {
		t.Errorf("orch's peak RSS was %d KiB while suites printed 1 GB, want under %d KiB", after, limitKiB)
	}
	for _, name := range []string{"plain", "gojson"} {
		info, err := os.Stat(filepath.Join(logDir, "logs", name+".log"))
		if err != nil {
			t.Fatal(err)
		}
		if info.Size() > DefaultMaxLogBytes+4096 {
			t.Errorf("log %s is %d bytes, over the default cap", name, info.Size())
		}
	}
	plain, err := os.ReadFile(filepath.Join(logDir, "logs", "plain.log"))
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("[orch: %d bytes of output dropped]", oneGB-DefaultMaxLogBytes); !bytes.Contains(plain, []byte(want)) {
		t.Errorf("plain log lacks %q", want)
	}
}

// TestOrchMemoryHelper is the measured process of
// TestOrchMemoryWhileASuitePrints1GB.
func TestOrchMemoryHelper(t *testing.T) {
	logDir := os.Getenv(memoryHelperEnv)
	if logDir == "" {
		t.Skip("run by TestOrchMemoryWhileASuitePrints1GB")
	}
	before := vmHWM(t)
	dir := t.TempDir()
	opt := Options{Dir: dir, LogDir: filepath.Join(logDir, "logs"), Sandbox: SandboxNone, Env: os.Environ(), Stream: &countingWriter{}}
	print1GB := fmt.Sprintf("head -c %d /dev/zero", oneGB)
	suites := []Suite{
		sh("plain", print1GB),
		{Name: "gojson", Kind: KindTest, Command: []string{"sh", "-c", print1GB}, Format: FormatGoJSON},
	}
	report, _, err := Run(context.Background(), suites, opt)
	if err != nil || report.Status != "completed" {
		t.Fatalf("Run: %+v, %v", report, err)
	}
	fmt.Printf("orch-memory: vmhwm_before_kib=%d vmhwm_after_kib=%d\n", before, vmHWM(t))
}

// vmHWM reads this process's peak resident set size in KiB.
func vmHWM(t *testing.T) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM line %q: %v", line, err)
			}
			return n
		}
	}
	t.Fatal("no VmHWM in /proc/self/status")
	return 0
}
