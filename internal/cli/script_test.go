package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// sharedCache is an XDG cache folder shared by every script of this test
// binary, so sandboxed Go builds compile the standard library once.
var sharedCache = filepath.Join(os.TempDir(), "orch-script-cache")

// goEnv returns `go env KEY`.
func goEnv(key string) string {
	out, err := exec.Command("go", "env", key).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func TestMain(m *testing.M) {
	if os.Getenv(reexecEnv) != "" {
		os.Exit(reexecMain())
	}
	testscript.Main(m, map[string]func(){
		"orch": func() { os.Exit(Main()) },
		// orch-fleet's stand-in (fleet_script_test.go).
		"orch-fleet": func() { os.Exit(fleetStandIn()) },
	})
}

// TestScripts runs the end-to-end CLI scripts in testdata/script.
// TESTSCRIPT_UPDATE=1 refreshes expected output embedded in the scripts.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		RequireExplicitExec: true,
		UpdateScripts:       os.Getenv("TESTSCRIPT_UPDATE") != "",
		Setup: func(e *testscript.Env) error {
			e.Setenv("GIT_AUTHOR_NAME", "orch test")
			e.Setenv("GIT_AUTHOR_EMAIL", "test@orch.invalid")
			e.Setenv("GIT_COMMITTER_NAME", "orch test")
			e.Setenv("GIT_COMMITTER_EMAIL", "test@orch.invalid")
			e.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			e.Setenv("HOME", e.WorkDir)
			e.Setenv("TZ", "UTC")
			// orch in scripts is this (maybe race-instrumented) test
			// binary: skip the race runtime's one-second sleep at exit.
			e.Setenv("GORACE", "atexit_sleep_ms=0")
			// Go builds inside scripts share the test process's caches and
			// never reach the network.
			for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
				e.Setenv(k, goEnv(k))
			}
			e.Setenv("GOPROXY", "off")
			e.Setenv("GOFLAGS", "-mod=mod")
			e.Setenv("GOTOOLCHAIN", "local")
			e.Setenv("XDG_CACHE_HOME", sharedCache)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"phase":  cmdPhase,
			"kinds":  cmdKinds,
			"sparse": cmdSparse,
			"exits":  cmdExits,
			// Terminal safety (termsafe_test.go).
			"hostile":  cmdHostile,
			"noescape": cmdNoEscape,
		},
	})
}

// phase TASK WANT: state.json of TASK says phase WANT.
func cmdPhase(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: phase TASK WANT")
	}
	data, err := os.ReadFile(ts.MkAbs(filepath.Join(".orch", "tasks", args[0], "state.json")))
	ts.Check(err)
	var st struct {
		Phase string `json:"phase"`
	}
	ts.Check(json.Unmarshal(data, &st))
	if (st.Phase == args[1]) == neg {
		ts.Fatalf("task %s is in phase %q (want %s%q)", args[0], st.Phase, map[bool]string{true: "not ", false: ""}[neg], args[1])
	}
}

// kinds TASK K1 K2 ...: the transcript's event kinds are exactly K1 K2 ...
func cmdKinds(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 {
		ts.Fatalf("usage: kinds TASK KIND...")
	}
	data, err := os.ReadFile(ts.MkAbs(filepath.Join(".orch", "tasks", args[0], "transcript.jsonl")))
	ts.Check(err)
	var got []string
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var ev struct {
			Kind string `json:"kind"`
		}
		ts.Check(json.Unmarshal(line, &ev))
		got = append(got, ev.Kind)
	}
	if (strings.Join(got, " ") == strings.Join(args[1:], " ")) == neg {
		ts.Fatalf("transcript kinds: %s", strings.Join(got, " "))
	}
}

// exits CODE PROG ARGS...: run PROG (like exec) and require exit code CODE
// (README, "Exit codes"); stdout and stderr are kept for the next checks.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE PROG ARGS...")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("%s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", strings.Join(args[1:], " "), got, want)
	}
}

// sparse FILE SIZE: create a sparse file of SIZE bytes (e.g. 600M).
func cmdSparse(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: sparse FILE SIZE")
	}
	size := int64(0)
	num, unit := args[1], int64(1)
	switch {
	case strings.HasSuffix(num, "M"):
		num, unit = strings.TrimSuffix(num, "M"), 1<<20
	case strings.HasSuffix(num, "G"):
		num, unit = strings.TrimSuffix(num, "G"), 1<<30
	}
	for _, c := range num {
		if c < '0' || c > '9' {
			ts.Fatalf("bad size %q", args[1])
		}
		size = size*10 + int64(c-'0')
	}
	path := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(filepath.Dir(path), 0o755))
	f, err := os.Create(path)
	ts.Check(err)
	ts.Check(f.Truncate(size * unit))
	ts.Check(f.Close())
}
