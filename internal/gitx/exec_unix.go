//go:build unix

package gitx

import (
	"os/exec"
	"syscall"
)

// setProcessGroup runs git in its own process group and, on cancellation,
// sends SIGTERM to the whole group (git and any hook or helper it started),
// so git can remove its lock files before exiting.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	}
}
