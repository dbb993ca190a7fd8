package gitx

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// buildRepo: a committed a.txt, gone.txt and dir/keep.txt, then the user's
// own work: b.txt staged, c.txt changed but not staged, u.txt untracked.
// Every hook writes a marker file when run.
func buildRepo(t *testing.T) (*Repo, string) {
	t.Helper()
	r, base := seedRepo(t, map[string]string{
		"a.txt": lines(10), "gone.txt": "bye\n", "b.txt": "b\n", "c.txt": "c\n", "old/x.txt": "x\n",
	})
	writeFile(t, r, "b.txt", "b staged by the user\n")
	runGit(t, r.Dir, "add", "b.txt")
	writeFile(t, r, "c.txt", "c edited by the user\n")
	writeFile(t, r, "u.txt", "untracked\n")
	plantHooks(t, r)
	return r, base
}

var hookNames = []string{"pre-commit", "commit-msg", "prepare-commit-msg", "post-commit", "post-checkout", "reference-transaction", "post-index-change", "pre-auto-gc"}

func plantHooks(t *testing.T, r *Repo) {
	t.Helper()
	for _, h := range hookNames {
		p := filepath.Join(r.Dir, ".git", "hooks", h)
		body := fmt.Sprintf("#!/bin/sh\necho %s >> %q\n", h, filepath.Join(r.Dir, ".git", "hook-ran"))
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func assertNoHookRan(t *testing.T, r *Repo) {
	t.Helper()
	if data, err := os.ReadFile(filepath.Join(r.Dir, ".git", "hook-ran")); err == nil {
		t.Errorf("repository hooks ran: %s", data)
	}
}

// buildPatch is a patch against buildRepo's base: a.txt line 3 changed,
// new/d.txt created, gone.txt and old/x.txt deleted.
func buildPatch(t *testing.T, r *Repo) []byte {
	t.Helper()
	wt := newRepo(t)
	runGit(t, wt.Dir, "fetch", "-q", r.Dir, "main")
	runGit(t, wt.Dir, "checkout", "-q", "FETCH_HEAD")
	writeFile(t, wt, "a.txt", strings.Replace(lines(10), "\n3\n", "\nthree\n", 1))
	writeFile(t, wt, "new/d.txt", "d\n")
	runGit(t, wt.Dir, "rm", "-q", "gone.txt", "old/x.txt")
	runGit(t, wt.Dir, "add", "-A")
	out := runGit(t, wt.Dir, "diff", "--cached", "--full-index", "HEAD")
	return []byte(out + "\n")
}

const buildMsg = "Change a\n\nOrch-Task: t1\n"

func TestBuildCommitTouchesNothing(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	r, base := buildRepo(t)
	patch := buildPatch(t, r)
	before := stateOf(t, r)

	b, err := r.BuildCommit(ctx, "HEAD", patch, false, buildMsg)
	if err != nil {
		t.Fatal(err)
	}
	assertSameState(t, before, stateOf(t, r))
	assertNoHookRan(t, r)
	if b.Parent != base {
		t.Errorf("parent = %s, want %s", b.Parent, base)
	}
	if want := []string{"a.txt", "gone.txt", "new/d.txt", "old/x.txt"}; !slices.Equal(b.Paths, want) {
		t.Errorf("paths = %q, want %q", b.Paths, want)
	}
	if got := runGit(t, r.Dir, "log", "-1", "--format=%B", b.Commit); got != strings.TrimSpace(buildMsg) {
		t.Errorf("message = %q", got)
	}
	if got := runGit(t, r.Dir, "show", b.Commit+":b.txt"); got != "b" {
		t.Errorf("the user's staged b.txt leaked into the commit: %q", got)
	}
	if got := runGit(t, r.Dir, "show", b.Commit+":new/d.txt"); got != "d" {
		t.Errorf("new/d.txt = %q", got)
	}
}

func TestBuildCommitRefusals(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	r, _ := buildRepo(t)
	patch := buildPatch(t, r)
	before := stateOf(t, r)

	bad := []byte(strings.Replace(string(patch), "-3\n", "-333\n", 1))
	_, err := r.BuildCommit(ctx, "HEAD", bad, false, buildMsg)
	var ae *ApplyError
	if !errors.As(err, &ae) || !slices.Contains(ae.Files, "a.txt") {
		t.Errorf("non-applying patch: %v, want an ApplyError naming a.txt", err)
	}
	if _, err := r.BuildCommit(ctx, "HEAD", []byte("not a patch\n"), false, buildMsg); !errors.Is(err, ErrInvalidPatch) {
		t.Errorf("garbage: %v, want ErrInvalidPatch", err)
	}
	if _, err := r.BuildCommit(ctx, "HEAD", patch, false, "  "); err == nil {
		t.Error("an empty message was accepted")
	}
	assertSameState(t, before, stateOf(t, r))

	// Three-way: HEAD changed line 3 too, so the merge conflicts.
	writeFile(t, r, "a.txt", strings.Replace(lines(10), "\n3\n", "\nTHREE\n", 1))
	runGit(t, r.Dir, "commit", "-q", "-m", "moved", "--", "a.txt")
	before = stateOf(t, r)
	_, err = r.BuildCommit(ctx, "HEAD", patch, true, buildMsg)
	if !errors.As(err, &ae) || !slices.Equal(ae.Files, []string{"a.txt"}) || !ae.ThreeWay {
		t.Errorf("conflicting three-way: %v, want an ApplyError on a.txt", err)
	}
	assertSameState(t, before, stateOf(t, r))
	assertNoHookRan(t, r)
}

func TestBuildCommitThreeWay(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	r, base := buildRepo(t)
	patch := buildPatch(t, r)
	// HEAD moved: line 9 of a.txt changed; the patch still merges.
	writeFile(t, r, "a.txt", strings.Replace(lines(10), "\n9\n", "\nnine\n", 1))
	runGit(t, r.Dir, "commit", "-q", "-m", "moved", "--", "a.txt")
	if _, err := r.BuildCommit(ctx, "HEAD", patch, false, buildMsg); err != nil {
		t.Logf("plain apply on a moved HEAD: %v", err)
	}
	b, err := r.BuildCommit(ctx, "HEAD", patch, true, buildMsg)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(strings.Replace(lines(10), "\n9\n", "\nnine\n", 1), "\n3\n", "\nthree\n", 1)
	if got := runGit(t, r.Dir, "show", b.Commit+":a.txt") + "\n"; got != want {
		t.Errorf("merged a.txt = %q, want %q", got, want)
	}
	if b.Parent == base {
		t.Error("built on the old base, not HEAD")
	}
}

// TestCommitProtocol: build, compare-and-swap the branch, then sync the
// touched paths. The user's staged, unstaged and untracked work is exactly
// as it was, the touched paths match the commit, and no hook ran.
func TestCommitProtocol(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	r, base := buildRepo(t)
	patch := buildPatch(t, r)
	b, err := r.BuildCommit(ctx, "HEAD", patch, false, buildMsg)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := r.HeadRef(ctx)
	if err != nil || ref != "refs/heads/main" {
		t.Fatalf("HeadRef = %q, %v", ref, err)
	}
	// A stale old value is refused and changes nothing.
	if err := r.UpdateRef(ctx, ref, b.Commit, b.Commit, "x"); !errors.Is(err, ErrRefMoved) {
		t.Fatalf("CAS with a wrong old value: %v, want ErrRefMoved", err)
	}
	if head, _ := r.Head(ctx); head != base {
		t.Fatalf("HEAD moved to %s on a refused CAS", head)
	}
	if err := r.UpdateRef(ctx, ref, b.Commit, base, "orch accept t1"); err != nil {
		t.Fatal(err)
	}
	res, err := r.SyncPaths(ctx, base, b.Commit, b.Paths)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Left) != 0 || len(res.Updated) != 4 {
		t.Errorf("sync = %+v", res)
	}
	assertAfterCommit(t, r)
	// Idempotent.
	res, err = r.SyncPaths(ctx, base, b.Commit, b.Paths)
	if err != nil || len(res.Updated)+len(res.Left) != 0 {
		t.Errorf("second sync = %+v, %v", res, err)
	}
	assertAfterCommit(t, r)
	assertNoHookRan(t, r)
}

// assertAfterCommit checks the state after buildPatch's commit landed in
// buildRepo: only the user's own work shows in git status.
func assertAfterCommit(t *testing.T, r *Repo) {
	t.Helper()
	want := "M  b.txt\n M c.txt\n?? u.txt"
	if got := runGit(t, r.Dir, "status", "--porcelain=v1", "--untracked-files=all"); got != want {
		t.Errorf("status:\n%s\nwant:\n%s", got, want)
	}
	if got := readFile(t, r, "c.txt"); got != "c edited by the user\n" {
		t.Errorf("c.txt = %q", got)
	}
	if got := runGit(t, r.Dir, "show", ":b.txt"); got != "b staged by the user" {
		t.Errorf("staged b.txt = %q", got)
	}
	if got := readFile(t, r, "new/d.txt"); got != "d\n" {
		t.Errorf("new/d.txt = %q", got)
	}
	for _, p := range []string{"gone.txt", "old/x.txt", "old"} {
		if _, err := os.Lstat(filepath.Join(r.Dir, p)); !os.IsNotExist(err) {
			t.Errorf("%s still exists (%v)", p, err)
		}
	}
	// The index's stat data is fresh: plumbing sees no modification.
	if got := runGit(t, r.Dir, "diff-files", "--name-only"); got != "c.txt" {
		t.Errorf("diff-files = %q, want only c.txt", got)
	}
}

// TestSyncKeepsForeignChanges: a touched path the user changed after the
// ref moved is left alone and reported.
func TestSyncKeepsForeignChanges(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	r, base := buildRepo(t)
	b, err := r.BuildCommit(ctx, "HEAD", buildPatch(t, r), false, buildMsg)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.UpdateRef(ctx, "refs/heads/main", b.Commit, base, "x"); err != nil {
		t.Fatal(err)
	}
	writeFile(t, r, "a.txt", "the user's a\n")
	res, err := r.SyncPaths(ctx, base, b.Commit, b.Paths)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Left, []string{"a.txt"}) {
		t.Errorf("left = %q, want a.txt", res.Left)
	}
	if got := readFile(t, r, "a.txt"); got != "the user's a\n" {
		t.Errorf("a.txt overwritten: %q", got)
	}
	// The index follows the commit: the user's edit shows as their own
	// unstaged change, not the commit as a staged revert.
	if got := runGit(t, r.Dir, "status", "--porcelain=v1", "--", "a.txt"); got != " M a.txt" {
		t.Errorf("status of a.txt = %q, want \" M a.txt\"", got)
	}
}

// TestSyncKeepsUsersFileAtCreatedPath: an ignored file of the user's at a
// path the commit creates is kept, and the index records the commit's
// version, so nothing is staged against the commit.
func TestSyncKeepsUsersFileAtCreatedPath(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	r, base := buildRepo(t)
	writeFile(t, r, ".git/info/exclude", "new/\n")
	writeFile(t, r, "new/d.txt", "the user's generated d\n")
	b, err := r.BuildCommit(ctx, "HEAD", buildPatch(t, r), false, buildMsg)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.UpdateRef(ctx, "refs/heads/main", b.Commit, base, "x"); err != nil {
		t.Fatal(err)
	}
	res, err := r.SyncPaths(ctx, base, b.Commit, b.Paths)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Left, []string{"new/d.txt"}) {
		t.Errorf("left = %q, want new/d.txt", res.Left)
	}
	if got := readFile(t, r, "new/d.txt"); got != "the user's generated d\n" {
		t.Errorf("new/d.txt overwritten: %q", got)
	}
	if got := runGit(t, r.Dir, "status", "--porcelain=v1", "--", "new/d.txt"); got != " M new/d.txt" {
		t.Errorf("status of new/d.txt = %q, want \" M new/d.txt\" (not a staged deletion)", got)
	}
	if got := runGit(t, r.Dir, "show", ":new/d.txt"); got != "d" {
		t.Errorf("index new/d.txt = %q, want the commit's", got)
	}
}

// TestCommitProtocolFaults fails each git command of the protocol in turn.
// Whatever fails, HEAD is either the old commit with nothing else changed,
// or the new one, and a re-run of the sync then converges.
func TestCommitProtocolFaults(t *testing.T) {
	t.Parallel()
	for step := 0; ; step++ {
		r, base := buildRepo(t)
		patch := buildPatch(t, r)
		before := stateOf(t, r)
		n := 0
		r.Fault = func(sub string, _ []string) error {
			n++
			if n == step+1 {
				return fmt.Errorf("injected fault at %s", sub)
			}
			return nil
		}
		ctx := context.Background()
		err := func() error {
			b, err := r.BuildCommit(ctx, base, patch, false, buildMsg)
			if err != nil {
				return err
			}
			if err := r.UpdateRef(ctx, "refs/heads/main", b.Commit, base, "x"); err != nil {
				return err
			}
			_, err = r.SyncPaths(ctx, base, b.Commit, b.Paths)
			return err
		}()
		r.Fault = nil
		if err == nil {
			if n <= step {
				if step < 5 {
					t.Fatalf("only %d git commands in the protocol", n)
				}
				return // every step has failed once
			}
			t.Fatalf("step %d: the fault was not reported", step)
		}
		head, _ := r.Head(ctx)
		if head == base {
			assertSameState(t, before, stateOf(t, r))
			continue
		}
		if _, err := r.SyncPaths(ctx, base, head, []string{"a.txt", "gone.txt", "new/d.txt", "old/x.txt"}); err != nil {
			t.Fatalf("step %d: sync after the fault: %v", step, err)
		}
		assertAfterCommit(t, r)
		assertNoHookRan(t, r)
	}
}

func TestBuildRevert(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	r, c1, c2 := revertRepo(t)
	plantHooks(t, r)
	writeFile(t, r, "other.txt", "unrelated unstaged work\n")
	before := stateOf(t, r)

	b, err := r.BuildRevert(ctx, "HEAD", c1, "Revert c1\n\nOrch-Revert: "+c1+"\n")
	if err != nil {
		t.Fatal(err)
	}
	assertSameState(t, before, stateOf(t, r))
	if b.Parent != c2 || !slices.Equal(b.Paths, []string{"f.txt"}) {
		t.Errorf("built = %+v", b)
	}
	want := strings.Replace(lines(10), "\n8\n", "\neight\n", 1)
	if got := runGit(t, r.Dir, "show", b.Commit+":f.txt") + "\n"; got != want {
		t.Errorf("reverted f.txt = %q, want %q", got, want)
	}
	// Reverting on top of the revert changes nothing.
	if _, err := r.BuildRevert(ctx, b.Commit, c1, "again"); !errors.Is(err, ErrNothingToRevert) {
		t.Errorf("revert twice: %v, want ErrNothingToRevert", err)
	}
	// A later change to the same line conflicts.
	writeFile(t, r, "f.txt", strings.Replace(readFile(t, r, "f.txt"), "three", "THREE", 1))
	runGit(t, r.Dir, "commit", "-q", "-m", "c3", "--", "f.txt")
	before = stateOf(t, r)
	_, err = r.BuildRevert(ctx, "HEAD", c1, "Revert c1")
	var rc *RevertConflictError
	if !errors.As(err, &rc) || !slices.Equal(rc.Files, []string{"f.txt"}) {
		t.Errorf("conflicting revert: %v", err)
	}
	assertSameState(t, before, stateOf(t, r))
	assertNoHookRan(t, r)
}

func TestFindCommitsWithTrailer(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	r, _ := seedRepo(t, map[string]string{"a": "a\n"})
	runGit(t, r.Dir, "commit", "-q", "--allow-empty", "-m", "change\n\nOrch-Task: t1\nOrch-Plan: p")
	runGit(t, r.Dir, "commit", "-q", "--allow-empty", "-m", "other\n\nOrch-Task: t2")
	runGit(t, r.Dir, "commit", "-q", "--allow-empty", "-m", "Revert\n\nbecause\n\nOrch-Task: t1\nOrch-Revert: abc")
	found, err := r.FindCommitsWithTrailer(ctx, "orch-task", "t1", 0)
	if err != nil || len(found) != 2 {
		t.Fatalf("found %+v, %v", found, err)
	}
	if found[0].Trailer("Orch-Revert") != "abc" || found[1].Trailer("orch-revert") != "" || found[1].Trailer("Orch-Plan") != "p" {
		t.Errorf("trailers: %+v", found)
	}
}

// revertRepo: base f.txt = 1..10; c1 changes line 3; c2 changes line 8.
func revertRepo(t *testing.T) (r *Repo, c1, c2 string) {
	t.Helper()
	r, _ = seedRepo(t, map[string]string{"f.txt": lines(10), "other.txt": "o\n"})
	writeFile(t, r, "f.txt", strings.Replace(lines(10), "\n3\n", "\nthree\n", 1))
	c1 = commitAll(t, r, "c1")
	writeFile(t, r, "f.txt", strings.Replace(readFile(t, r, "f.txt"), "\n8\n", "\neight\n", 1))
	c2 = commitAll(t, r, "c2")
	return r, c1, c2
}
