package gitx

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/gittest"
)

// testIdentity is the commit identity tests use; gitx itself never sets one.
var testIdentity = []string{
	"GIT_AUTHOR_NAME=Gitx Test", "GIT_AUTHOR_EMAIL=gitx@example.test",
	"GIT_COMMITTER_NAME=Gitx Test", "GIT_COMMITTER_EMAIL=gitx@example.test",
	"GIT_AUTHOR_DATE=2026-01-02T03:04:05Z", "GIT_COMMITTER_DATE=2026-01-02T03:04:05Z",
}

// helperRoles are what the test binary does instead of running tests when
// a test starts it as a helper process with GITX_TEST_ROLE naming one.
var helperRoles = map[string]func() int{}

// TestMain isolates git from the host's global and system configuration.
func TestMain(m *testing.M) {
	if role, ok := helperRoles[os.Getenv("GITX_TEST_ROLE")]; ok {
		os.Exit(role())
	}
	os.Exit(gittest.Main(m))
}

func testCtx(t testing.TB) context.Context { return t.Context() }

// newRepo creates an empty repository on branch main.
func newRepo(t testing.TB) *Repo {
	t.Helper()
	dir := t.TempDir()
	runGit(t, dir, "init", "-q", "-b", "main")
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return &Repo{Dir: real, Env: testIdentity}
}

// runGit runs git in dir with the test identity and returns trimmed stdout.
func runGit(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := gitOut(dir, nil, args...)
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimRight(out, "\n")
}

func gitOut(dir string, stdin []byte, args ...string) (string, error) {
	// The tests' own git commands run no hooks either: a test that plants
	// hooks checks that gitx never runs them.
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "core.hooksPath=/dev/null"}, args...)...)
	cmd.Env = append(os.Environ(), testIdentity...)
	cmd.Env = append(cmd.Env, "LC_ALL=C", "GIT_EDITOR=true")
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%w: %s%s", err, stdout.String(), stderr.String())
	}
	return stdout.String(), nil
}

func writeFile(t testing.TB, r *Repo, p, content string) {
	t.Helper()
	writeFileMode(t, r, p, content, 0o644)
}

func writeFileMode(t testing.TB, r *Repo, p, content string, perm fs.FileMode) {
	t.Helper()
	full := filepath.Join(r.Dir, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(full, perm); err != nil {
		t.Fatal(err)
	}
}

func readFile(t testing.TB, r *Repo, p string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.Dir, filepath.FromSlash(p)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// commitAll stages everything and commits; returns the new sha.
func commitAll(t testing.TB, r *Repo, msg string) string {
	t.Helper()
	runGit(t, r.Dir, "add", "-A")
	runGit(t, r.Dir, "commit", "-q", "--allow-empty", "-m", msg)
	return runGit(t, r.Dir, "rev-parse", "HEAD")
}

// seedRepo creates a repository with files committed; returns it and the sha.
func seedRepo(t testing.TB, files map[string]string) (*Repo, string) {
	t.Helper()
	r := newRepo(t)
	for p, c := range files {
		writeFile(t, r, p, c)
	}
	return r, commitAll(t, r, "seed")
}

// lines returns "1\n2\n...n\n".
func lines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}

// repoState is everything a user could see change: HEAD, the index with all
// stages, status, and every work-tree file with its mode.
type repoState struct {
	head, index, status string
	files               map[string]string
}

func stateOf(t testing.TB, r *Repo) repoState {
	t.Helper()
	head, _ := gitOut(r.Dir, nil, "rev-parse", "-q", "--verify", "HEAD")
	s := repoState{
		head:   head,
		index:  runGit(t, r.Dir, "ls-files", "-s"),
		status: runGit(t, r.Dir, "status", "--porcelain=v1", "--untracked-files=all"),
		files:  map[string]string{},
	}
	err := filepath.WalkDir(r.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(r.Dir, p)
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			s.files[rel+"/"] = "dir"
			return nil
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		var data []byte
		if info.Mode()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			data = []byte(target)
		} else if data, err = os.ReadFile(p); err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		s.files[rel] = info.Mode().String() + " " + hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func assertSameState(t testing.TB, before, after repoState) {
	t.Helper()
	if before.head != after.head {
		t.Errorf("HEAD changed: %q -> %q", before.head, after.head)
	}
	if before.index != after.index {
		t.Errorf("index changed:\nbefore:\n%s\nafter:\n%s", before.index, after.index)
	}
	if before.status != after.status {
		t.Errorf("status changed:\nbefore:\n%s\nafter:\n%s", before.status, after.status)
	}
	var keys []string
	for k := range before.files {
		keys = append(keys, k)
	}
	for k := range after.files {
		if _, ok := before.files[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if before.files[k] != after.files[k] {
			t.Errorf("work tree %s changed: %q -> %q", k, before.files[k], after.files[k])
		}
	}
}
