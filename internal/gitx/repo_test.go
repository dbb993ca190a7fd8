package gitx

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestOpen(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	r, _ := seedRepo(t, map[string]string{"sub/dir/f.txt": "x\n"})

	got, err := Open(ctx, filepath.Join(r.Dir, "sub", "dir"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Dir != r.Dir {
		t.Errorf("Open(subdir).Dir = %q, want %q", got.Dir, r.Dir)
	}

	plain := t.TempDir()
	_, err = Open(ctx, plain)
	if !errors.Is(err, ErrNotRepo) {
		t.Fatalf("Open(plain dir) = %v, want ErrNotRepo", err)
	}
	if want := "not a git repository (or any parent): " + plain; err.Error() != want {
		t.Errorf("message = %q, want %q", err.Error(), want)
	}

	if _, err := Open(ctx, filepath.Join(plain, "missing")); err == nil || errors.Is(err, ErrNotRepo) {
		t.Errorf("Open(missing dir) = %v, want a not-exist error", err)
	}

	if _, err := Open(ctx, filepath.Join(r.Dir, ".git")); !errors.Is(err, ErrNotRepo) {
		t.Errorf("Open(.git) = %v, want ErrNotRepo (no work tree)", err)
	}
}

func TestHeadAndBranch(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	r := newRepo(t)

	if _, err := r.Head(ctx); !errors.Is(err, ErrNoCommits) {
		t.Fatalf("Head on unborn branch = %v, want ErrNoCommits", err)
	}
	name, detached, err := r.Branch(ctx)
	if err != nil || name != "main" || detached {
		t.Fatalf("Branch on unborn = %q, %v, %v; want main, false, nil", name, detached, err)
	}

	writeFile(t, r, "a", "a\n")
	first := commitAll(t, r, "first")
	head, err := r.Head(ctx)
	if err != nil || head != first {
		t.Fatalf("Head = %q, %v; want %q", head, err, first)
	}
	if len(head) != 40 {
		t.Errorf("Head %q is not a full sha", head)
	}

	runGit(t, r.Dir, "switch", "-q", "-c", "feature/x")
	if name, detached, err := r.Branch(ctx); err != nil || name != "feature/x" || detached {
		t.Errorf("Branch = %q, %v, %v; want feature/x", name, detached, err)
	}
	runGit(t, r.Dir, "switch", "-q", "--detach", first)
	if name, detached, err := r.Branch(ctx); err != nil || name != "" || !detached {
		t.Errorf("Branch detached = %q, %v, %v; want \"\", true", name, detached, err)
	}
}

func TestResolveCommit(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	r, first := seedRepo(t, map[string]string{"a": "1\n"})
	writeFile(t, r, "a", "2\n")
	second := commitAll(t, r, "second")
	runGit(t, r.Dir, "tag", "-a", "-m", "annotated", "v1", first)
	tree := runGit(t, r.Dir, "rev-parse", "HEAD^{tree}")

	tests := []struct {
		rev  string
		want string // "" means ErrBadRevision
	}{
		{"HEAD", second},
		{"main", second},
		{"HEAD~1", first},
		{first[:10], first},
		{"v1", first}, // annotated tag peeled to its commit
		{tree, ""},
		{"no-such-branch", ""},
		{"-h", ""},
		{"--all", ""},
		{"", ""},
	}
	for _, tt := range tests {
		got, err := r.ResolveCommit(ctx, tt.rev)
		if tt.want == "" {
			if !errors.Is(err, ErrBadRevision) {
				t.Errorf("ResolveCommit(%q) = %q, %v; want ErrBadRevision", tt.rev, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ResolveCommit(%q) = %q, %v; want %q", tt.rev, got, err, tt.want)
		}
	}
}

// divergedRepo has main and side both changing line 3 of f.txt.
func divergedRepo(t *testing.T) (r *Repo, mainSHA, sideSHA string) {
	t.Helper()
	r, _ = seedRepo(t, map[string]string{"f.txt": lines(10), "other.txt": "o\n"})
	runGit(t, r.Dir, "switch", "-q", "-c", "side")
	writeFile(t, r, "f.txt", strings.Replace(lines(10), "3\n", "side\n", 1))
	sideSHA = commitAll(t, r, "side change")
	runGit(t, r.Dir, "switch", "-q", "main")
	writeFile(t, r, "f.txt", strings.Replace(lines(10), "3\n", "main\n", 1))
	mainSHA = commitAll(t, r, "main change")
	return r, mainSHA, sideSHA
}

func TestInProgress(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		start func(t *testing.T, r *Repo, side string)
		want  string
	}{
		{"clean", func(*testing.T, *Repo, string) {}, ""},
		{"merge", func(t *testing.T, r *Repo, side string) {
			if _, err := gitOut(r.Dir, nil, "merge", "--no-edit", "side"); err == nil {
				t.Fatal("merge unexpectedly succeeded")
			}
		}, "merge"},
		{"cherry-pick", func(t *testing.T, r *Repo, side string) {
			if _, err := gitOut(r.Dir, nil, "cherry-pick", side); err == nil {
				t.Fatal("cherry-pick unexpectedly succeeded")
			}
		}, "cherry-pick"},
		{"revert", func(t *testing.T, r *Repo, side string) {
			if _, err := gitOut(r.Dir, nil, "revert", "--no-edit", "HEAD~1"); err == nil {
				t.Fatal("revert unexpectedly succeeded")
			}
		}, "revert"},
		{"rebase", func(t *testing.T, r *Repo, side string) {
			if _, err := gitOut(r.Dir, nil, "rebase", "side"); err == nil {
				t.Fatal("rebase unexpectedly succeeded")
			}
		}, "rebase"},
		{"am", func(t *testing.T, r *Repo, side string) {
			patch := runGit(t, r.Dir, "format-patch", "--stdout", "-1", side)
			if _, err := gitOut(r.Dir, []byte(patch+"\n"), "am"); err == nil {
				t.Fatal("am unexpectedly succeeded")
			}
		}, "am"},
		{"bisect", func(t *testing.T, r *Repo, side string) {
			runGit(t, r.Dir, "bisect", "start")
		}, "bisect"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, _, side := divergedRepo(t)
			tt.start(t, r, side)
			got, err := r.InProgress(testCtx(t))
			if err != nil || got != tt.want {
				t.Errorf("InProgress = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestInProgressInLinkedWorktree(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	r, mainSHA, _ := divergedRepo(t)
	wt, err := r.AddWorktree(ctx, filepath.Join(t.TempDir(), "wt"), mainSHA)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gitOut(wt.Dir, nil, "merge", "--no-edit", "side"); err == nil {
		t.Fatal("merge unexpectedly succeeded")
	}
	if got, err := wt.InProgress(ctx); err != nil || got != "merge" {
		t.Errorf("linked work tree InProgress = %q, %v; want merge", got, err)
	}
	if got, err := r.InProgress(ctx); err != nil || got != "" {
		t.Errorf("main work tree InProgress = %q, %v; want \"\" (the merge is in the other work tree)", got, err)
	}
}

func TestIsAncestor(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	r, mainSHA, sideSHA := divergedRepo(t)
	base := runGit(t, r.Dir, "merge-base", mainSHA, sideSHA)
	tests := []struct {
		a, b string
		want bool
	}{
		{base, mainSHA, true},
		{base, sideSHA, true},
		{mainSHA, mainSHA, true},
		{mainSHA, base, false},
		{mainSHA, sideSHA, false},
	}
	for _, tt := range tests {
		got, err := r.IsAncestor(ctx, tt.a, tt.b)
		if err != nil || got != tt.want {
			t.Errorf("IsAncestor(%.7s, %.7s) = %v, %v; want %v", tt.a, tt.b, got, err, tt.want)
		}
	}
	if _, err := r.IsAncestor(ctx, "nope", mainSHA); !errors.Is(err, ErrBadRevision) {
		t.Errorf("IsAncestor(bad) = %v, want ErrBadRevision", err)
	}
}

func TestChangedFiles(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	r, first := seedRepo(t, map[string]string{"keep": "k\n", "mod": "m\n", "old name": "o\n", "gone": "g\n"})
	writeFile(t, r, "mod", "m2\n")
	runGit(t, r.Dir, "mv", "old name", "new näme")
	runGit(t, r.Dir, "rm", "-q", "gone")
	writeFile(t, r, "dir/added", "a\n")
	second := commitAll(t, r, "changes")

	got, err := r.ChangedFiles(ctx, first, second)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"dir/added", "gone", "mod", "new näme", "old name"}
	if !slices.Equal(got, want) {
		t.Errorf("ChangedFiles = %q, want %q", got, want)
	}
	if got, err := r.ChangedFiles(ctx, second, second); err != nil || len(got) != 0 {
		t.Errorf("ChangedFiles(same) = %q, %v; want none", got, err)
	}
}

func TestErrorFormat(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	r, _ := seedRepo(t, map[string]string{"a": "a\n"})
	_, err := r.run(ctx, call{sub: "cat-file", args: []string{"blob", "HEAD:missing"}})
	var gerr *Error
	if !errors.As(err, &gerr) {
		t.Fatalf("err = %T %v, want *Error", err, err)
	}
	if gerr.ExitCode != 128 {
		t.Errorf("ExitCode = %d, want 128", gerr.ExitCode)
	}
	want := "git cat-file: exit 128: fatal: path 'missing' does not exist in 'HEAD'"
	if err.Error() != want {
		t.Errorf("message = %q\nwant      %q", err.Error(), want)
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = r.Head(cancelled)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Head(cancelled ctx) = %v, want context.Canceled", err)
	}
}

func TestTrimStderr(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"", ""},
		{"  fatal: x  \n\n", "fatal: x"},
		{"error: a\nhint: do this\nhint: and that\nerror: b\n", "error: a\nerror: b"},
		{strings.Repeat("x", maxStderrInMessage+10), strings.Repeat("x", maxStderrInMessage) + "…"},
	}
	for _, tt := range tests {
		if got := trimStderr(tt.in); got != tt.want {
			t.Errorf("trimStderr(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestInheritedRepoEnvIgnored: variables that would point git elsewhere,
// e.g. when orch runs from a git hook, do not leak into gitx's commands.
func TestInheritedRepoEnvIgnored(t *testing.T) {
	ctx := testCtx(t)
	r, sha := seedRepo(t, map[string]string{"a": "a\n"})
	bogus := t.TempDir()
	t.Setenv("GIT_DIR", bogus)
	t.Setenv("GIT_WORK_TREE", bogus)
	t.Setenv("GIT_INDEX_FILE", filepath.Join(bogus, "index"))
	t.Setenv("GIT_LITERAL_PATHSPECS", "0")
	t.Setenv("LC_ALL", "de_DE.UTF-8")
	got, err := r.Head(ctx)
	if err != nil || got != sha {
		t.Fatalf("Head with bogus GIT_DIR = %q, %v; want %q", got, err, sha)
	}
	files, err := r.LsFiles(ctx)
	if err != nil || !slices.Equal(files, []string{"a"}) {
		t.Errorf("LsFiles = %q, %v", files, err)
	}
	if _, err := os.Stat(filepath.Join(bogus, "index")); err == nil {
		t.Error("an index was written at the inherited GIT_INDEX_FILE")
	}
}
