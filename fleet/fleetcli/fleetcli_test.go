package fleetcli

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/orchdev/orch/fleet"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/fleetlink"
	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/task"
)

// TestLocalRefAgrees keeps orch's test of a fleet task (fleetlink.Known)
// on the ref the fleet writes.
func TestLocalRefAgrees(t *testing.T) {
	if got, want := fleetlink.LocalRef("0007-x"), fleet.LocalRef("0007-x"); got != want {
		t.Fatalf("fleetlink.LocalRef = %q, fleet.LocalRef = %q", got, want)
	}
}

// TestJSONErrors runs orch-fleet's commands on bad input with --json: the
// error is one fleetlink.Failure line with the message, hints and exit
// code orch would show, and the process's exit code is the same.
func TestJSONErrors(t *testing.T) {
	dir := gittest.Init(t)
	if _, _, err := task.InitProject(dir); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	for _, tc := range []struct {
		name string
		args []string
		code exit.Code
		msg  string
	}{
		{"no fleet configured", []string{"status", "--task", "0001-x"}, exit.Usage, "no fleet: set [fleet] address"},
		{"bad task id", []string{"--temporal", "127.0.0.1:1", "status", "--task", "../x"}, exit.Usage, "../x"},
		{"unknown flag", []string{"status", "--tsk", "x"}, exit.Usage, "unknown flag: --tsk"},
		{"missing argument", []string{"answer", "q1"}, exit.Usage, "requires at least 2 arg"},
		{"no such task to submit", []string{"--temporal", "127.0.0.1:1", "submit", "0042-none"}, exit.Usage, "0042-none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var o opts
			var stdout, stderr bytes.Buffer
			root := newRoot(&o, &stdout, &stderr)
			root.SetArgs(append([]string{"--json"}, tc.args...))
			err := root.Execute()
			if err == nil {
				t.Fatalf("no error; stdout %q", stdout.String())
			}
			var buf bytes.Buffer
			printError(&buf, o.json, err)
			line := strings.TrimSuffix(buf.String(), "\n")
			if strings.Contains(line, "\n") {
				t.Fatalf("not one line: %q", line)
			}
			var f fleetlink.Failure
			if err := json.Unmarshal([]byte(line), &f); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			if exit.Code(f.ExitCode) != tc.code || exit.Of(err) != tc.code {
				t.Fatalf("exit_code %d (error's %d), want %d: %s", f.ExitCode, exit.Of(err), tc.code, line)
			}
			if !strings.Contains(f.Error, tc.msg) || strings.HasPrefix(f.Error, exit.Prefix) {
				t.Fatalf("error %q, want one containing %q without the prefix", f.Error, tc.msg)
			}
			if stdout.Len() != 0 {
				t.Fatalf("stdout %q on an error", stdout.String())
			}
		})
	}
}

func TestMain(m *testing.M) { os.Exit(gittest.Main(m)) }
