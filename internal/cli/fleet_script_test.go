package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// fleetStandIn is orch-fleet in the scripts (fleet_routing.txtar): it
// speaks orch-fleet's --json wire format (internal/fleetlink) with answers
// the script wrote, so that the scripts check orch's side of the pipe —
// which commands go to the fleet, the command line sent, the answer shown,
// the error's message and exit code kept — without a Temporal service
// (the fleet module's end-to-end test runs orch against the real one).
//
// Each run appends its command's name to $WORK/fleet/calls, writes its
// arguments, one per line, to $WORK/fleet/COMMAND.args, prints
// $WORK/fleet/COMMAND.out on stdout and COMMAND.err on stderr, and exits
// with the number in COMMAND.code (0 when absent). A command the script
// gave no answer for exits 99.
func fleetStandIn() int {
	dir := filepath.Join(os.Getenv("WORK"), "fleet")
	args := os.Args[1:]
	name := ""
	for i := 0; i < len(args); i++ {
		switch a := args[i]; a {
		case "--temporal", "--namespace", "--remote":
			i++
		case "--json":
		default:
			name = a
		}
		if name != "" {
			break
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 98
	}
	calls, err := os.OpenFile(filepath.Join(dir, "calls"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err == nil {
		fmt.Fprintln(calls, name)
		calls.Close()
	}
	_ = os.WriteFile(filepath.Join(dir, name+".args"), []byte(strings.Join(args, "\n")+"\n"), 0o644)
	out, errOut := filepath.Join(dir, name+".out"), filepath.Join(dir, name+".err")
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
	if data, err := os.ReadFile(errOut); err == nil {
		os.Stderr.Write(data)
	}
	return code
}
