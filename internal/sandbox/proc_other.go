//go:build !linux && !darwin

package sandbox

import (
	"fmt"
	"runtime"
	"syscall"
)

// On systems other than Linux and macOS (docs/sandbox.md, "Platforms")
// orch builds, but runs no suite: there is no bwrap sandbox, and orch has
// no way here to find every process of a suite and to tell an exited
// first process from a live one without reaping it, so it could neither
// stop a suite wholly nor say when it is gone. Start refuses.

// installHint says what to do when the sandbox is unavailable.
const installHint = `bubblewrap runs on Linux only; orch runs suites on Linux and macOS`

// Supported reports whether the bwrap sandbox can work on this operating
// system at all: not here.
const Supported = false

// bwrapPlatform says why there is no bwrap sandbox here.
func bwrapPlatform() error {
	return &Error{Reason: fmt.Sprintf("%s has no bubblewrap, nor the Linux namespaces it is built on, so orch cannot sandbox a suite here", runtime.GOOS)}
}

// startsSuites refuses: see above.
func startsSuites() error {
	return fmt.Errorf("sandbox: orch runs a project's suites on Linux and macOS only; on %s it cannot find every process of a suite to stop it", runtime.GOOS)
}

// processLimitGap and memoryLimitGap say, in a suite's Limits, why its
// processes or memory are not bounded when no mechanism held.
const (
	processLimitGap = "no cgroups here"
	memoryLimitGap  = ""
)

// The rest is never reached, since Start refuses first.

const keepReadEnd = false

func startInCgroup(*syscall.SysProcAttr, int) bool { return false }

func waitExited(int) {}

func (g *Process) unread() int { return 0 }

func applyRlimits(int, int, int64, bool) (string, string, error) { return "", "", nil }

func listPids() ([]int, bool) { return nil, false }

func hasEnvEntry(int, string) bool { return false }

func signalVerified(pid int, sig syscall.Signal, member func(int) bool) {}
