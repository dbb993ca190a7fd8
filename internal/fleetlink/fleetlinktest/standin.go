// Package fleetlinktest is orch-fleet's stand-in for the tests of orch's
// side of the pipe (internal/fleetlink): which commands go to the fleet,
// the command line sent, the answer shown, the error's message and exit
// code kept. It speaks orch-fleet's --json wire format with answers a
// test wrote, without a Temporal service; the fleet module's end-to-end
// test runs orch against the real orch-fleet.
package fleetlinktest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// StandIn runs as orch-fleet with the process's arguments, answering from
// the folder dir, and returns the exit code. Each run appends its
// command's name (the first word after the global flags) to dir/calls,
// writes its arguments, one per line, to dir/COMMAND.args, prints
// dir/COMMAND.out on stdout and COMMAND.err on stderr, and exits with the
// number in COMMAND.code (0 when absent). A command given no answer (no
// .out, no .code) exits 99 saying so.
func StandIn(dir string) int {
	args := os.Args[1:]
	name := ""
	for i := 0; i < len(args) && name == ""; i++ {
		switch a := args[i]; a {
		case "--temporal", "--namespace", "--remote":
			i++
		case "--json":
		default:
			name = a
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 98
	}
	if calls, err := os.OpenFile(filepath.Join(dir, "calls"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err == nil {
		fmt.Fprintln(calls, name)
		calls.Close()
	}
	_ = os.WriteFile(filepath.Join(dir, name+".args"), []byte(strings.Join(args, "\n")+"\n"), 0o644)
	out := filepath.Join(dir, name+".out")
	code := 0
	if c, err := os.ReadFile(filepath.Join(dir, name+".code")); err == nil {
		code, _ = strconv.Atoi(strings.TrimSpace(string(c)))
	} else if _, err := os.Stat(out); err != nil {
		fmt.Fprintf(os.Stderr, "orch-fleet stand-in: no answer for %q\n", name)
		return 99
	}
	if data, err := os.ReadFile(out); err == nil {
		os.Stdout.Write(data)
	}
	if data, err := os.ReadFile(filepath.Join(dir, name+".err")); err == nil {
		os.Stderr.Write(data)
	}
	return code
}
