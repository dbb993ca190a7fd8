//go:build !unix

package gitx

import "os/exec"

// setProcessGroup keeps exec's default cancellation (kill the process).
func setProcessGroup(*exec.Cmd) {}
