package work

import (
	"context"
	"io"

	"github.com/orchdev/orch/internal/gitx"
	"github.com/orchdev/orch/internal/repomap"
	"github.com/orchdev/orch/internal/visibility"
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
	// ReadFiles reads at most maxBytes of each of paths at the commit in
	// one pass, calling fn in the order of paths with each file's head
	// and whole size (data is valid only during the call); a path the
	// commit has no regular file at is skipped. It is how the prompts'
	// repository context reads many files at once.
	ReadFiles(ctx context.Context, paths []string, maxBytes int64, fn func(path string, data []byte, size int64) error) error
	// Map is the repository map's index of the commit's files that
	// req.Policy shows (internal/repomap): the map, the task's context
	// and read_file's outline are built from it.
	Map(ctx context.Context, req MapRequest) (Map, error)
}

// MapRequest says which map a worker asks of its view.
type MapRequest struct {
	// Policy decides which files may reach a model.
	Policy visibility.Policy
	// CacheDir is where a local view keeps the map's tags cache
	// (.orch/cache/repomap); a view elsewhere may keep its own.
	CacheDir string
	// Progress, when set, receives the build's progress line.
	Progress io.Writer
}

// Map is the repository map's index at the view's commit, as
// *repomap.Index answers it.
type Map interface {
	// Map renders the ranked map for the seeds within budgetTokens.
	Map(ctx context.Context, s repomap.Seeds, budgetTokens int) (string, error)
	// Context renders the map and lists where the seeds' identifiers
	// occur and the files ranked.
	Context(ctx context.Context, s repomap.Seeds, budgetTokens int) (string, []repomap.Occurrence, []repomap.Ranked, error)
	// FileDefinitions lists one file's definitions (read_file's outline).
	FileDefinitions(path string) ([]repomap.Def, bool)
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

// ReadFiles reads at most maxBytes of each of paths at the commit in one
// pass (one `git cat-file --batch`), calling fn in the order of paths with
// the head of each file (valid only during the call) and its whole size. A
// path the commit has no regular file at is skipped.
func (l localRepo) ReadFiles(ctx context.Context, paths []string, maxBytes int64, fn func(path string, data []byte, size int64) error) error {
	if len(paths) == 0 {
		return nil
	}
	entries, err := l.repo.TreeFiles(ctx, l.commit)
	if err != nil {
		return err
	}
	blob := make(map[string]string, len(entries))
	for _, e := range entries {
		if e.Mode == "100644" || e.Mode == "100755" {
			blob[e.Path] = e.SHA
		}
	}
	var shas, found []string
	for _, p := range paths {
		if s, ok := blob[p]; ok {
			shas, found = append(shas, s), append(found, p)
		}
	}
	if len(shas) == 0 {
		return nil
	}
	return l.repo.CatBlobHeads(ctx, shas, maxBytes, func(i int, data []byte, size int64) error {
		return fn(found[i], data, size)
	})
}

// Map builds (or reuses, from its cache and this process) the repository
// map's index of the commit's files the policy shows.
func (l localRepo) Map(ctx context.Context, req MapRequest) (Map, error) {
	ix, err := repomap.Build(ctx, l.repo.Dir, repomap.Options{
		CacheDir: req.CacheDir,
		Commit:   l.commit,
		Policy:   req.Policy,
		Progress: req.Progress,
	})
	if err != nil {
		return nil, err
	}
	return ix, nil
}
