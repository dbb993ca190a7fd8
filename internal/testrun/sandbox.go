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

// installHint says what to do when the sandbox is unavailable.
const installHint = `install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap) or opt out of the sandbox with sandbox = "none" under [test] in .orch/config.toml (or --sandbox none); an opt-out is recorded in the report as sandbox "none"`

// isolationArgs are the bwrap options that isolate a suite, without the
// binds of its directory, caches and home. SandboxAvailable probes exactly
// these.
func isolationArgs(tmpfsSize int64) []string {
	args := []string{
		"--ro-bind", "/", "/",
		"--dev", "/dev",
		"--proc", "/proc",
	}
	args = append(args, tmpfsArgs("/tmp", tmpfsSize)...)
	// /run holds the sockets of local daemons (docker, dbus, databases):
	// a read-only bind does not stop connect(2) on a Unix socket.
	if info, err := os.Stat("/run"); err == nil && info.IsDir() {
		args = append(args, tmpfsArgs("/run", tmpfsSize)...)
	}
	args = append(args,
		"--unshare-net",
		"--unshare-pid",
		"--die-with-parent",
		"--new-session",
	)
	if os.Geteuid() != 0 {
		// A user namespace of its own makes RLIMIT_NPROC count the
		// suite's processes only (bwrap creates one anyway unless it is
		// setuid).
		args = append(args, "--unshare-user-try")
	}
	return args
}

// tmpfsArgs mounts an empty tmpfs on dest, of at most size bytes when size
// is positive.
func tmpfsArgs(dest string, size int64) []string {
	if size > 0 {
		return []string{"--size", strconv.FormatInt(size, 10), "--tmpfs", dest}
	}
	return []string{"--tmpfs", dest}
}

// SandboxAvailable reports whether the bwrap sandbox works here by running
// `true` inside it with the same isolation options Run uses. It returns
// "bwrap", or an error (wrapping ErrNoSandbox) that says why not and what
// to do.
func SandboxAvailable() (string, error) {
	path, err := exec.LookPath("bwrap")
	if err != nil {
		return "", &SandboxError{Reason: fmt.Sprintf("bwrap is not installed (%v)", err)}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	args := append(isolationArgs(0), "--", "true")
	cmd := exec.CommandContext(ctx, path, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(out.String())
		if msg == "" {
			msg = "no output"
		}
		return "", &SandboxError{Reason: fmt.Sprintf("%s cannot create a sandbox here (%v): %s (user namespaces may be disabled for unprivileged users, or a container forbids them)",
			path, err, truncateRunes(msg, 500))}
	}
	return "bwrap", nil
}

// CheckSandbox reports whether Run can use the sandbox mode here: nil for
// SandboxNone or a working bwrap, an error wrapping ErrNoSandbox (with how
// to install bubblewrap or opt out) when bwrap is needed but unavailable,
// and ErrInvalidOptions for an unknown mode. Callers use it to refuse
// before they prepare anything.
func CheckSandbox(mode string) error {
	switch mode {
	case SandboxNone:
		return nil
	case "", SandboxAuto, SandboxBwrap:
		_, err := SandboxAvailable()
		return err
	}
	return fmt.Errorf("%w: sandbox %q is not auto, bwrap or none", ErrInvalidOptions, mode)
}

// bwrapHasSize reports whether this bwrap knows --size (0.7 and later).
func bwrapHasSize(bwrap string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, bwrap, "--help").CombinedOutput()
	return bytes.Contains(out, []byte("--size"))
}

// sandboxSpec describes the sandbox of one Run.
type sandboxSpec struct {
	bwrap      string   // path of the bwrap binary
	dir        string   // absolute directory, bound read-write
	goCacheDir string   // GOCACHE, bound read-write (never the user's cache)
	tmpfsSize  int64    // bound of each tmpfs (0: bwrap cannot set one)
	homes      []string // home folders hidden under an empty tmpfs
	keep       []string // folders under a home bound back read-only (toolchains)
	gitDirs    []string // git files and folders bound read-only over everything
}

// args returns bwrap's argv (without the program) around the command. The
// order matters: later mounts cover earlier ones, so the homes are hidden
// first, then the toolchains in them are bound back, then the writable
// directory and cache, and last the git directories read-only (a worktree's
// .git link lies inside the writable directory).
//
// The environment is not passed on the command line (where every user can
// read it in /proc/*/cmdline): bwrap hands its own, already sanitized,
// environment to the command.
func (s sandboxSpec) args(argv []string, infoFD, blockFD int) []string {
	args := isolationArgs(s.tmpfsSize)
	for _, h := range s.homes {
		args = append(args, tmpfsArgs(h, s.tmpfsSize)...)
	}
	for _, k := range s.keep {
		args = append(args, "--ro-bind", k, k)
	}
	args = append(args, "--bind", s.dir, s.dir)
	args = append(args, "--bind", s.goCacheDir, s.goCacheDir)
	for _, g := range s.gitDirs {
		args = append(args, "--ro-bind", g, g)
	}
	args = append(args,
		"--chdir", s.dir,
		"--info-fd", strconv.Itoa(infoFD),
		"--block-fd", strconv.Itoa(blockFD),
		"--",
	)
	return append(args, argv...)
}

// describe is the RunInfo note about the sandbox.
func (s sandboxSpec) describe(cache string) string {
	var b strings.Builder
	b.WriteString("bwrap sandbox: read-only root, writable " + s.dir + " and private /tmp, /run hidden, no network, own pid namespace")
	if len(s.homes) > 0 {
		b.WriteString("; home hidden under an empty tmpfs: " + strings.Join(s.homes, ", "))
		if len(s.keep) > 0 {
			b.WriteString(" (toolchains kept read-only: " + strings.Join(s.keep, ", ") + ")")
		}
	}
	if len(s.gitDirs) > 0 {
		b.WriteString("; git directories read-only: " + strings.Join(s.gitDirs, ", "))
	}
	if s.tmpfsSize > 0 {
		fmt.Fprintf(&b, "; each tmpfs at most %s", formatBytes(s.tmpfsSize))
	}
	b.WriteString("; " + cache + "; GOPROXY=off")
	return b.String()
}

// sandboxEnv adjusts the environment for the sandbox, keeping whatever the
// suite set explicitly:
//   - GOCACHE: the user's build cache is hidden or read-only inside (and
//     must not be writable: a suite could poison later builds outside the
//     sandbox), so go gets Options.GoCacheDir or a fresh cache made for this
//     run and shared by its suites (go test and go vet compile the same
//     packages);
//   - GOPROXY=off: there is no network, and "module lookup disabled" is a
//     clearer failure than a DNS timeout; GOMODCACHE stays readable, so
//     modules already downloaded work;
//   - TMPDIR=/tmp and XDG_CACHE_HOME under it: writable places besides the
//     directory and the (empty, throw-away) home.
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

// formatBytes renders n in the largest binary unit that divides it.
func formatBytes(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + " " + u.name
		}
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
