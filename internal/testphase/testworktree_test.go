package testphase

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gofrs/flock"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/gitx"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/phasetest"
	"github.com/orchdev/orch/internal/sandbox"
	"github.com/orchdev/orch/internal/testrun"
)

// Runs of one repository share a warm test worktree at a stable path, and
// each run tests exactly the base commit plus its patch: what an earlier
// suite left there (a build output, an untracked file, an edit of a
// tracked file) is gone, and files nobody changed keep their times.
func TestWarmWorktree(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	modes := []string{"none"}
	if err := sandbox.Check("bwrap"); err == nil {
		modes = append(modes, "bwrap") // as root: handed to uid 65534 and back
	} else if os.Getenv("ORCH_REQUIRE_BWRAP") == "1" || os.Getenv("CI") != "" {
		t.Fatalf("ORCH_REQUIRE_BWRAP=1 or CI is set, but bwrap is unavailable (.ci/run installs bubblewrap): %v", err)
	}
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			f := phasetest.New(t, lifecycle.Test)
			repo, err := gitx.Open(context.Background(), f.Dir)
			if err != nil {
				t.Fatal(err)
			}
			warm := filepath.Join(cache, "orch", "build", testrun.RepoKey(repo.Dir), WarmWorktree)
			// The suite checks the tree it got, then leaves litter: an
			// ignored build output, an untracked file, an edit of a.txt.
			script := `test "$(cat notes/readme.txt)" = hello && test "$(cat a.txt)" = a && test ! -e litter && test ! -e build &&
echo "pwd=$(pwd)" && echo "mtime=$(stat -c %Y b.txt)" &&
mkdir -p build && echo x > build/out && echo x > litter && echo changed > a.txt`
			gittest.Git(t, f.Dir, "commit", "--allow-empty", "-qm", "keep base") // b.txt below is tracked at base
			if err := os.WriteFile(filepath.Join(f.Dir, "b.txt"), []byte("b\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			gittest.Git(t, f.Dir, "add", "b.txt")
			gittest.Git(t, f.Dir, "commit", "-qm", "b")
			base := gittest.Git(t, f.Dir, "rev-parse", "HEAD")
			cfg := config.Default()
			cfg.Test.Suites = []config.Suite{{Name: "check", Kind: "test", Command: config.Command{"sh", "-c", script}}}
			// field reads name=value from the suite's log.
			field := func(logs, name string) string {
				data, _ := os.ReadFile(filepath.Join(logs, "check.log"))
				for l := range strings.Lines(string(data)) {
					if v, ok := strings.CutPrefix(strings.TrimSpace(l), name+"="); ok {
						return v
					}
				}
				return ""
			}
			var pwds, mtimes []string
			for run := range 3 {
				logs := t.TempDir()
				rep, err := RunPatch(context.Background(), repo, cfg, "t", base, []byte(phasetest.ReadmePatch), logs, Options{Sandbox: mode})
				if err != nil {
					t.Fatal(err)
				}
				if rep.Status != artifact.TestCompleted || !rep.OverallPass {
					t.Fatalf("run %d: %s pass=%v error %q notes %q", run, rep.Status, rep.OverallPass, rep.Error, rep.Notes)
				}
				pwds, mtimes = append(pwds, field(logs, "pwd")), append(mtimes, field(logs, "mtime"))
				want := "reset to exactly"
				if run == 0 {
					want = "a new warm test worktree"
				}
				if !strings.Contains(strings.Join(rep.Notes, "\n"), want) {
					t.Errorf("run %d: notes lack %q: %q", run, want, rep.Notes)
				}
			}
			for i := range pwds {
				if pwds[i] != warm || mtimes[i] != mtimes[0] {
					t.Errorf("run %d ran in %s (b.txt mtime %s), want %s (mtime %s)", i, pwds[i], mtimes[i], warm, mtimes[0])
				}
			}

			// Another run holding the warm worktree: a fresh one, said so.
			lock := flock.New(filepath.Join(filepath.Dir(warm), WarmWorktree+".lock"))
			if ok, err := lock.TryLock(); err != nil || !ok {
				t.Fatalf("lock: %v %v", ok, err)
			}
			logs := t.TempDir()
			rep, err := RunPatch(context.Background(), repo, cfg, "t", base, []byte(phasetest.ReadmePatch), logs, Options{Sandbox: mode})
			_ = lock.Unlock()
			if err != nil || !rep.OverallPass || !strings.Contains(strings.Join(rep.Notes, "\n"), "another orch test of this repository is using it") {
				t.Fatalf("busy warm worktree: %v pass=%v notes %q", err, rep.OverallPass, rep.Notes)
			}
			if pwd := field(logs, "pwd"); pwd == "" || pwd == warm {
				t.Error("a second run used the warm worktree while it was locked")
			}
		})
	}
}

// The build caches of repositories that no longer exist are removed when
// a new warm worktree is made; others stay.
func TestPruneBuildCaches(t *testing.T) {
	dir := t.TempDir()
	alive := t.TempDir()
	mk := func(name, owner string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Join(p, "cargo-target-x"), 0o755); err != nil {
			t.Fatal(err)
		}
		if owner != "" {
			if err := os.WriteFile(filepath.Join(p, cacheOwner), []byte(owner), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	gone := mk("gone", filepath.Join(alive, "deleted-repo"))
	kept := mk("alive", alive)
	unowned := mk("old", "")
	busy := mk("busy", filepath.Join(alive, "deleted-too"))
	self := mk("self", filepath.Join(alive, "deleted-self"))
	lock := flock.New(filepath.Join(busy, WarmWorktree+".lock"))
	if ok, err := lock.TryLock(); err != nil || !ok {
		t.Fatal(ok, err)
	}
	defer lock.Unlock()
	pruneBuildCaches(dir, self)
	for p, want := range map[string]bool{gone: false, kept: true, unowned: true, busy: true, self: true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s: exists=%v, want %v", filepath.Base(p), err == nil, want)
		}
	}
}
