package sandbox

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/orchdev/orch/internal/clip"
)

// xdgCache is the cache folder of tools in the sandbox's private
// /tmp.
const xdgCache = "/tmp/.cache"

// isolationArgs are the bwrap options that isolate a suite, without the
// binds of its directory, caches and home. Available probes exactly
// these.
//
// With scratch (the run's bounded tmpfs, layers.go) /tmp, /dev/shm and
// /run are folders of it, so what a suite writes there counts against
// the run's bound; without it (the probe, a warm-up) they are tmpfs
// mounts of at most tmpfsSize.
func isolationArgs(h host, tmpfsSize int64, scratch string) []string {
	args := systemArgs(h)
	if h.weak {
		// orch's first sandbox showed the whole machine read-only.
		args = []string{"--ro-bind", "/", "/"}
	}
	args = append(args,
		"--dev", "/dev",
		"--proc", "/proc",
	)
	if scratch != "" {
		args = append(args, "--bind", filepath.Join(scratch, "tmp"), "/tmp", "--bind", filepath.Join(scratch, "shm"), "/dev/shm")
	} else {
		args = append(args, tmpfsArgs("/tmp", tmpfsSize, h.tmpfsPerms(true))...)
	}
	// /run holds the sockets of local daemons (docker, dbus, databases):
	// a read-only bind does not stop connect(2) on a Unix socket.
	if info, err := os.Stat("/run"); err == nil && info.IsDir() {
		if scratch != "" {
			args = append(args, "--bind", filepath.Join(scratch, "run"), "/run")
		} else {
			args = append(args, tmpfsArgs("/run", tmpfsSize, h.tmpfsPerms(false))...)
		}
	}
	args = append(args,
		"--unshare-net",
		"--unshare-pid",
		"--die-with-parent",
		"--new-session",
	)
	return append(args, h.identityArgs()...)
}

// tmpfsArgs mounts an empty tmpfs on dest, of at most size bytes when size
// is positive, with the given mode (octal; empty: bwrap's default).
func tmpfsArgs(dest string, size int64, perms string) []string {
	var args []string
	if perms != "" {
		args = append(args, "--perms", perms)
	}
	if size > 0 {
		args = append(args, "--size", strconv.FormatInt(size, 10))
	}
	return append(args, "--tmpfs", dest)
}

// Available reports whether the bwrap sandbox works here by running
// `true` inside it with the same isolation options (and, as root, the same
// drop to SuiteUID) a suite gets. It returns "bwrap", or an error
// (wrapping ErrNoSandbox) that says why not and what to do.
func Available() (string, error) {
	h, err := currentHost()
	if err != nil {
		return "", err
	}
	if err := probe(h); err != nil {
		return "", err
	}
	return "bwrap", nil
}

// probe runs `true` in a sandbox of h.
func probe(h host) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	args := append(isolationArgs(h, 0, ""), "--")
	args = append(append(args, h.dropArgs()...), "true")
	cmd := exec.CommandContext(ctx, h.bwrap, args...)
	cmd.Dir = "/"
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(out.String())
		if msg == "" {
			msg = "no output"
		}
		return &Error{Reason: fmt.Sprintf("%s cannot create a sandbox here (%v): %s (user namespaces may be disabled for unprivileged users, or a container forbids them)",
			h.bwrap, err, clip.Runes(msg, 500))}
	}
	return nil
}

// Check reports whether the sandbox mode can be used here: nil for None
// or a working bwrap, an error wrapping ErrNoSandbox (with how to install
// bubblewrap or opt out) when bwrap is needed but unavailable, and
// ErrInvalidMode for an unknown mode. Callers use it to refuse
// before they prepare anything.
func Check(mode string) error {
	switch mode {
	case None:
		return nil
	case "", Auto, Bwrap:
		_, err := Available()
		return err
	}
	return fmt.Errorf("%w: sandbox %q is not auto, bwrap or none", ErrInvalidMode, mode)
}

// Config describes the sandbox of one run. Every path is absolute.
type Config struct {
	// Dir is the directory the suites run in (a worktree orch made), bound
	// read-write.
	Dir string
	// Env is the suites' environment (already filtered): HOME, PATH and
	// the toolchain variables in it decide which homes are hidden and
	// which toolchain folders in them are bound back read-only.
	Env []string
	// GoCacheDir, when set, is bound read-write and used as GOCACHE, so
	// sandboxed go builds are cached between runs. It must never be the
	// user's own build cache: a suite can write into it. Empty means a
	// fresh cache made by New and removed by Close.
	GoCacheDir string
	// MaxMemory bounds each tmpfs of the sandbox (0: unbounded).
	MaxMemory int64
	// ReadOnly are further files or folders bound read-only at their own
	// path, over the hidden homes (dependency caches a suite reads, such as
	// ~/.m2/repository). Each must exist.
	ReadOnly []string
	// Mounts are further files or folders bound read-only at another path
	// (a dependency folder of the user's working tree, such as
	// node_modules, at the same place in Dir). Each source must exist;
	// each target must be absolute.
	Mounts []Mount
	// Writable are further folders bound read-write (caches orch made for
	// the suites). Each must exist, and must never be a cache the user's
	// own builds read: a suite can write into it.
	Writable []string
	// MaxWrite bounds what the suites of the run write, together
	// (0: DefaultMaxWrite).
	MaxWrite int64
	// GoWarm are commands (GoWarmup of the run's `go test` suites) run in
	// Dir before the suites to fill the go build cache, which the suites
	// themselves only read.
	GoWarm []Warmup
	// SetEnv are variables the sandbox sets for every suite (a cache
	// location, say), unless the suite's own configuration sets them.
	SetEnv map[string]string
	// Hide are folders never shown, not even when a toolchain on PATH lies
	// in them (the user's working tree, with its untracked files and
	// .orch/). Only Mounts show parts of them, at another path.
	Hide []string
}

// Mount shows Source at Target: read-only, or with Layer through a
// writable layer of the run (a dependency folder into which tools write
// their caches: node_modules/.vite-temp), whose writes never reach
// Source.
type Mount struct {
	Source, Target string
	Layer          bool
}

// Sandbox is the bwrap sandbox of one run, shared by its suites. Make it
// with New, give it to Start through Launch.Sandbox, and Close it when the
// run ends.
type Sandbox struct {
	host       host     // bwrap, its features, and whether orch is root
	dir        string   // absolute directory, bound read-write
	goCacheDir string   // GOCACHE, bound read-write (never the user's cache)
	tmpfsSize  int64    // bound of each tmpfs (0: bwrap cannot set one)
	homes      []string // home folders hidden under an empty tmpfs
	keep       []string // folders under a home bound back read-only (toolchains)
	readOnly   []string // Config.ReadOnly
	mounts     []Mount  // Config.Mounts, sources resolved
	writable   []string // Config.Writable
	gitDirs    []string // git files and folders bound read-only over everything
	// gitConfigs show a copy of each git directory's config without its
	// remotes and credentials (gitConfigCopies).
	gitConfigs []Mount
	setEnv     map[string]string
	describe   string   // the note about it
	tempDirs   []string // removed by Close
	handedOver bool     // dir belongs to SuiteUID until Close
	// holder keeps the run's write layers (layers.go); scratch is their
	// tmpfs.
	holder  *holder
	scratch string
}

// New prepares the sandbox: it checks that bwrap works, makes the go build
// cache, finds the homes to hide, the toolchains to keep and the git
// directories to protect. The notes say what the sandbox holds (for the
// run's report); the error wraps ErrNoSandbox when bwrap cannot be used.
func New(cfg Config) (*Sandbox, []string, error) {
	if _, err := Available(); err != nil {
		return nil, nil, err
	}
	h, err := currentHost()
	if err != nil {
		return nil, nil, err
	}
	if !filepath.IsAbs(cfg.Dir) {
		return nil, nil, fmt.Errorf("sandbox: directory %q is not absolute", cfg.Dir)
	}
	s := &Sandbox{host: h, dir: filepath.Clean(cfg.Dir), setEnv: maps.Clone(cfg.SetEnv)}
	if s.readOnly, err = bindPaths(cfg.ReadOnly, "read-only"); err != nil {
		return nil, nil, err
	}
	if s.writable, err = bindPaths(cfg.Writable, "writable"); err != nil {
		return nil, nil, err
	}
	for _, m := range cfg.Mounts {
		src, err := bindPaths([]string{m.Source}, "read-only")
		if err != nil {
			return nil, nil, err
		}
		if !filepath.IsAbs(m.Target) || filepath.Clean(m.Target) == "/" {
			return nil, nil, fmt.Errorf("sandbox: mount target %q is not an absolute path below /", m.Target)
		}
		s.mounts = append(s.mounts, Mount{Source: src[0], Target: filepath.Clean(m.Target), Layer: m.Layer})
	}
	var cache string
	if cfg.GoCacheDir != "" {
		gc, err := filepath.Abs(cfg.GoCacheDir)
		if err == nil {
			err = os.MkdirAll(gc, 0o755)
		}
		if err == nil {
			gc, err = filepath.EvalSymlinks(gc)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("go cache directory %s: %w", cfg.GoCacheDir, err)
		}
		s.goCacheDir = gc
		cache = "GOCACHE " + gc + " (kept between runs, written only by the go toolchain's warm-up; the suites read it and write to a layer of the run)"
	} else {
		gc, err := os.MkdirTemp("", "orch-gocache-")
		if err != nil {
			return nil, nil, fmt.Errorf("create a go build cache for the sandbox: %w", err)
		}
		s.tempDirs = append(s.tempDirs, gc)
		s.goCacheDir = gc
		cache = "a fresh GOCACHE for this run, removed afterwards"
	}
	if h.size {
		s.tmpfsSize = cfg.MaxMemory
	}
	sandboxed := s.Env(cfg.Env, nil)
	s.homes = hiddenHomes(sandboxed)
	var hide []string
	for _, h := range cfg.Hide {
		if r, err := filepath.EvalSymlinks(h); err == nil {
			hide = append(hide, r)
		} else if filepath.IsAbs(h) {
			hide = append(hide, filepath.Clean(h))
		}
	}
	s.keep = toolchainPaths(sandboxed, s.homes, hide)
	var notes []string
	git, gerr := gitDirs(s.dir)
	s.gitDirs = git
	if len(git) > 0 {
		folder, err := os.MkdirTemp("", runFolderPrefix("orch-gitconfig-"))
		if err == nil {
			s.tempDirs = append(s.tempDirs, folder)
			_ = os.Chmod(folder, 0o755)
			s.gitConfigs, err = gitConfigCopies(git, folder)
		}
		if err != nil {
			_ = s.Close()
			return nil, nil, fmt.Errorf("sandbox: copy the git config for the sandbox: %w", err)
		}
	}
	if gerr != nil {
		notes = append(notes, fmt.Sprintf("could not ask git for the git directories of %s (%v): only its .git is bound read-only", s.dir, gerr))
	}
	if h.hardened() {
		// The suite runs as SuiteUID: its caches must be its own.
		for _, d := range append([]string{s.goCacheDir}, s.writable...) {
			if err := handOver(d, SuiteUID, SuiteGID, nil); err != nil {
				_ = s.Close()
				return nil, nil, fmt.Errorf("sandbox: hand %s to uid %d: %w", d, SuiteUID, err)
			}
		}
	}
	if h.hardened() {
		if err := s.handOverDir(); err != nil {
			_ = s.Close()
			return nil, nil, err
		}
	}
	// The go build cache's lower layer is written before the layers are
	// mounted over it, by the go toolchain alone.
	notes = append(notes, s.warmGoCache(cfg.Env, cfg.GoWarm)...)
	if err := s.startLayers(cmp.Or(cfg.MaxWrite, DefaultMaxWrite)); err != nil {
		_ = s.Close()
		return nil, nil, err
	}
	s.describe = s.description(cache)
	return s, append([]string{s.describe}, notes...), nil
}

// startLayers makes the run's tmpfs and its layers: the directory, the
// go build cache, the writable caches and the dependency folders, each
// over what orch prepared, plus the suites' /tmp and homes.
func (s *Sandbox) startLayers(limit int64) error {
	removeStaleRunFolders(os.TempDir())
	scratch, err := os.MkdirTemp("", runFolderPrefix("orch-run-writes-"))
	if err != nil {
		return fmt.Errorf("sandbox: create the folder of the run's writes: %w", err)
	}
	s.tempDirs = append(s.tempDirs, scratch)
	s.scratch = scratch
	layers := []layer{{target: s.dir, lower: s.dir}, {target: s.goCacheDir, lower: s.goCacheDir}}
	for _, w := range s.writable {
		layers = append(layers, layer{target: w, lower: w})
	}
	for _, m := range s.mounts {
		if m.Layer {
			layers = append(layers, layer{target: m.Target, lower: m.Source, mkdir: within(m.Target, s.dir)})
		}
	}
	dirs := []string{"tmp", "shm", "run"}
	for i := range s.homes {
		dirs = append(dirs, "home"+strconv.Itoa(i))
	}
	hd, err := startHolder(s.host, scratch, limit, dirs, layers)
	if err != nil {
		return err
	}
	s.holder = hd
	return nil
}

// View is where orch reads path as the suites of the run left it (their
// writes live in the run's layers, not in the folders on disk); path
// itself when the run has no layers.
func (s *Sandbox) View(path string) string {
	if s.holder == nil {
		return path
	}
	return s.holder.view(path)
}

// MaxWrite is the bound of the run's writes.
func (s *Sandbox) MaxWrite() int64 {
	if s.holder == nil {
		return 0
	}
	return s.holder.limit
}

// Written is what the suites of the run have written so far, in bytes
// (-1 when it cannot be told).
func (s *Sandbox) Written() int64 {
	if s.holder == nil {
		return -1
	}
	used, _, err := s.holder.usage()
	if err != nil {
		return -1
	}
	return used
}

// handOverDir gives the directory to the suite's user (root only): what
// git checked out and what orch wrote there since (a report folder) is
// root's. The git files and folders stay root's.
func (s *Sandbox) handOverDir() error {
	if !s.host.hardened() {
		return nil
	}
	// Through the layers, so what orch wrote into them (a report folder)
	// is handed over too.
	dir, skip := s.View(s.dir), make([]string, 0, len(s.gitDirs))
	for _, g := range s.gitDirs {
		skip = append(skip, s.View(g))
	}
	if err := handOver(dir, SuiteUID, SuiteGID, skip); err != nil {
		return fmt.Errorf("sandbox: hand %s to uid %d: %w", s.dir, SuiteUID, err)
	}
	s.handedOver = true
	return nil
}

// bindPaths checks the extra binds of a Config: absolute, existing,
// symlinks resolved.
func bindPaths(paths []string, what string) ([]string, error) {
	var out []string
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			return nil, fmt.Errorf("sandbox: %s bind %q is not an absolute path", what, p)
		}
		r, err := filepath.EvalSymlinks(p)
		if err != nil {
			return nil, fmt.Errorf("sandbox: %s bind %s: %w", what, p, err)
		}
		if r == "/" {
			return nil, fmt.Errorf("sandbox: %s bind %s is the root folder", what, p)
		}
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out, nil
}

// Close removes what New made for the run (a fresh go build cache) and,
// as root, gives the directory back to orch's user.
func (s *Sandbox) Close() error {
	var errs []error
	if s.holder != nil {
		// What the suites wrote in the directory is kept there; the
		// rest of the run's writes (caches, dependency folders, /tmp,
		// home) go with the layers.
		if err := copyBack(s.holder.view(filepath.Join(s.scratch, "u1")), s.dir); err != nil {
			errs = append(errs, fmt.Errorf("keep what the suites wrote in %s: %w", s.dir, err))
		}
		s.holder.stop()
		s.holder = nil
	}
	if s.handedOver {
		if err := handOver(s.dir, os.Geteuid(), os.Getegid(), s.gitDirs); err != nil {
			errs = append(errs, fmt.Errorf("give %s back: %w", s.dir, err))
		}
		s.handedOver = false
	}
	for _, d := range s.tempDirs {
		if err := os.RemoveAll(d); err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %w", d, err))
		}
	}
	s.tempDirs = nil
	return errors.Join(errs...)
}

// GoCacheDir is the GOCACHE the suites use in the sandbox.
func (s *Sandbox) GoCacheDir() string { return s.goCacheDir }

// args returns bwrap's argv (without the program) around the command. The
// order matters: later mounts cover earlier ones, so the homes are hidden
// first, then the toolchains in them are bound back, then the writable
// directory and caches, the extra read-only binds, and last the git
// directories read-only (a worktree's .git link lies inside the writable
// directory).
//
// The environment is not passed on the command line (where every user can
// read it in /proc/*/cmdline): bwrap hands its own, already filtered,
// environment to the command.
func (s *Sandbox) args(argv []string, dir string, infoFD, blockFD int) []string {
	h := s.host
	// The suite starts in dir when it is the directory or a folder of it
	// (a module of the repository), else in the directory.
	chdir := s.dir
	if rel, err := filepath.Rel(s.dir, dir); dir != "" && err == nil && filepath.IsLocal(rel) {
		chdir = dir
	}
	scratch := ""
	if s.holder != nil {
		scratch = s.scratch
	}
	args := isolationArgs(h, s.tmpfsSize, scratch)
	if s.holder != nil && s.holder.userns && !h.root && !h.setuid {
		// In the layers' user namespace orch's user is root: the
		// suite's own namespace maps it back to who it is.
		args = append(args, "--uid", strconv.Itoa(os.Getuid()), "--gid", strconv.Itoa(os.Getgid()))
	}
	for i, home := range s.homes {
		if s.holder != nil {
			args = append(args, "--bind", filepath.Join(s.scratch, "home"+strconv.Itoa(i)), home)
			continue
		}
		args = append(args, tmpfsArgs(home, s.tmpfsSize, h.tmpfsPerms(true))...)
	}
	if h.hardened() {
		// bwrap makes the folders leading to a bind inside a tmpfs
		// root's and closed: open them to the suite's user. (On the
		// way to a bind outside them, bwrap makes fresh folders in the
		// sandbox's empty root, 0755: a host folder on the way that the
		// suite's user could not pass, such as a 0700 temporary folder,
		// is not there.)
		for _, d := range s.parentsInTmpfs() {
			args = append(args, "--perms", "0755", "--dir", d)
		}
	}
	for _, k := range s.keep {
		args = append(args, "--ro-bind", k, k)
	}
	args = append(args, "--bind", s.dir, s.dir)
	args = append(args, "--bind", s.goCacheDir, s.goCacheDir)
	for _, w := range s.writable {
		args = append(args, "--bind", w, w)
	}
	for _, r := range s.readOnly {
		args = append(args, "--ro-bind", r, r)
	}
	for _, m := range s.mounts {
		if s.holder != nil && m.Layer {
			// The dependency folder through its writable layer.
			args = append(args, "--bind", m.Target, m.Target)
			continue
		}
		args = append(args, "--ro-bind", m.Source, m.Target)
	}
	for _, g := range s.gitDirs {
		args = append(args, "--ro-bind", g, g)
	}
	for _, c := range s.gitConfigs {
		args = append(args, "--ro-bind", c.Source, c.Target)
	}
	args = append(args,
		// The sandbox's root (bwrap's tmpfs, with the folders made for
		// the binds) is not a place to write.
		"--remount-ro", "/",
		"--chdir", chdir,
		"--info-fd", strconv.Itoa(infoFD),
		"--block-fd", strconv.Itoa(blockFD),
		"--",
	)
	args = append(args, h.dropArgs()...)
	return append(args, argv...)
}

// argv is the command line that starts the suite's argv in the sandbox:
// bwrap, entering the run's layers first.
func (s *Sandbox) argv(argv []string, dir string, infoFD, blockFD int) []string {
	var out []string
	if s.holder != nil {
		out = s.holder.enter()
	}
	out = append(out, s.host.bwrap)
	return append(out, s.args(argv, dir, infoFD, blockFD)...)
}

// bindTargets are the paths the sandbox binds something at.
func (s *Sandbox) bindTargets() []string {
	binds := slices.Concat(s.keep, []string{s.dir, s.goCacheDir}, s.writable, s.readOnly, s.gitDirs)
	for _, m := range s.mounts {
		binds = append(binds, m.Target)
	}
	return binds
}

// parentsInTmpfs returns the folders bwrap creates inside the sandbox's
// tmpfs mounts (its empty root, /tmp, /run, the hidden homes) on the way
// to a bind, from the top down.
func (s *Sandbox) parentsInTmpfs() []string {
	mounts := slices.Concat([]string{"/", "/tmp", "/run"}, s.homes)
	binds := s.bindTargets()
	var out []string
	for _, b := range binds {
		for _, m := range mounts {
			if !within(b, m) || b == m {
				continue
			}
			rel, _ := filepath.Rel(m, filepath.Dir(b))
			if rel == "." {
				continue
			}
			p := m
			for _, part := range strings.Split(rel, string(filepath.Separator)) {
				p = filepath.Join(p, part)
				if !slices.Contains(out, p) && !slices.Contains(mounts, p) {
					out = append(out, p)
				}
			}
		}
	}
	slices.SortStableFunc(out, func(a, b string) int { return strings.Count(a, "/") - strings.Count(b, "/") })
	return out
}

// description is the note about the sandbox.
func (s *Sandbox) description(cache string) string {
	var b strings.Builder
	b.WriteString("bwrap sandbox: " + s.host.describe() + "; an empty root with the system folders read-only (" + strings.Join(shownSystemDirs(), ", ") + ", a part of /etc), writable " + s.dir + " and private /tmp, /run hidden, no network, own pid namespace")
	if len(s.homes) > 0 {
		b.WriteString("; home hidden under an empty tmpfs: " + strings.Join(s.homes, ", "))
		if len(s.keep) > 0 {
			b.WriteString(" (toolchains kept read-only: " + strings.Join(s.keep, ", ") + ")")
		}
	}
	if len(s.writable) > 0 {
		b.WriteString("; also writable: " + strings.Join(s.writable, ", "))
	}
	if len(s.readOnly) > 0 {
		b.WriteString("; also read-only: " + strings.Join(s.readOnly, ", "))
	}
	for _, m := range s.mounts {
		b.WriteString("; " + m.Source + " read-only at " + m.Target)
	}
	if len(s.gitDirs) > 0 {
		b.WriteString("; git directories read-only: " + strings.Join(s.gitDirs, ", "))
	}
	if s.tmpfsSize > 0 {
		fmt.Fprintf(&b, "; each tmpfs at most %s", FormatBytes(s.tmpfsSize))
	}
	b.WriteString("; " + cache + "; GOPROXY=off")
	return b.String()
}

// Env returns the environment of a suite in the sandbox: env with
// Config.SetEnv and the sandbox's own settings, keeping whatever the
// suite's configuration (suiteEnv) sets explicitly:
//   - GOCACHE: the user's build cache is hidden or read-only inside (and
//     must not be writable: a suite could poison later builds outside the
//     sandbox), so go gets Config.GoCacheDir or a fresh cache made for this
//     run and shared by its suites (go test and go vet compile the same
//     packages);
//   - GOPROXY=off: there is no network, and "module lookup disabled" is a
//     clearer failure than a DNS timeout; GOMODCACHE stays readable, so
//     modules already downloaded work;
//   - TMPDIR=/tmp and XDG_CACHE_HOME under it: writable places besides the
//     directory and the (empty, throw-away) home;
//   - as root, safe.directory=* through GIT_CONFIG_COUNT (unless that is
//     set already): the suite runs as SuiteUID while the repository is
//     root's, and git refuses to read a repository of another user.
func (s *Sandbox) Env(env []string, suiteEnv map[string]string) []string {
	set := map[string]string{
		"GOCACHE":        s.goCacheDir,
		"GOPROXY":        "off",
		"TMPDIR":         "/tmp",
		"XDG_CACHE_HOME": xdgCache,
	}
	_, inEnv := LookupEnv(env, "GIT_CONFIG_COUNT")
	if _, inSuite := suiteEnv["GIT_CONFIG_COUNT"]; s.host.hardened() && !inEnv && !inSuite {
		set["GIT_CONFIG_COUNT"] = "1"
		set["GIT_CONFIG_KEY_0"] = "safe.directory"
		set["GIT_CONFIG_VALUE_0"] = "*"
	}
	maps.Copy(set, s.setEnv)
	for name := range suiteEnv {
		delete(set, name)
	}
	return MergeEnv(env, set)
}

// FormatBytes renders n in the largest binary unit that divides it.
func FormatBytes(n int64) string {
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
