package sandbox

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// systemPrefixes are folders a home must not be, hold or lie in: hiding
// them would hide the tools the suites run.
var systemPrefixes = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/proc", "/dev", "/sys", "/boot", "/snap", "/nix", "/gnu"}

// freshPrefixes are already empty tmpfs mounts in the sandbox.
var freshPrefixes = []string{"/tmp", "/run"}

// secretHomeDirs are folders and files of a home that are never bound back
// into the sandbox, even when PATH or a toolchain variable points there:
// keys, tokens and the configuration files that hold them.
var secretHomeDirs = []string{
	".ssh", ".gnupg", ".aws", ".azure", ".config", ".docker", ".kube",
	".password-store", ".pki", ".netrc", ".git-credentials", ".npmrc",
	".pypirc", ".m2", ".gradle", ".local/share/keyrings",
	".cargo/credentials", ".cargo/credentials.toml",
}

// hiddenHomes returns the home folders the sandbox hides: HOME of the
// suites' environment, orch's own HOME and the user's home from the
// password database, symlinks resolved, existing, without duplicates.
// A home that is "/", a system folder (or holds or lies in one) is not
// hidden; one under /tmp or /run is already hidden.
func hiddenHomes(env []string) []string {
	var cands []string
	if h, ok := LookupEnv(env, "HOME"); ok {
		cands = append(cands, h)
	}
	cands = append(cands, os.Getenv("HOME"))
	if u, err := user.Current(); err == nil {
		cands = append(cands, u.HomeDir)
	}
	var out []string
	for _, h := range cands {
		if h == "" || !filepath.IsAbs(h) {
			continue
		}
		r, err := filepath.EvalSymlinks(h)
		if err != nil {
			continue
		}
		if info, err := os.Stat(r); err != nil || !info.IsDir() {
			continue
		}
		if r == "/" || slices.ContainsFunc(systemPrefixes, func(p string) bool { return within(r, p) || within(p, r) }) ||
			slices.ContainsFunc(freshPrefixes, func(p string) bool { return within(r, p) }) {
			continue
		}
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// within reports whether path is base or lies below it (both clean and
// absolute).
func within(path, base string) bool {
	if base == "/" {
		return true
	}
	return path == base || strings.HasPrefix(path, base+"/")
}

// toolchainPaths returns the folders the suites' tools need that the
// sandbox does not show already (systemDirs), to be bound read-only at
// their own path, wherever they are (a home, /opt, a CI tool cache):
//   - every PATH entry, and the "lib" next to an entry named "bin"
//     (Python's user site in ~/.local/lib, nvm's global modules);
//   - where a symlink in such an entry (or in /usr/local/bin) points
//     elsewhere, the target's folder, or the folder above it when that is
//     a "bin" (pipx venvs, ~/.local/bin/go → ~/sdk/go1.x/bin/go);
//   - Go's GOROOT and GOMODCACHE as `go env` reports them (the user's
//     `go env -w` settings included), and JAVA_HOME;
//   - rustup's toolchains (RUSTUP_HOME or ~/.rustup) and cargo's registry
//     and git checkouts (never CARGO_HOME's credentials);
//   - pyenv's root when its shims are on PATH.
//
// Never returned: a home itself or a folder holding one, a folder of the
// first level ("/work", "/srv": it would show every repository in it), a
// folder holding or lying in one of hide (the user's working tree), and
// anything in secretHomeDirs. Nested results are folded into their parent.
func toolchainPaths(env []string, homes, hide []string) []string {
	var cands []string
	add := func(p string) {
		if p == "" || !filepath.IsAbs(p) {
			return
		}
		p = filepath.Clean(p)
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		if depth(p) < 2 || visibleSystemPath(p) || slices.Contains(homes, p) ||
			slices.ContainsFunc(hide, func(h string) bool { return within(p, h) || within(h, p) }) {
			return
		}
		cands = append(cands, p)
	}
	pathEnv, _ := LookupEnv(env, "PATH")
	var pathDirs []string
	scan := func(d string) {
		for _, target := range symlinkTargets(d, 512) {
			root := filepath.Dir(target)
			if filepath.Base(root) == "bin" {
				root = filepath.Dir(root)
			}
			add(root)
		}
	}
	for _, d := range filepath.SplitList(pathEnv) {
		if !filepath.IsAbs(d) {
			continue
		}
		d = filepath.Clean(d)
		pathDirs = append(pathDirs, d)
		if visibleSystemPath(d) {
			continue
		}
		add(d)
		if filepath.Base(d) == "bin" {
			add(filepath.Join(filepath.Dir(d), "lib"))
		}
		scan(d)
	}
	// Installers link their tools here from /opt and the like.
	scan("/usr/local/bin")
	goroot, gomodcache := goDirs(env)
	add(goroot)
	add(gomodcache)
	if j, ok := LookupEnv(env, "JAVA_HOME"); ok {
		add(j)
	}

	home := ""
	if len(homes) > 0 {
		home = homes[0]
	}
	if h, ok := LookupEnv(env, "HOME"); ok && filepath.IsAbs(h) {
		if r, err := filepath.EvalSymlinks(h); err == nil {
			home = r
		}
	}
	envOr := func(name, def string) string {
		if v, ok := LookupEnv(env, name); ok && v != "" {
			return v
		}
		if home == "" {
			return ""
		}
		return filepath.Join(home, def)
	}
	add(envOr("RUSTUP_HOME", ".rustup"))
	if cargo := envOr("CARGO_HOME", ".cargo"); cargo != "" {
		add(filepath.Join(cargo, "registry"))
		add(filepath.Join(cargo, "git"))
	}
	if pyenv := envOr("PYENV_ROOT", ".pyenv"); pyenv != "" && slices.ContainsFunc(pathDirs, func(d string) bool { return within(d, filepath.Clean(pyenv)) }) {
		add(filepath.Clean(pyenv))
	}
	return foldPaths(cands, homes)
}

// foldPaths keeps the existing candidates that are not secret, sorted,
// without those inside another.
func foldPaths(cands, homes []string) []string {
	var ok []string
	for _, p := range cands {
		if _, err := os.Stat(p); err != nil || secretPath(p, homes) || slices.Contains(ok, p) {
			continue
		}
		ok = append(ok, p)
	}
	slices.Sort(ok)
	var out []string
	for _, p := range ok {
		if len(out) > 0 && within(p, out[len(out)-1]) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// secretPath reports whether p is, holds or lies in a secret folder of a
// home, or holds a home.
func secretPath(p string, homes []string) bool {
	for _, h := range homes {
		if within(h, p) {
			return true
		}
		for _, s := range secretHomeDirs {
			sp := filepath.Join(h, s)
			if within(p, sp) || within(sp, p) {
				return true
			}
		}
	}
	return false
}

// symlinkTargets returns the resolved targets of the first max symlinks in
// dir.
func symlinkTargets(dir string, max int) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for i, e := range entries {
		if i >= max {
			break
		}
		if e.Type()&os.ModeSymlink == 0 {
			continue
		}
		if t, err := filepath.EvalSymlinks(filepath.Join(dir, e.Name())); err == nil {
			out = append(out, t)
		}
	}
	return out
}

// goDirs asks the go on the suites' PATH for its GOROOT and GOMODCACHE.
// It runs from "/" (no go.mod of the project is read) with
// GOTOOLCHAIN=local (nothing is downloaded). Empty results when there is
// no go or it fails.
func goDirs(env []string) (goroot, gomodcache string) {
	pathEnv, _ := LookupEnv(env, "PATH")
	goBin, err := LookPath("go", pathEnv, "/")
	if err != nil {
		return "", ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, goBin, "env", "-json", "GOROOT", "GOMODCACHE")
	cmd.Dir = "/"
	cmd.Env = MergeEnv(env, map[string]string{"GOTOOLCHAIN": "local", "GOFLAGS": ""})
	out, err := cmd.Output()
	if err != nil {
		return "", ""
	}
	var v struct{ GOROOT, GOMODCACHE string }
	if json.Unmarshal(out, &v) != nil {
		return "", ""
	}
	return v.GOROOT, v.GOMODCACHE
}
