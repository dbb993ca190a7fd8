package evidence

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/gitx"
)

// TestMain isolates git from the host's global and system configuration.
func TestMain(m *testing.M) {
	home, err := os.MkdirTemp("", "evidence-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for k, v := range map[string]string{
		"HOME":                home,
		"XDG_CONFIG_HOME":     filepath.Join(home, ".config"),
		"GIT_CONFIG_NOSYSTEM": "1",
		"GIT_CONFIG_GLOBAL":   filepath.Join(home, "gitconfig"),
		"GIT_AUTHOR_NAME":     "Evidence Test", "GIT_AUTHOR_EMAIL": "evidence@example.test",
		"GIT_COMMITTER_NAME": "Evidence Test", "GIT_COMMITTER_EMAIL": "evidence@example.test",
	} {
		os.Setenv(k, v)
	}
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

func git(t testing.TB, dir string, stdin []byte, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, errb.String())
	}
	return strings.TrimSpace(out.String())
}

// seed creates a repository with files committed and returns it and the
// commit.
func seed(t testing.TB, files map[string]string, format string) (*gitx.Repo, string) {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, nil, "init", "-q", "-b", "main", "--object-format="+format)
	for p, c := range files {
		write(t, dir, p, c)
	}
	git(t, dir, nil, "add", "-A")
	git(t, dir, nil, "commit", "-q", "-m", "seed")
	repo, err := gitx.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return repo, git(t, dir, nil, "rev-parse", "HEAD")
}

func write(t testing.TB, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// repoView is what a user sees: HEAD, the index and status.
func repoView(t testing.TB, repo *gitx.Repo) string {
	return git(t, repo.Dir, nil, "rev-parse", "HEAD") + "\n" + git(t, repo.Dir, nil, "ls-files", "-s") + "\n" +
		git(t, repo.Dir, nil, "status", "--porcelain=v1", "--untracked-files=all")
}
