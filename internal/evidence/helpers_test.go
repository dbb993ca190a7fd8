package evidence

import (
	"context"
	"os"
	"testing"

	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/gitx"
)

func TestMain(m *testing.M) { os.Exit(gittest.Main(m)) }

func git(t testing.TB, dir string, stdin []byte, args ...string) string {
	t.Helper()
	return gittest.GitInput(t, dir, stdin, args...)
}

// seed creates a repository with files committed and returns it and the
// commit.
func seed(t testing.TB, files map[string]string, format string) (*gitx.Repo, string) {
	t.Helper()
	dir, head := gittest.Seed(t, files, "--object-format="+format)
	repo, err := gitx.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return repo, head
}

func write(t testing.TB, dir, rel, content string) { t.Helper(); gittest.Write(t, dir, rel, content) }

// repoView is what a user sees: HEAD, the index and status.
func repoView(t testing.TB, repo *gitx.Repo) string {
	return git(t, repo.Dir, nil, "rev-parse", "HEAD") + "\n" + git(t, repo.Dir, nil, "ls-files", "-s") + "\n" +
		git(t, repo.Dir, nil, "status", "--porcelain=v1", "--untracked-files=all")
}
