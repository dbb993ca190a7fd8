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
	if c := before.Changes(same, true); len(c) != 0 {
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
	if got := before.Changes(after, true); !slices.Equal(got, want) {
		t.Errorf("changes = %q, want %q", got, want)
	}
	if got := before.Changes(after, false); !slices.Equal(got, want[:3]) {
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
	if got := after.Changes(again, true); !slices.Equal(got, []string{"hook pre-commit changed"}) {
		t.Errorf("chmod: %q", got)
	}
	// Stored and read back (no ref list): refs are compared by hash.
	runGit(t, r.Dir, "commit", "-q", "--allow-empty", "-m", "moves HEAD")
	moved, err := r.Fingerprint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stored := Fingerprint{Hooks: again.Hooks, Config: again.Config, Refs: again.Refs}
	if got := stored.Changes(moved, true); !slices.Equal(got, []string{"refs changed"}) {
		t.Errorf("stored: %q", got)
	}
}
