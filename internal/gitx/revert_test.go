package gitx

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

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

func TestRevertClean(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	r, c1, c2 := revertRepo(t)
	writeFile(t, r, "other.txt", "unrelated unstaged work\n")

	sha, conflicts, err := r.Revert(ctx, c1[:12])
	if err != nil || len(conflicts) != 0 {
		t.Fatalf("Revert = %q, %q, %v", sha, conflicts, err)
	}
	if head := runGit(t, r.Dir, "rev-parse", "HEAD"); head != sha {
		t.Errorf("returned %s, HEAD %s", sha, head)
	}
	if parent := runGit(t, r.Dir, "rev-parse", "HEAD~1"); parent != c2 {
		t.Errorf("revert's parent = %s, want %s", parent, c2)
	}
	want := strings.Replace(lines(10), "\n8\n", "\neight\n", 1)
	if got := readFile(t, r, "f.txt"); got != want {
		t.Errorf("f.txt = %q, want %q", got, want)
	}
	if msg := runGit(t, r.Dir, "log", "-1", "--format=%B"); !strings.Contains(msg, "This reverts commit "+c1) {
		t.Errorf("message = %q", msg)
	}
	if got := readFile(t, r, "other.txt"); got != "unrelated unstaged work\n" {
		t.Errorf("other.txt = %q", got)
	}
}

func TestRevertConflictRestores(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	r, c1, _ := revertRepo(t)
	writeFile(t, r, "f.txt", strings.Replace(readFile(t, r, "f.txt"), "\nthree\n", "\nTHREE\n", 1))
	commitAll(t, r, "c3 overlaps c1")
	writeFile(t, r, "other.txt", "unrelated unstaged work\n")
	writeFile(t, r, "untracked.txt", "u\n")
	before := stateOf(t, r)

	sha, conflicts, err := r.Revert(ctx, c1)
	var rce *RevertConflictError
	if !errors.As(err, &rce) || !errors.Is(err, ErrRevertConflict) {
		t.Fatalf("Revert = %q, %q, %v; want *RevertConflictError", sha, conflicts, err)
	}
	if sha != "" || !slices.Equal(conflicts, []string{"f.txt"}) || !slices.Equal(rce.Files, conflicts) || rce.Commit != c1 {
		t.Errorf("Revert = %q, %q, %+v", sha, conflicts, rce)
	}
	assertSameState(t, before, stateOf(t, r))
	if op, err := r.InProgress(ctx); op != "" || err != nil {
		t.Errorf("InProgress after aborted revert = %q, %v", op, err)
	}
}

func TestRevertNothingAndRefusals(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	r, c1, _ := revertRepo(t)
	if _, _, err := r.Revert(ctx, c1); err != nil {
		t.Fatal(err)
	}
	before := stateOf(t, r)
	if _, _, err := r.Revert(ctx, c1); !errors.Is(err, ErrNothingToRevert) {
		t.Errorf("second Revert = %v, want ErrNothingToRevert", err)
	}
	assertSameState(t, before, stateOf(t, r))

	// Git refuses to revert over staged changes; nothing changes.
	writeFile(t, r, "other.txt", "staged\n")
	runGit(t, r.Dir, "add", "other.txt")
	before = stateOf(t, r)
	if _, _, err := r.Revert(ctx, "HEAD"); err == nil || errors.Is(err, ErrRevertConflict) {
		t.Errorf("Revert over a staged change = %v, want git's refusal", err)
	}
	assertSameState(t, before, stateOf(t, r))

	if _, _, err := r.Revert(ctx, "no-such-commit"); !errors.Is(err, ErrBadRevision) {
		t.Errorf("Revert(bad) = %v, want ErrBadRevision", err)
	}

	m, mainSHA, _ := divergedRepo(t)
	if _, err := gitOut(m.Dir, nil, "merge", "--no-edit", "side"); err == nil {
		t.Fatal("merge unexpectedly succeeded")
	}
	if _, _, err := m.Revert(ctx, mainSHA); !errors.Is(err, ErrOperationInProgress) {
		t.Errorf("Revert during merge = %v, want ErrOperationInProgress", err)
	}
}
