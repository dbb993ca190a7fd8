package testrun

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// sandboxXDGCache is the cache folder of tools in the sandbox's private
// /tmp.
const sandboxXDGCache = "/tmp/.cache"

// isolationArgs are the bwrap options that isolate a suite, without the
// directory bind. SandboxAvailable probes exactly these.
func isolationArgs() []string {
	args := []string{
		"--ro-bind", "/", "/",
		"--dev", "/dev",
		"--proc", "/proc",
		"--tmpfs", "/tmp",
	}
	// /run holds the sockets of local daemons (docker, dbus, databases):
	// a read-only bind does not stop connect(2) on a Unix socket.
	if info, err := os.Stat("/run"); err == nil && info.IsDir() {
		args = append(args, "--tmpfs", "/run")
	}
	return append(args,
		"--unshare-net",
		"--unshare-pid",
		"--die-with-parent",
		"--new-session",
	)
}

// SandboxAvailable reports whether the bwrap sandbox works here by running
// `true` inside it with the same isolation options Run uses. It returns
// "bwrap", or an error (wrapping ErrNoSandbox) that says why not.
func SandboxAvailable() (string, error) {
	path, err := exec.LookPath("bwrap")
	if err != nil {
		return "", fmt.Errorf("%w: bwrap is not installed (%v); install bubblewrap or run with sandbox \"none\"", ErrNoSandbox, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	args := append(isolationArgs(), "--", "true")
	cmd := exec.CommandContext(ctx, path, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(out.String())
		if msg == "" {
			msg = "no output"
		}
		return "", fmt.Errorf("%w: %s cannot create a sandbox here (%v): %s", ErrNoSandbox, path, err, truncateRunes(msg, 500))
	}
	return "bwrap", nil
}

// sandboxSpec describes one sandboxed run.
type sandboxSpec struct {
	bwrap      string // path of the bwrap binary
	dir        string // absolute directory, bound read-write
	goCacheDir string // GOCACHE, bound read-write (never the user's cache)
	infoFD     int    // fd number bwrap writes {"child-pid": N} to
}

// args returns bwrap's argv (without the program) around the command.
// The environment is not passed on the command line (where every user can
// read it in /proc/*/cmdline): bwrap hands its own, already sanitized,
// environment to the command.
func (s sandboxSpec) args(argv []string) []string {
	args := isolationArgs()
	args = append(args, "--bind", s.dir, s.dir)
	args = append(args, "--bind", s.goCacheDir, s.goCacheDir)
	args = append(args,
		"--chdir", s.dir,
		"--info-fd", strconv.Itoa(s.infoFD),
		"--",
	)
	return append(args, argv...)
}

// sandboxEnv adjusts the environment for the sandbox, keeping whatever the
// suite set explicitly:
//   - GOCACHE: the user's build cache is read-only inside (and must not be
//     writable: a suite could poison later builds outside the sandbox), so
//     go gets Options.GoCacheDir or a fresh cache made for this run and
//     shared by its suites (go test and go vet compile the same packages);
//   - GOPROXY=off: there is no network, and "module lookup disabled" is a
//     clearer failure than a DNS timeout; GOMODCACHE stays readable, so
//     modules already downloaded work;
//   - TMPDIR=/tmp and XDG_CACHE_HOME under it: the only writable places
//     besides the directory.
func sandboxEnv(env []string, suiteEnv map[string]string, goCacheDir string) []string {
	set := map[string]string{
		"GOCACHE":        goCacheDir,
		"GOPROXY":        "off",
		"TMPDIR":         "/tmp",
		"XDG_CACHE_HOME": sandboxXDGCache,
	}
	for name := range suiteEnv {
		delete(set, name)
	}
	return mergeEnv(env, set)
}
