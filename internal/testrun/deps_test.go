package testrun

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/gittest"
)

func TestDependencyFolders(t *testing.T) {
	deps, dir := t.TempDir(), t.TempDir()
	gittest.WriteFiles(t, deps, map[string]string{
		"node_modules/a/index.js":              "",
		".venv/bin/python":                     "",
		"vendor/lib.php":                       "",
		"packages/web/node_modules/b/index.js": "",
		"apps/api/node_modules/c/index.js":     "",
		"untracked-only/node_modules/d/x.js":   "", // its folder is not in the worktree
		"src/x.py":                             "",
		".cache/node_modules/e/x.js":           "", // hidden folders are not scanned
	})
	// The worktree holds what git tracks: vendor is tracked here.
	gittest.WriteFiles(t, dir, map[string]string{"vendor/lib.php": "", "packages/web/package.json": "", "apps/api/package.json": "", "src/x.py": ""})
	got := dependencyFolders(deps, dir)
	want := []string{"node_modules", ".venv", "apps/api/node_modules", "packages/web/node_modules"}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("dependencyFolders = %q, want %q", got, want)
	}
}

func TestPrepareDeps(t *testing.T) {
	home := t.TempDir()
	gittest.WriteFiles(t, home, map[string]string{".m2/repository/x.jar": "", ".m2/settings.xml": "<password/>", ".npm/_cacache/index": "", ".gradle/caches/modules-2/x": ""})
	env := []string{"HOME=" + home, "PATH=/usr/bin:/bin", "MAVEN_OPTS=-Xmx1g"}
	t.Run("caches and environment", func(t *testing.T) {
		dir := t.TempDir()
		gittest.WriteFiles(t, dir, map[string]string{"Cargo.toml": "", "settings.gradle.kts": ""})
		d, err := prepareDeps(Options{BuildCache: filepath.Join(t.TempDir(), "b")}, dir, env)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{".m2/repository", ".npm/_cacache", ".gradle/caches"} {
			if !slices.Contains(d.readOnly, filepath.Join(home, p)) {
				t.Errorf("%s not shown read-only: %q", p, d.readOnly)
			}
		}
		for _, p := range d.readOnly {
			if strings.HasSuffix(p, "settings.xml") || p == filepath.Join(home, ".m2") {
				t.Errorf("credentials shown: %s", p)
			}
		}
		if d.env["MAVEN_OPTS"] != "-Xmx1g -Duser.home="+home || d.env["GRADLE_RO_DEP_CACHE"] != filepath.Join(home, ".gradle/caches") {
			t.Errorf("env %v", d.env)
		}
		if !strings.Contains(d.env["CARGO_TARGET_DIR"], "cargo-target-") || !strings.HasSuffix(d.env["GRADLE_USER_HOME"], "gradle-home") || len(d.writable) != 2 {
			t.Errorf("build caches: env %v writable %q", d.env, d.writable)
		}
	})
	t.Run("no build cache for a project that does not build with it", func(t *testing.T) {
		d, err := prepareDeps(Options{BuildCache: filepath.Join(t.TempDir(), "b")}, t.TempDir(), env)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.writable) != 0 || d.env["CARGO_TARGET_DIR"] != "" {
			t.Errorf("writable %q env %v for a project without Cargo.toml or Gradle", d.writable, d.env)
		}
	})
	t.Run("read-only paths", func(t *testing.T) {
		deps, dir := t.TempDir(), t.TempDir()
		gittest.WriteFiles(t, deps, map[string]string{"third_party/sdk/lib.a": ""})
		d, err := prepareDeps(Options{Deps: deps, ReadOnly: []string{home, "/nonexistent-orch"}, ReadOnlyInDir: []string{"third_party/sdk", "missing"}}, dir, env)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.mounts) != 1 || d.mounts[0].Target != filepath.Join(dir, "third_party/sdk") || !slices.Contains(d.readOnly, home) {
			t.Errorf("mounts %+v readOnly %q", d.mounts, d.readOnly)
		}
		if n := strings.Join(d.notes, "\n"); !strings.Contains(n, "/nonexistent-orch does not exist") || !strings.Contains(n, "missing does not exist") {
			t.Errorf("notes %q do not report the missing paths", d.notes)
		}
		for _, bad := range []Options{{Deps: deps, ReadOnlyInDir: []string{"../x"}}, {ReadOnly: []string{"rel"}}, {ReadOnlyInDir: []string{"x"}}} {
			if _, err := prepareDeps(bad, dir, env); err == nil {
				t.Errorf("prepareDeps(%+v) accepted", bad)
			}
		}
	})
}

// Without the sandbox the dependency folders are symlinked into the
// worktree (and the report says they are not read-only).
func TestRunDepsWithoutSandbox(t *testing.T) {
	t.Parallel()
	deps, dir := t.TempDir(), t.TempDir()
	gittest.WriteFiles(t, deps, map[string]string{"node_modules/.bin/tool": "#!/bin/sh\necho tool ran\n"})
	if err := os.Chmod(filepath.Join(deps, "node_modules/.bin/tool"), 0o755); err != nil {
		t.Fatal(err)
	}
	opt := options(t, dir)
	opt.Deps = deps
	report, info, err := Run(context.Background(), []Suite{sh("t", "node_modules/.bin/tool")}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if report.Status != artifact.TestCompleted || !report.OverallPass {
		t.Fatalf("report %+v", report)
	}
	if !containsNote(info.Notes, "symlinked into the worktree, not read-only") {
		t.Errorf("notes %q", info.Notes)
	}
}

// In the sandbox a relative read_only_paths entry is visible in the
// worktree and cannot be written.
func TestRunReadOnlyInDirSandboxed(t *testing.T) {
	requireBwrap(t)
	t.Parallel()
	deps, dir := t.TempDir(), t.TempDir()
	gittest.WriteFiles(t, deps, map[string]string{"third_party/data.txt": "seed\n"})
	opt := options(t, dir)
	opt.Sandbox = SandboxBwrap
	opt.Deps = deps
	opt.ReadOnlyInDir = []string{"third_party"}
	report, _, err := Run(context.Background(), []Suite{
		sh("reads", "grep -q seed third_party/data.txt"),
		sh("writes", "echo x >> third_party/data.txt"),
		sh("offline", `test "$npm_config_update_notifier" = false && test "$PIP_DISABLE_PIP_VERSION_CHECK" = 1`),
	}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !report.Suites[0].OverallPass || report.Suites[1].OverallPass || !report.Suites[2].OverallPass {
		t.Errorf("suites %+v: want the read to pass, the write to fail, and the offline settings set", report.Suites)
	}
	if data, _ := os.ReadFile(filepath.Join(deps, "third_party/data.txt")); string(data) != "seed\n" {
		t.Errorf("the user's file changed: %q", data)
	}
}
