package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestGitWatch(t *testing.T) {
	// Each case gets a fresh main repository and linked worktree.
	setup := func(t *testing.T) (mainGit, wt string) {
		main := t.TempDir()
		writeFiles(t, main, map[string]string{"a.txt": "a\n"})
		git(t, "-C", main, "init", "-q")
		git(t, "-C", main, "add", "-A")
		git(t, "-C", main, "-c", "user.name=t", "-c", "user.email=t@t.invalid", "commit", "-qm", "base")
		wt = filepath.Join(t.TempDir(), "wt")
		git(t, "-C", main, "worktree", "add", "-q", "--detach", wt, "HEAD")
		mainGit, err := filepath.EvalSymlinks(filepath.Join(main, ".git"))
		if err != nil {
			t.Fatal(err)
		}
		return mainGit, wt
	}
	tests := []struct {
		name   string
		change func(t *testing.T, mainGit, wt string)
		want   func(mainGit, wt string) []string
	}{
		{"nothing", func(*testing.T, string, string) {}, func(string, string) []string { return nil }},
		{"a hook planted",
			func(t *testing.T, g, _ string) {
				writeFiles(t, g, map[string]string{"hooks/pre-commit": "#!/bin/sh\n"})
			},
			func(g, _ string) []string { return []string{filepath.Join(g, "hooks", "pre-commit")} }},
		{"a sample hook made executable",
			func(t *testing.T, g, _ string) {
				if err := os.Chmod(filepath.Join(g, "hooks", "pre-commit.sample"), 0o777); err != nil {
					t.Fatal(err)
				}
			},
			func(g, _ string) []string { return []string{filepath.Join(g, "hooks", "pre-commit.sample")} }},
		{"a hook as a symlink",
			func(t *testing.T, g, _ string) {
				if err := os.Symlink("/tmp/x", filepath.Join(g, "hooks", "post-checkout")); err != nil {
					t.Fatal(err)
				}
			},
			func(g, _ string) []string { return []string{filepath.Join(g, "hooks", "post-checkout")} }},
		{"config changed",
			func(t *testing.T, g, _ string) { git(t, "--git-dir", g, "config", "core.hooksPath", "/planted") },
			func(g, _ string) []string { return []string{filepath.Join(g, "config")} }},
		{"the worktree's link redirected",
			func(t *testing.T, _, wt string) { writeFiles(t, wt, map[string]string{".git": "gitdir: /planted\n"}) },
			func(g, wt string) []string { return []string{filepath.Join(wt, ".git")} }},
		{"a ref moved (the user committing meanwhile) is not a change",
			func(t *testing.T, g, _ string) {
				git(t, "--git-dir", g, "-c", "user.name=t", "-c", "user.email=t@t.invalid", "commit", "--allow-empty", "-qm", "more")
			},
			func(string, string) []string { return nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, wt := setup(t)
			w, err := WatchGit(wt)
			if err != nil {
				t.Fatal(err)
			}
			tt.change(t, g, wt)
			if got, want := w.Changed(), tt.want(g, wt); !slices.Equal(got, want) {
				t.Errorf("Changed() = %q, want %q", got, want)
			}
		})
	}
	t.Run("not a checkout", func(t *testing.T) {
		w, err := WatchGit(t.TempDir())
		if err != nil || w.Changed() != nil {
			t.Errorf("WatchGit of a plain folder: %v, %q", err, w.Changed())
		}
	})
}
