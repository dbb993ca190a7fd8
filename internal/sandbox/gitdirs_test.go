package sandbox

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/gittest"
)

func TestGitDirs(t *testing.T) {
	main := t.TempDir()
	gittest.WriteFiles(t, main, map[string]string{"a.txt": "a\n"})
	gittest.Git(t, main, "init", "-q")
	gittest.CommitAll(t, main, "base")
	wt := gittest.AddWorktree(t, main)
	mainGit, err := filepath.EvalSymlinks(filepath.Join(main, ".git"))
	if err != nil {
		t.Fatal(err)
	}
	// git prints a path holding a line break raw, over two lines.
	odd := filepath.Join(t.TempDir(), "a:b\nc")
	oddMain := filepath.Join(odd, "main")
	gittest.WriteFiles(t, oddMain, map[string]string{"a.txt": "a\n"})
	gittest.Git(t, oddMain, "init", "-q")
	gittest.CommitAll(t, oddMain, "base")
	oddWt := filepath.Join(odd, "wt")
	gittest.Git(t, oddMain, "worktree", "add", "-q", "--detach", oddWt, "HEAD")
	oddGit, err := filepath.EvalSymlinks(filepath.Join(oddMain, ".git"))
	if err != nil {
		t.Fatal(err)
	}
	// orch may itself run with GIT_DIR set (from a git hook): the
	// worktree's own directories are still the ones found.
	t.Setenv("GIT_DIR", mainGit)
	t.Setenv("GIT_WORK_TREE", main)

	tests := []struct {
		name string
		dir  string
		want []string
	}{
		{"linked worktree: its link file and the main .git", wt, []string{filepath.Join(wt, ".git"), mainGit}},
		{"main checkout: its .git", main, []string{filepath.Join(main, ".git")}},
		{"linked worktree under a path with a colon and a line break", oddWt, []string{filepath.Join(oddWt, ".git"), oddGit}},
		{"not a checkout", t.TempDir(), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := gitDirs(tt.dir)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("gitDirs(%s) = %q, want %q", tt.dir, got, tt.want)
			}
		})
	}

	t.Run("git cannot read the link", func(t *testing.T) {
		broken := t.TempDir()
		gittest.WriteFiles(t, broken, map[string]string{".git": "gitdir: /nonexistent/worktrees/x\n"})
		got, err := gitDirs(broken)
		if err == nil || !slices.Equal(got, []string{filepath.Join(broken, ".git")}) {
			t.Errorf("gitDirs = %q, %v; want the .git file and an error", got, err)
		}
	})
}

func TestSanitizeGitConfig(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"core and extensions stay, remotes and credentials go",
			"[core]\n\trepositoryformatversion = 1\n\tbare = false\n[remote \"origin\"]\n\turl = https://alice:s3cret@example.com/r.git\n[credential]\n\thelper = store\n[extensions]\n\tobjectformat = sha256\n",
			"[core]\n\trepositoryformatversion = 1\n\tbare = false\n[extensions]\n\tobjectformat = sha256\n"},
		{"programs git would run go, case-insensitively",
			"[Core]\n\tfsmonitor = /x\n\tsshCommand = ssh -i key\n\tASKPASS = /y\n\tfilemode = true\n",
			"[Core]\n\tfilemode = true\n"},
		{"a continued value goes with its key; includes and subsections of others go",
			"[core]\n\tpager = less \\\n  -R\n\tlogallrefupdates = true\n[include]\n\tpath = ~/.secrets\n[core \"x\"]\n\ta = b\n[url \"https://t0ken@github.com/\"]\n\tinsteadOf = https://github.com/\n",
			"[core]\n\tlogallrefupdates = true\n[core \"x\"]\n\ta = b\n"},
		{"a key on the header's line is not kept", "[core] bare = true\n\tx = 1\n[remote \"o\"] url = https://u:p@h\n", "[core]\n\tx = 1\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(sanitizeGitConfig([]byte(tt.in))); got != tt.want {
				t.Errorf("sanitizeGitConfig =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

// FuzzSanitizeGitConfig: whatever the config holds, what the sandbox
// shows has only kept sections, and sanitizing it again changes nothing.
func FuzzSanitizeGitConfig(f *testing.F) {
	f.Add("[core]\n\tbare = false\n[remote \"origin\"]\n\turl = https://u:p@h/r\n")
	f.Add("[core] x = 1\n\ta = b \\\n c\n[extensions]\n\tobjectformat = sha256\n")
	f.Add("[CORE \"sub\"]\n\tfsmonitor = x\n[\n]\n")
	f.Fuzz(func(t *testing.T, in string) {
		out := sanitizeGitConfig([]byte(in))
		for _, line := range strings.Split(string(out), "\n") {
			trimmed := strings.TrimSpace(line)
			if !strings.HasPrefix(trimmed, "[") {
				continue
			}
			name := strings.TrimLeft(trimmed, "[")
			if i := strings.IndexAny(name, " \t\"]."); i >= 0 {
				name = name[:i]
			}
			if !slices.Contains(gitConfigKept, strings.ToLower(name)) {
				t.Fatalf("section %q shown from %q", trimmed, in)
			}
		}
		if again := sanitizeGitConfig(out); string(again) != string(out) {
			t.Fatalf("not stable: %q then %q", out, again)
		}
	})
}
