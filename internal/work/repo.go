package work

import (
	"context"

	"github.com/orchdev/orch/internal/gitx"
)

// Repo is a read-only view of the repository at one commit, the run's
// base (Input.Repo): what a worker reads of the repository besides the
// map. The engine gives a local view over git (LocalRepo); a worker run
// elsewhere can be given a clone at that commit, or anything else that
// answers the same (docs/workers.md, "The repository").
type Repo interface {
	// Commit is the commit the view shows.
	Commit() string
	// Files lists the tracked files at the commit.
	Files(ctx context.Context) ([]gitx.TreeEntry, error)
	// ReadFile returns the content of a tracked file at the commit; false
	// when the commit has no such file.
	ReadFile(ctx context.Context, path string) ([]byte, bool, error)
	// Grep searches the text files at the commit (gitx.Repo.Grep's
	// dialect and bounds).
	Grep(ctx context.Context, pattern string, opt gitx.GrepOptions) (gitx.GrepResult, error)
}

// LocalRepo is the view of the local repository repo at commit.
func LocalRepo(repo *gitx.Repo, commit string) Repo { return localRepo{repo: repo, commit: commit} }

type localRepo struct {
	repo   *gitx.Repo
	commit string
}

func (l localRepo) Commit() string { return l.commit }

func (l localRepo) Files(ctx context.Context) ([]gitx.TreeEntry, error) {
	return l.repo.TreeFiles(ctx, l.commit)
}

func (l localRepo) ReadFile(ctx context.Context, path string) ([]byte, bool, error) {
	return l.repo.ShowFile(ctx, l.commit, path)
}

func (l localRepo) Grep(ctx context.Context, pattern string, opt gitx.GrepOptions) (gitx.GrepResult, error) {
	return l.repo.Grep(ctx, l.commit, pattern, opt)
}
