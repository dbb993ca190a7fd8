package gitx

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestFingerprintChanges(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	r, _ := seedRepo(t, map[string]string{"a": "a\n"})
	before, err := r.Fingerprint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	same, err := r.Fingerprint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c := before.Changes(same, ScopeLinks|ScopeRefs); len(c) != 0 {
		t.Fatalf("nothing changed, yet: %q", c)
	}
	// A fetch moving a remote-tracking ref is not a change.
	runGit(t, r.Dir, "update-ref", "refs/remotes/origin/main", "HEAD")
	if err := os.WriteFile(filepath.Join(r.Dir, ".git", "hooks", "pre-commit"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(r.Dir, ".git", "hooks", "pre-push.sample")); err != nil {
		t.Fatal(err)
	}
	runGit(t, r.Dir, "config", "core.fsmonitor", "true")
	runGit(t, r.Dir, "branch", "planted")
	after, err := r.Fingerprint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"hook pre-commit added", "hook pre-push.sample removed", "config changed", "ref refs/heads/planted added"}
	if got := before.Changes(after, ScopeRefs); !slices.Equal(got, want) {
		t.Errorf("changes = %q, want %q", got, want)
	}
	if got := before.Changes(after, 0); !slices.Equal(got, want[:3]) {
		t.Errorf("changes without refs = %q", got)
	}
	// A hook's content and mode count.
	if err := os.Chmod(filepath.Join(r.Dir, ".git", "hooks", "pre-commit"), 0o644); err != nil {
		t.Fatal(err)
	}
	again, err := r.Fingerprint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := after.Changes(again, ScopeRefs); !slices.Equal(got, []string{"hook pre-commit changed"}) {
		t.Errorf("chmod: %q", got)
	}
	// Stored and read back (no ref list): refs are compared by hash.
	runGit(t, r.Dir, "commit", "-q", "--allow-empty", "-m", "moves HEAD")
	moved, err := r.Fingerprint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stored := Fingerprint{Hooks: again.Hooks, Config: again.Config, Refs: again.Refs}
	if got := stored.Changes(moved, ScopeRefs); !slices.Equal(got, []string{"refs changed"}) {
		t.Errorf("stored: %q", got)
	}
}

// From a linked worktree (orch's test worktree), re-checked after a change
// of what a suite could use to get code run outside its sandbox or git
// redirected: the hooks, the config, the worktree's link; refs only in
// ScopeRefs.
func TestFingerprintLinkedWorktree(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(t *testing.T, common, wt string)
		scope  Scope
		want   []string
	}{
		{"nothing", func(*testing.T, string, string) {}, ScopeLinks | ScopeRefs, nil},
		{"a hook planted", func(t *testing.T, g, _ string) {
			writeOS(t, filepath.Join(g, "hooks", "pre-commit"), "#!/bin/sh\n", 0o755)
		}, ScopeLinks, []string{"hook pre-commit added"}},
		{"a sample hook made executable", func(t *testing.T, g, _ string) {
			if err := os.Chmod(filepath.Join(g, "hooks", "pre-commit.sample"), 0o777); err != nil {
				t.Fatal(err)
			}
		}, ScopeLinks, []string{"hook pre-commit.sample changed"}},
		{"a hook as a symlink", func(t *testing.T, g, _ string) {
			if err := os.Symlink("/tmp/x", filepath.Join(g, "hooks", "post-checkout")); err != nil {
				t.Fatal(err)
			}
		}, ScopeLinks, []string{"hook post-checkout added"}},
		{"config changed", func(t *testing.T, g, _ string) {
			runGit(t, g, "config", "core.hooksPath", "/planted")
		}, ScopeLinks, []string{"config changed"}},
		{"the worktree's link redirected", func(t *testing.T, _, wt string) {
			writeOS(t, filepath.Join(wt, ".git"), "gitdir: /planted\n", 0o644)
		}, ScopeLinks, []string{"link .git changed"}},
		{"the worktree's own config.worktree written", func(t *testing.T, g, wt string) {
			matches, _ := filepath.Glob(filepath.Join(g, "worktrees", "*"))
			writeOS(t, filepath.Join(matches[0], "config.worktree"), "[core]\n\thooksPath = /planted\n", 0o644)
		}, ScopeLinks, []string{"link config.worktree changed"}},
		{"the main worktree's config.worktree written", func(t *testing.T, g, wt string) {
			writeOS(t, filepath.Join(g, "config.worktree"), "[core]\n\thooksPath = /planted\n", 0o644)
		}, ScopeLinks, []string{"config changed"}},
		{"the worktree's gitdir file changed", func(t *testing.T, g, wt string) {
			matches, _ := filepath.Glob(filepath.Join(g, "worktrees", "*", "gitdir"))
			if len(matches) != 1 {
				t.Fatalf("worktree admin files: %q", matches)
			}
			writeOS(t, matches[0], "/planted/.git\n", 0o644)
		}, ScopeLinks, []string{"link gitdir changed"}},
		{"the user committing meanwhile: a ref moved, not a link", func(t *testing.T, g, _ string) {
			runGit(t, filepath.Dir(g), "commit", "--allow-empty", "-qm", "more")
		}, ScopeLinks, nil},
		{"the user committing meanwhile, with refs", func(t *testing.T, g, _ string) {
			runGit(t, filepath.Dir(g), "commit", "--allow-empty", "-qm", "more")
		}, ScopeLinks | ScopeRefs, []string{"ref refs/heads/main moved"}},
		{"the main worktree switched branch", func(t *testing.T, g, _ string) {
			runGit(t, filepath.Dir(g), "switch", "-qc", "other")
		}, ScopeRefs, []string{"ref HEAD of the main worktree moved", "ref refs/heads/other added"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			r, _ := seedRepo(t, map[string]string{"a": "a\n"})
			wt, err := r.AddWorktree(ctx, filepath.Join(t.TempDir(), "wt"), "HEAD")
			if err != nil {
				t.Fatal(err)
			}
			before, err := wt.Fingerprint(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(before.Links) != 4 {
				t.Fatalf("links of a linked worktree: %q", before.Links)
			}
			common, err := filepath.EvalSymlinks(filepath.Join(r.Dir, ".git"))
			if err != nil {
				t.Fatal(err)
			}
			tt.change(t, common, wt.Dir)
			after, err := wt.Recheck(ctx, before)
			if err != nil {
				t.Fatal(err)
			}
			if got := before.Changes(after, tt.scope); !slices.Equal(got, tt.want) {
				t.Errorf("changes = %q, want %q", got, tt.want)
			}
			// accept compares the test worktree's fingerprint with the
			// main worktree's: hooks and config agree when nothing changed.
			main, err := r.Fingerprint(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := after.Changes(main, 0); len(got) != 0 {
				t.Errorf("the worktree's and the main worktree's fingerprints differ: %q", got)
			}
		})
	}
}

func writeOS(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}
