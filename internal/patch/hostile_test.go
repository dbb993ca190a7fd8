package patch

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/hostile"
	"github.com/orchdev/orch/internal/safepath"
)

// The shared hostile corpus (internal/hostile) through the patch reader:
// every hostile patch is refused, every accepted one applies inside the
// work tree.

// TestHostilePatches: every hostile patch is refused by Parse with the
// reason expect.txt records.
func TestHostilePatches(t *testing.T) {
	for _, name := range hostile.Names(hostile.Patches()) {
		data := hostile.Patches()[name]
		_, err := Parse(bytes.NewReader(data))
		var de *Error
		if !errors.As(err, &de) || !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Parse = %v, want a *Error", name, err)
			continue
		}
		if !hostile.Matches(name, err.Error()) {
			t.Errorf("%s: %q\nwant one of %q", name, err, hostile.Expect(name))
		}
	}
}

// TestHostilePathsInPatches: every refused corpus path, as the name of a
// created, updated, renamed and deleted file, is refused and named.
func TestHostilePathsInPatches(t *testing.T) {
	for _, c := range hostile.PathCases() {
		q := hostile.GitQuote(c.Path)
		patches := map[string]string{
			"create": "diff --git " + hostile.GitQuote("a/"+c.Path) + " " + hostile.GitQuote("b/"+c.Path) + "\nnew file mode 100644\n--- /dev/null\n+++ " + hostile.GitQuote("b/"+c.Path) + "\n@@ -0,0 +1 @@\n+x\n",
			"update": "--- " + hostile.GitQuote("a/"+c.Path) + "\n+++ " + hostile.GitQuote("b/"+c.Path) + "\n@@ -1 +1 @@\n-x\n+y\n",
			"delete": "--- " + hostile.GitQuote("a/"+c.Path) + "\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n",
			"rename": "diff --git a/ok.go " + hostile.GitQuote("b/"+c.Path) + "\nsimilarity index 100%\nrename from ok.go\nrename to " + q + "\n",
		}
		for op, patch := range patches {
			d, err := Parse(strings.NewReader(patch))
			if c.Verdict == hostile.Allow {
				if err != nil || len(d.Files) != 1 {
					t.Errorf("%s %s: %v", op, c, err)
				}
				continue
			}
			if err == nil {
				t.Errorf("%s %s: accepted: %+v", op, c, d.Files)
				continue
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("%s %s: %v", op, c, err)
			}
			// Names that cannot be written in a header are refused as
			// malformed; every other is named.
			if !errors.Is(err, safepath.ErrUnsafe) && !strings.Contains(err.Error(), "header line longer") && !strings.Contains(err.Error(), "malformed") {
				t.Errorf("%s %s: %v is not a path refusal", op, c, err)
			}
		}
	}
}

// TestAcceptedPatchesApplyInside: the odd but valid patches parse, and
// the real git apply, in a repository beside a sentinel folder, touches
// exactly the files Parse reported and nothing outside the work tree.
func TestAcceptedPatchesApplyInside(t *testing.T) {
	for _, name := range hostile.Names(hostile.AcceptedPatches()) {
		data := hostile.AcceptedPatches()[name]
		t.Run(strings.TrimSuffix(filepath.Base(name), ".patch"), func(t *testing.T) {
			d, err := Parse(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			r := newGitRepo(t)
			r.write("README", "base\n")
			r.commit()
			parent := filepath.Dir(r.dir)
			if err := os.MkdirAll(filepath.Join(parent, "sentinel"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(parent, "sentinel", "keep"), []byte("keep\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			skip := filepath.Base(r.dir)
			before, err := hostile.Snapshot(parent, skip)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(parent, "p.patch"), data, 0o644); err != nil {
				t.Fatal(err)
			}
			before["p.patch"] = mustSnap(t, parent)["p.patch"]
			r.git("apply", "--index", "--whitespace=nowarn", filepath.Join(parent, "p.patch"))
			after, err := hostile.Snapshot(parent, skip)
			if err != nil {
				t.Fatal(err)
			}
			if ch := hostile.Changes(before, after); len(ch) > 0 {
				t.Errorf("git apply changed files outside the work tree:\n%s", strings.Join(ch, "\n"))
			}
			var want []string
			for _, f := range d.Files {
				want = append(want, f.NewPath)
			}
			slices.Sort(want)
			out := r.git("diff", "--cached", "--name-only", "-z", "--no-renames")
			got := strings.Split(strings.TrimSuffix(out, "\x00"), "\x00")
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("git apply changed %q; Parse reported %q", got, want)
			}
		})
	}
}

func mustSnap(t *testing.T, dir string) map[string]string {
	t.Helper()
	s, err := hostile.Snapshot(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
