package testrun

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/orchdev/orch/internal/sandbox"
)

// DependencyFolders are the folders package managers install into a
// working tree (and git ignores) that Run makes visible in the directory.
var DependencyFolders = []string{"node_modules", ".venv", "venv", "vendor", "bower_components"}

// maxWorkspaceScan bounds the top-level folders looked at for nested
// node_modules.
const maxWorkspaceScan = 2000

// dependencyFolders returns the dependency folders of deps (relative
// paths) that dir lacks: the top-level DependencyFolders, and node_modules
// one level down (npm, pnpm and yarn workspaces).
func dependencyFolders(deps, dir string) []string {
	var out []string
	check := func(rel string) {
		src := filepath.Join(deps, rel)
		info, err := os.Stat(src)
		if err != nil || !info.IsDir() {
			return
		}
		if _, err := os.Lstat(filepath.Join(dir, rel)); err == nil {
			return // tracked, or already there
		}
		out = append(out, rel)
	}
	for _, name := range DependencyFolders {
		check(name)
	}
	entries, err := os.ReadDir(deps)
	if err != nil {
		return out
	}
	for i, e := range entries {
		if i >= maxWorkspaceScan {
			break
		}
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || slices.Contains(DependencyFolders, e.Name()) {
			continue
		}
		// Only inside folders the worktree has too (tracked packages).
		if info, err := os.Stat(filepath.Join(dir, e.Name())); err == nil && info.IsDir() {
			sub, err := os.ReadDir(filepath.Join(deps, e.Name()))
			if err != nil {
				continue
			}
			for j, s := range sub {
				if j >= maxWorkspaceScan {
					break
				}
				if s.IsDir() {
					check(filepath.Join(e.Name(), s.Name(), "node_modules"))
				}
			}
			check(filepath.Join(e.Name(), "node_modules"))
		}
	}
	return out
}

// userCaches are the user's dependency caches (relative to HOME) shown
// read-only in the sandbox, so offline installs and builds find what was
// downloaded before. Never their configuration files (~/.m2/settings.xml,
// ~/.npmrc hold credentials).
var userCaches = []string{
	".npm/_cacache",
	".m2/repository",
	".gradle/caches",
	".cache/pip",
	".cache/yarn",
	".local/share/pnpm/store",
	// The pnpm versions that packageManager in package.json asked for,
	// installed by pnpm outside the sandbox (manage-package-manager-versions).
	".local/share/pnpm/.tools",
	".cache/pnpm",
}

// offlineEnv are settings for tools in the sandbox, which has no network:
// checks that can only fail there are off (npm's update notifier alone
// costs about 1.3 s per npm command while it gives up).
var offlineEnv = map[string]string{
	"npm_config_update_notifier":    "false",
	"npm_config_audit":              "false",
	"npm_config_fund":               "false",
	"NO_UPDATE_NOTIFIER":            "1",
	"PIP_DISABLE_PIP_VERSION_CHECK": "1",
}

// deps is what Run adds to the suites' world: dependency folders, caches
// and the environment that points at them.
type deps struct {
	readOnly []string        // shown at their own path
	mounts   []sandbox.Mount // shown at another path (in the directory)
	links    [][2]string     // without a sandbox: symlink [1] → [0]
	// distLinks are Gradle distributions: without a sandbox the (empty)
	// mount point [1] is replaced by a symlink to [0].
	distLinks [][2]string
	writable  []string          // build caches orch keeps
	env       map[string]string // set for every suite
	notes     []string
}

// prepareDeps works out the dependency folders, caches and build caches of
// a run in dir.
func prepareDeps(opt Options, dir string, env []string) (deps, error) {
	var d deps
	d.env = map[string]string{}
	if opt.Deps != "" {
		src, err := filepath.Abs(opt.Deps)
		if err == nil {
			src, err = filepath.EvalSymlinks(src)
		}
		if err != nil {
			return d, fmt.Errorf("%w: dependency tree %s: %v", ErrInvalidOptions, opt.Deps, err)
		}
		found := dependencyFolders(src, dir)
		for _, rel := range found {
			d.mount(filepath.Join(src, rel), filepath.Join(dir, rel), true)
		}
		if len(found) > 0 {
			d.notes = append(d.notes, fmt.Sprintf("dependencies installed in %s shown in the worktree with a writable layer of this run over them (tools' caches such as node_modules/.vite-temp; %s itself is never written): %s", src, src, strings.Join(found, ", ")))
		}
		for _, rel := range opt.ReadOnlyInDir {
			if !filepath.IsLocal(rel) {
				return d, fmt.Errorf("%w: read-only path %q must be relative to the repository and stay inside it", ErrInvalidOptions, rel)
			}
			p := filepath.Join(src, rel)
			if _, err := os.Stat(p); err != nil {
				d.notes = append(d.notes, fmt.Sprintf("read_only_paths: %s does not exist in %s: skipped", rel, src))
				continue
			}
			d.mount(p, filepath.Join(dir, rel), false)
		}
	} else if len(opt.ReadOnlyInDir) > 0 {
		return d, fmt.Errorf("%w: read-only paths inside the repository need Options.Deps", ErrInvalidOptions)
	}
	for _, p := range opt.ReadOnly {
		if !filepath.IsAbs(p) {
			return d, fmt.Errorf("%w: read-only path %q is not absolute", ErrInvalidOptions, p)
		}
		if _, err := os.Stat(p); err != nil {
			d.notes = append(d.notes, fmt.Sprintf("read_only_paths: %s does not exist: skipped", p))
			continue
		}
		d.readOnly = append(d.readOnly, p)
	}
	home, _ := sandbox.LookupEnv(env, "HOME")
	if filepath.IsAbs(home) {
		var shown []string
		for _, c := range userCaches {
			p := filepath.Join(home, c)
			if info, err := os.Stat(p); err == nil && info.IsDir() {
				d.readOnly = append(d.readOnly, p)
				shown = append(shown, "~/"+c)
			}
		}
		if len(shown) > 0 {
			d.notes = append(d.notes, "dependency caches shown read-only: "+strings.Join(shown, ", "))
		}
		// In the sandbox the suites' uid may have no home in the password
		// database (Java's user.home would be /nonexistent): Maven finds
		// ~/.m2 through HOME.
		mavenOpts, _ := sandbox.LookupEnv(env, "MAVEN_OPTS")
		if !strings.Contains(mavenOpts, "-Duser.home=") {
			d.env["MAVEN_OPTS"] = strings.TrimSpace(mavenOpts + " -Duser.home=" + home)
		}
		if p := filepath.Join(home, ".gradle/caches"); slices.Contains(d.readOnly, p) {
			// Gradle reads a read-only dependency cache from here and
			// keeps its own (writable) home elsewhere.
			d.env["GRADLE_RO_DEP_CACHE"] = p
		}
	}
	if opt.BuildCache != "" {
		if err := d.buildCaches(opt.BuildCache, env, dir, home); err != nil {
			return d, err
		}
	}
	return d, nil
}

// mount shows src at dst: in the sandbox read-only at its own path (a
// virtualenv's scripts name it) and at dst, through a writable layer of
// the run when layer is set; without a sandbox by a symlink.
func (d *deps) mount(src, dst string, layer bool) {
	d.readOnly = append(d.readOnly, src)
	d.mounts = append(d.mounts, sandbox.Mount{Source: src, Target: dst, Layer: layer})
	d.links = append(d.links, [2]string{src, dst})
}

// buildCaches makes the build caches of this repository under root that
// the project in dir uses: a cargo target folder per Rust toolchain
// (Cargo.toml), a Gradle home (a Gradle build).
func (d *deps) buildCaches(root string, env []string, dir, home string) error {
	root, err := filepath.Abs(root)
	if err != nil {
		return fmt.Errorf("build cache %s: %w", root, err)
	}
	has := func(names ...string) bool {
		return slices.ContainsFunc(names, func(n string) bool {
			_, err := os.Lstat(filepath.Join(dir, n))
			return err == nil
		})
	}
	pathEnv, _ := sandbox.LookupEnv(env, "PATH")
	var made []string
	add := func(name, path string) error {
		if err := os.MkdirAll(path, 0o755); err != nil {
			return fmt.Errorf("create build cache %s: %w", path, err)
		}
		d.writable = append(d.writable, path)
		d.env[name] = path
		made = append(made, name+"="+path)
		return nil
	}
	if has("Cargo.toml") {
		if err := add("CARGO_TARGET_DIR", filepath.Join(root, "cargo-target-"+toolchainKey("rustc", pathEnv))); err != nil {
			return err
		}
	}
	if has("build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts", "gradlew") {
		gradleHome := filepath.Join(root, "gradle-home")
		if err := add("GRADLE_USER_HOME", gradleHome); err != nil {
			return err
		}
		if filepath.IsAbs(home) {
			if err := d.wrapperDists(filepath.Join(home, ".gradle", "wrapper", "dists"), filepath.Join(gradleHome, "wrapper", "dists")); err != nil {
				return err
			}
		}
	}
	if len(made) > 0 {
		d.notes = append(d.notes, "build caches kept between runs (orch's, writable by the suites, never the user's): "+strings.Join(made, ", "))
	}
	return nil
}

// maxDists bounds the Gradle distributions wrapperDists looks at.
const maxDists = 200

// wrapperDists shows the Gradle distributions the user's wrapper unpacked
// (user: ~/.gradle/wrapper/dists/<name>/<hash>/<gradle-x>, with the
// marker <zip>.ok beside it) to gradlew in orch's Gradle home (orch): the
// <hash> folders are orch's and writable (the wrapper takes a lock file
// there even when it has nothing to download), the marker is copied, and
// the unpacked distribution is bound read-only (symlinked without a
// sandbox). The sandbox has no network: without this gradlew would try to
// download the distribution.
func (d *deps) wrapperDists(user, orch string) error {
	names, err := os.ReadDir(user)
	if err != nil {
		return nil // no wrapper has run here
	}
	var shown []string
	for _, name := range names {
		hashes, err := os.ReadDir(filepath.Join(user, name.Name()))
		if err != nil || !name.IsDir() {
			continue
		}
		for _, hash := range hashes {
			if len(shown) >= maxDists {
				break
			}
			src := filepath.Join(user, name.Name(), hash.Name())
			entries, err := os.ReadDir(src)
			if err != nil || !hash.IsDir() {
				continue
			}
			var dists, markers []string
			for _, e := range entries {
				info, err := os.Stat(filepath.Join(src, e.Name()))
				switch {
				case err != nil:
				case info.IsDir():
					dists = append(dists, e.Name())
				case strings.HasSuffix(e.Name(), ".zip.ok"):
					markers = append(markers, e.Name())
				}
			}
			if len(dists) != 1 || len(markers) == 0 {
				continue // not (completely) unpacked: the wrapper would download it again
			}
			dst := filepath.Join(orch, name.Name(), hash.Name())
			if err := os.MkdirAll(filepath.Join(dst, dists[0]), 0o755); err != nil {
				return fmt.Errorf("show Gradle distribution %s: %w", src, err)
			}
			for _, m := range markers {
				if err := os.WriteFile(filepath.Join(dst, m), nil, 0o644); err != nil {
					return fmt.Errorf("show Gradle distribution %s: %w", src, err)
				}
			}
			dist, err := filepath.EvalSymlinks(filepath.Join(src, dists[0]))
			if err != nil {
				continue
			}
			d.readOnly = append(d.readOnly, dist)
			d.mounts = append(d.mounts, sandbox.Mount{Source: dist, Target: filepath.Join(dst, dists[0])})
			d.distLinks = append(d.distLinks, [2]string{dist, filepath.Join(dst, dists[0])})
			shown = append(shown, name.Name()+"/"+hash.Name()+"/"+dists[0])
		}
	}
	if len(shown) > 0 {
		d.notes = append(d.notes, "Gradle distributions unpacked by your wrapper shown read-only to gradlew (~/.gradle/wrapper/dists): "+strings.Join(shown, ", "))
	}
	return nil
}

// RepoKey names a repository's build cache folder: the base name of its
// top folder and a hash of its path.
func RepoKey(top string) string {
	h := sha256.Sum256([]byte(filepath.Clean(top)))
	base := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, filepath.Base(top))
	return strings.TrimLeft(base, ".") + "-" + hex.EncodeToString(h[:6])
}

// toolchainKey names a toolchain by its program on PATH: a hash of its
// resolved path, size and modification time ("none" when absent), so an
// upgraded or switched toolchain gets a cache of its own.
func toolchainKey(program, pathEnv string) string {
	p, err := sandbox.LookPath(program, pathEnv, "/")
	if err != nil {
		return "none"
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	info, err := os.Stat(p)
	if err != nil {
		return "none"
	}
	h := sha256.Sum256([]byte(p + "\x00" + strconv.FormatInt(info.Size(), 10) + "\x00" + strconv.FormatInt(info.ModTime().UnixNano(), 10)))
	return hex.EncodeToString(h[:6])
}

// link makes the symlinks of a run without a sandbox. A path that exists
// in the directory already is left alone; a Gradle distribution's empty
// mount point becomes a symlink.
func (d *deps) link() error {
	for _, l := range d.distLinks {
		if err := os.Remove(l[1]); err != nil && !os.IsNotExist(err) {
			if info, lerr := os.Lstat(l[1]); lerr == nil && info.Mode()&os.ModeSymlink != 0 {
				continue // linked by an earlier run
			}
			return fmt.Errorf("link %s: %w", l[1], err)
		}
		if err := os.Symlink(l[0], l[1]); err != nil {
			return fmt.Errorf("link %s to %s: %w", l[1], l[0], err)
		}
	}
	for _, l := range d.links {
		if _, err := os.Lstat(l[1]); err == nil {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(l[1]), 0o755); err != nil {
			return fmt.Errorf("link %s: %w", l[1], err)
		}
		if err := os.Symlink(l[0], l[1]); err != nil {
			return fmt.Errorf("link %s to %s: %w", l[1], l[0], err)
		}
	}
	return nil
}
