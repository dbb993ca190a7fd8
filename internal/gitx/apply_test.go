package gitx

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// applyFixture is a repository and a patch made by DiffFiles against base:
// x.go line 3 -> "three", y.go line 15 -> "fifteen", run.sh edited (mode
// 100755), gone/only.txt deleted and newdir/n.txt created.
type applyFixture struct {
	r     *Repo
	base  string
	patch []byte
}

func newApplyFixture(t *testing.T) applyFixture {
	t.Helper()
	r := newRepo(t)
	writeFile(t, r, "x.go", lines(20))
	writeFile(t, r, "y.go", lines(20))
	writeFile(t, r, "other.txt", "other\n")
	writeFile(t, r, "z.txt", "z\n")
	writeFile(t, r, "gone/only.txt", "only\n")
	writeFileMode(t, r, "run.sh", "#!/bin/sh\necho 1\n", 0o755)
	base := commitAll(t, r, "base")
	patch, err := r.DiffFiles(t.Context(), base, map[string][]byte{
		"x.go":         []byte(strings.Replace(lines(20), "\n3\n", "\nthree\n", 1)),
		"y.go":         []byte(strings.Replace(lines(20), "\n15\n", "\nfifteen\n", 1)),
		"run.sh":       []byte("#!/bin/sh\necho 2\n"),
		"newdir/n.txt": []byte("new\n"),
	}, []string{"gone/only.txt"})
	if err != nil {
		t.Fatal(err)
	}
	return applyFixture{r: r, base: base, patch: patch}
}

// moveHead commits a replacement of line n of x.go.
func (f applyFixture) moveHead(t *testing.T, n int, text string) {
	t.Helper()
	content := strings.Replace(lines(20), "\n"+strconv.Itoa(n)+"\n", "\n"+text+"\n", 1)
	writeFile(t, f.r, "x.go", content)
	commitAll(t, f.r, "move HEAD")
}

// dirtyUser gives the user unrelated staged, unstaged and untracked changes.
func (f applyFixture) dirtyUser(t *testing.T) {
	t.Helper()
	writeFile(t, f.r, "other.txt", "staged by the user\n")
	runGit(t, f.r.Dir, "add", "other.txt")
	writeFile(t, f.r, "z.txt", "unstaged by the user\n")
	writeFile(t, f.r, "u.txt", "untracked\n")
}

func TestApplyClean(t *testing.T) {
	t.Parallel()
	for _, index := range []bool{false, true} {
		f := newApplyFixture(t)
		ctx := t.Context()
		if err := f.r.ApplyCheck(ctx, f.patch, false); err != nil {
			t.Fatalf("ApplyCheck: %v", err)
		}
		if err := f.r.Apply(ctx, f.patch, ApplyOptions{Index: index}); err != nil {
			t.Fatalf("Apply(index=%v): %v", index, err)
		}
		if got := readFile(t, f.r, "newdir/n.txt"); got != "new\n" {
			t.Errorf("newdir/n.txt = %q", got)
		}
		if !strings.Contains(readFile(t, f.r, "x.go"), "\nthree\n") {
			t.Error("x.go not patched")
		}
		status := runGit(t, f.r.Dir, "status", "--porcelain")
		staged := strings.Contains(status, "M  x.go")
		if staged != index {
			t.Errorf("index=%v but status:\n%s", index, status)
		}
	}
}

func TestApplyConflictChangesNothing(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	f := newApplyFixture(t)
	f.moveHead(t, 3, "THREE")
	f.dirtyUser(t)
	before := stateOf(t, f.r)

	for _, err := range []error{
		f.r.ApplyCheck(ctx, f.patch, false),
		f.r.Apply(ctx, f.patch, ApplyOptions{}),
		f.r.Apply(ctx, f.patch, ApplyOptions{Index: true}),
	} {
		var ae *ApplyError
		if !errors.As(err, &ae) || !errors.Is(err, ErrApplyConflict) {
			t.Fatalf("err = %v, want *ApplyError", err)
		}
		if !slices.Equal(ae.Files, []string{"x.go"}) || ae.ThreeWay {
			t.Errorf("ApplyError = %+v, want Files [x.go]", ae)
		}
		if !strings.Contains(err.Error(), "git apply: exit 1: error: patch failed: x.go:1") {
			t.Errorf("message %q lacks git's subcommand, exit code and stderr", err)
		}
	}
	assertSameState(t, before, stateOf(t, f.r))
}

func TestApplyThreeWayNonOverlapping(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	f := newApplyFixture(t)
	f.moveHead(t, 6, "six") // inside the hunk's context: a plain apply fails
	f.dirtyUser(t)

	if err := f.r.ApplyCheck(ctx, f.patch, false); !errors.Is(err, ErrApplyConflict) {
		t.Fatalf("plain ApplyCheck = %v, want a conflict", err)
	}
	if err := f.r.ApplyCheck(ctx, f.patch, true); err != nil {
		t.Fatalf("3-way ApplyCheck: %v", err)
	}
	if err := f.r.Apply(ctx, f.patch, ApplyOptions{ThreeWay: true}); err != nil {
		t.Fatalf("3-way Apply: %v", err)
	}
	want := strings.Replace(strings.Replace(lines(20), "\n3\n", "\nthree\n", 1), "\n6\n", "\nsix\n", 1)
	if got := readFile(t, f.r, "x.go"); got != want {
		t.Errorf("x.go = %q, want %q", got, want)
	}
	status := runGit(t, f.r.Dir, "status", "--porcelain", "--untracked-files=all")
	for _, line := range []string{"M  x.go", "M  y.go", "A  newdir/n.txt", "D  gone/only.txt", "M  other.txt", " M z.txt", "?? u.txt"} {
		if !strings.Contains(status, line) {
			t.Errorf("status lacks %q:\n%s", line, status)
		}
	}
}

// TestThreeWayLeavesConflictsBehind documents what a bare `git apply --3way`
// leaves after a conflict (the state Apply cleans up).
func TestThreeWayLeavesConflictsBehind(t *testing.T) {
	t.Parallel()
	f := newApplyFixture(t)
	f.moveHead(t, 3, "THREE")
	if _, err := gitOut(f.r.Dir, f.patch, "apply", "--3way", "-"); err == nil {
		t.Fatal("git apply --3way succeeded, want a conflict")
	}
	status := runGit(t, f.r.Dir, "status", "--porcelain", "--untracked-files=all")
	for _, line := range []string{"UU x.go", "M  y.go", "M  run.sh", "A  newdir/n.txt", "D  gone/only.txt"} {
		if !strings.Contains(status, line) {
			t.Errorf("status lacks %q:\n%s", line, status)
		}
	}
	if !strings.Contains(readFile(t, f.r, "x.go"), "<<<<<<<") {
		t.Error("x.go has no conflict markers")
	}
}

func TestApplyThreeWayConflictRestores(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	f := newApplyFixture(t)
	f.moveHead(t, 3, "THREE")
	f.dirtyUser(t)
	before := stateOf(t, f.r)

	err := f.r.ApplyCheck(ctx, f.patch, true)
	var ae *ApplyError
	if !errors.As(err, &ae) || !slices.Equal(ae.Files, []string{"x.go"}) || !ae.ThreeWay {
		t.Fatalf("3-way ApplyCheck = %v, want *ApplyError for x.go", err)
	}
	assertSameState(t, before, stateOf(t, f.r))

	err = f.r.Apply(ctx, f.patch, ApplyOptions{ThreeWay: true})
	if !errors.As(err, &ae) || !errors.Is(err, ErrApplyConflict) {
		t.Fatalf("3-way Apply = %v, want *ApplyError", err)
	}
	if !slices.Equal(ae.Files, []string{"x.go"}) || !ae.ThreeWay {
		t.Errorf("ApplyError = %+v, want Files [x.go], ThreeWay", ae)
	}
	// Checked before anything refreshes the index: plumbing sees only the
	// user's own unstaged change.
	if got := runGit(t, f.r.Dir, "diff-files", "--name-only"); got != "z.txt" {
		t.Errorf("git diff-files after restore = %q, want z.txt", got)
	}
	assertSameState(t, before, stateOf(t, f.r))
	if op, err := f.r.InProgress(ctx); err != nil || op != "" {
		t.Errorf("InProgress after restore = %q, %v", op, err)
	}
	// The restored index is usable: a clean apply of another patch works.
	if err := f.r.Apply(ctx, []byte(nil), ApplyOptions{ThreeWay: true}); err != nil {
		t.Errorf("empty Apply: %v", err)
	}
}

func TestApplyThreeWayKeepsDirtyTouchedFile(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	f := newApplyFixture(t)
	writeFile(t, f.r, "y.go", "the user's unstaged work\n") // touched by the patch
	before := stateOf(t, f.r)

	err := f.r.Apply(ctx, f.patch, ApplyOptions{ThreeWay: true})
	var ae *ApplyError
	if !errors.As(err, &ae) || !slices.Equal(ae.Files, []string{"y.go"}) {
		t.Fatalf("Apply over a dirty file = %v, want *ApplyError for y.go", err)
	}
	if !strings.Contains(err.Error(), "does not match index") {
		t.Errorf("message %q lacks git's reason", err)
	}
	assertSameState(t, before, stateOf(t, f.r))
}

func TestApplyInvalidAndEmpty(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	f := newApplyFixture(t)
	before := stateOf(t, f.r)
	for _, patch := range []string{
		"this is not a patch\n",
		"diff --git a/x.go b/x.go\n--- a/x.go\n+++ b/x.go\n@@ -1,2 +1,2 @@\n-1\n",
	} {
		if err := f.r.ApplyCheck(ctx, []byte(patch), false); !errors.Is(err, ErrInvalidPatch) {
			t.Errorf("ApplyCheck(%q) = %v, want ErrInvalidPatch", patch, err)
		}
		for _, opts := range []ApplyOptions{{}, {ThreeWay: true}} {
			if err := f.r.Apply(ctx, []byte(patch), opts); !errors.Is(err, ErrInvalidPatch) {
				t.Errorf("Apply(%q, %+v) = %v, want ErrInvalidPatch", patch, opts, err)
			}
		}
	}
	for _, empty := range []string{"", "\n \n"} {
		if err := f.r.ApplyCheck(ctx, []byte(empty), true); err != nil {
			t.Errorf("ApplyCheck(empty) = %v", err)
		}
		if err := f.r.Apply(ctx, []byte(empty), ApplyOptions{}); err != nil {
			t.Errorf("Apply(empty) = %v", err)
		}
	}
	assertSameState(t, before, stateOf(t, f.r))
}

func TestParseNumstatZ(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    []string
		wantErr bool
	}{
		{"", nil, false},
		{"1\t0\tn.txt\x001\t1\tx.go\x00", []string{"n.txt", "x.go"}, false},
		{"-\t-\tbin\x00", []string{"bin"}, false},
		{"0\t0\t\x00old name\x00new name\x002\t1\tx\x00", []string{"old name", "new name", "x"}, false},
		{"1\t1\tsame\x001\t1\tsame\x00", []string{"same"}, false},
		{"1\t1\t\x00only-old\x00", nil, true},
		{"x\t1\tp\x00", nil, true},
		{"1\tp\x00", nil, true},
	}
	for _, tt := range tests {
		got, err := parseNumstatZ([]byte(tt.in))
		if (err != nil) != tt.wantErr || !slices.Equal(got, tt.want) {
			t.Errorf("parseNumstatZ(%q) = %q, %v; want %q, err %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func FuzzParseNumstatZ(f *testing.F) {
	f.Add([]byte("1\t0\tn.txt\x00"))
	f.Add([]byte("0\t0\t\x00old\x00new\x00"))
	f.Add([]byte("-\t-\tb\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		paths, err := parseNumstatZ(b)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, p := range paths {
			if p == "" || seen[p] || strings.ContainsRune(p, 0) {
				t.Fatalf("bad path list %q", paths)
			}
			seen[p] = true
		}
	})
}

func TestApplyFailures(t *testing.T) {
	t.Parallel()
	touched := []string{"a.go", "b: odd.go", "c.go", "d.go", "e.go"}
	stderr := "error: patch failed: a.go:12\nerror: a.go: patch does not apply\n" +
		"error: b: odd.go: does not match index\n" +
		"Applied patch to 'c.go' with conflicts.\nU c.go\n" +
		"Applied patch to 'd.go' cleanly.\n"
	if got, want := applyFailures(stderr, touched), []string{"a.go", "b: odd.go", "c.go"}; !slices.Equal(got, want) {
		t.Errorf("applyFailures = %q, want %q", got, want)
	}
	if got := conflictLines(stderr); !slices.Equal(got, []string{"c.go"}) {
		t.Errorf("conflictLines = %q", got)
	}
}

func FuzzApplyFailures(f *testing.F) {
	f.Add("error: patch failed: a.go:3\n", "a.go")
	f.Add("Applied patch to 'x' with conflicts.\nU x\n", "x")
	f.Add("error: a: b: does not exist in index\n", "a: b")
	f.Fuzz(func(t *testing.T, stderr, path string) {
		got := applyFailures(stderr, []string{path})
		if len(got) > 1 || (len(got) == 1 && got[0] != path) {
			t.Fatalf("applyFailures returned %q for the single path %q", got, path)
		}
		if len(got) == 1 && !strings.Contains(stderr, path) {
			t.Fatalf("path %q reported but not in stderr", path)
		}
		for _, p := range conflictLines(stderr) {
			if !strings.Contains(stderr, "'"+p+"'") {
				t.Fatalf("conflict path %q not in stderr", p)
			}
		}
	})
}
